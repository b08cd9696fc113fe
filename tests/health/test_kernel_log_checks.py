"""The syslog monitor's other checks: NVSwitch SXid lines and GPUs lost without an Xid line.

Covers: golden, against reference/samples/xid: the three-line "fallen off the bus" message
(lines 41-43) is one event with the bus and PCI device id, the RmInitAdapter retries (29-34) are
one event per bus, the driver's echo after an Xid 79 (line 25) is none, while the same line alone
is one; a module load (a new boot) reports a failed init again; a start line not followed by the
fallen-off line in time is nothing; a journal record holding the whole message is one event.
SXid: fields, severity from the line, the Fabric Manager's harmless list, follow-up lines ignored.
Property tests: no line crashes either parser or the scanner; generated SXid lines and fallen-off
messages round-trip through the parsers. The default rule sets quarantine on a fatal SXid and a lost
GPU, not on a non-fatal or harmless SXid.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.health import event as hevent
from shared.health import gpufallen, kernlog, sxid, xid
from shared.health.monitors import journal

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def lost(events: list[hevent.HealthEvent]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    return [
        (e.errorCode[0], e.recommendedAction.name, [(x.entityType, x.entityValue) for x in e.entitiesImpacted])
        for e in events
        if e.checkName == gpufallen.CHECK
    ]


def sample(team_shared: Path) -> list[str]:
    return (team_shared / "reference/samples/xid/kernel-log-lines.txt").read_text().splitlines()


def test_the_samples_lost_gpus_without_an_xid_are_found_once_each(team_shared: Path) -> None:
    lines = sample(team_shared)
    events = kernlog.events(lines, node="n", now=NOW)
    assert lost(events) == [
        ("RM_INIT_ADAPTER_FAILED", "RESTART_BM", [("PCI", "0000:0a:00")]),
        ("GPU_FALLEN_OFF_BUS", "RESTART_BM", [("PCI", "0000:b3:00"), ("PCI_ID", "10de:26b5")]),
    ]
    fallen = next(e for e in events if e.errorCode == [gpufallen.FALLEN])
    assert fallen.isFatal and fallen.metadata["JOURNAL_MESSAGE"].count("\n") == 2  # lines 41-43 joined
    assert [e.errorCode for e in events if e.checkName == xid.CHECK] == [
        [str(c)] for c in [14, 31, 31, 13, 13, 13, 13, 32, 43, 43, 31, 94, 79, 48, 64, 63, 13, 13, 13, 109]
    ] + [[str(c)] for c in [79, 31, 31, 31, 31, 120, 120, 154, 62, 154]]


def test_the_drivers_line_after_an_xid79_is_its_echo_but_alone_it_is_an_event(team_shared: Path) -> None:
    lines = sample(team_shared)
    assert lost(kernlog.events(lines[22:25], node="n", now=NOW)) == []  # GPU at, Xid 79, its echo
    [alone] = lost(kernlog.events([lines[24]], node="n", now=NOW))
    assert alone[:2] == ("GPU_FALLEN_OFF_BUS", "RESTART_BM") and alone[2] == [("PCI", "0000:a1:00")]


def test_a_failed_init_is_reported_again_after_the_module_loads_again(team_shared: Path) -> None:
    lines = sample(team_shared)
    retries = lines[28:31]
    again = [*retries, "[  2.0] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01", *retries]
    assert len(lost(kernlog.events(again, node="n", now=NOW))) == 2


def test_a_start_line_without_the_fallen_off_line_in_time_is_nothing() -> None:
    lines = ["NVRM: The NVIDIA GPU 0000:b3:00.0", "a", "b", "c", "d", "NVRM: fallen off the bus and is not responding"]
    assert lost(kernlog.events([*lines[:-1], lines[-1] + " to commands."], node="n", now=NOW)) == []


def test_a_journal_record_with_the_whole_message_is_one_event() -> None:
    message = (
        "NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "NVRM: fallen off the bus and is not responding to commands."
    )
    data = json.dumps({"MESSAGE": message, "_TRANSPORT": "kernel", "__REALTIME_TIMESTAMP": "1700000000000000"})
    events = journal.events(journal.parse(data.encode(), "journal-json", source="d"), node="n", now=NOW)
    assert lost(events) == [("GPU_FALLEN_OFF_BUS", "RESTART_BM", [("PCI", "0000:b3:00"), ("PCI_ID", "10de:26b5")])]
    assert events[0].generatedTimestamp == datetime.fromtimestamp(1_700_000_000, UTC)


SXID_LINES = [
    "[Tue Mar  4 10:11:12 2025] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 43 "
    "egress non-posted PRIV error (First)",
    "[Tue Mar  4 10:11:12 2025] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Data {0x00000001, 0x0}",
    "[Tue Mar  4 10:11:13 2025] nvidia-nvswitch0: SXid (PCI:0000:c2:00.0): 20034, Fatal, Link 28 LTSSM Fault Up",
    "[Tue Mar  4 10:11:14 2025] nvidia-nvswitch1: SXid (PCI:0000:c3:00.0): 11012, Fatal, Link 2 single-bit ECC error",
]


def test_sxid_lines_give_switch_link_code_and_the_lines_severity() -> None:
    events = kernlog.events(SXID_LINES, node="n", now=NOW)
    summary = [
        (e.errorCode, e.isFatal, e.recommendedAction.name, [(x.entityType, x.entityValue) for x in e.entitiesImpacted])
        for e in events
    ]
    assert summary == [
        (["12028"], False, "NONE", [("NVSWITCH", "3"), ("PCI", "0000:86:00.0"), ("NVLINK", "43")]),
        (["20034"], True, "CONTACT_SUPPORT", [("NVSWITCH", "0"), ("PCI", "0000:c2:00.0"), ("NVLINK", "28")]),
        (["11012"], False, "NONE", [("NVSWITCH", "1"), ("PCI", "0000:c3:00.0"), ("NVLINK", "2")]),  # harmless
    ]
    assert {e.checkName for e in events} == {sxid.CHECK}
    assert events[1].message == "LTSSM Fault Up" and events[1].metadata["severity"] == "Fatal"
    assert events[1].generatedTimestamp == datetime(2025, 3, 4, 10, 11, 13, tzinfo=UTC)


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(st.text(max_size=120), max_size=8))
def test_no_line_crashes_the_parsers_or_the_scanner(lines: list[str]) -> None:
    for line in lines:
        sxid.parse(line)
    events = kernlog.events(lines, node="n", now=NOW)
    assert {e.checkName for e in events} <= {xid.CHECK, sxid.CHECK, gpufallen.CHECK}


def _noise(prefix: str) -> str:
    return prefix.replace("NVRM", "").replace("SXid", "").replace("Xid", "").replace("nvswitch", "")


hexes = st.text(alphabet="0123456789abcdef", min_size=1, max_size=1)
buses = st.builds(lambda a, b, c: f"0000:{a}{b}:{c}0.0", hexes, hexes, hexes)
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ()=,0123456789", max_size=40).map(str.strip)


@settings(max_examples=300, deadline=None)
@given(
    switch=st.integers(0, 63),
    pci=buses,
    code=st.integers(10000, 29999),
    fatal=st.booleans(),
    link=st.none() | st.integers(0, 63),
    message=words,
    prefix=st.sampled_from(["", "[  12.5] ", "[Tue Mar  4 10:11:12 2025] ", "Mar  4 10:11:12 host kernel: "]),
)
def test_generated_sxid_lines_round_trip(
    switch: int, pci: str, code: int, fatal: bool, link: int | None, message: str, prefix: str
) -> None:
    found = sxid.SXidLine(switch, pci, code, fatal, link, message)
    assert sxid.parse(prefix + sxid.render(found)) == found


@settings(max_examples=200, deadline=None)
@given(
    pci=buses,
    device=st.text(alphabet="0123456789abcdef", min_size=4, max_size=4),
    indent=st.sampled_from(["", "               ", "[ 1843.308145] "]),
    before=st.lists(st.text(alphabet="abc xyz:[]0123", max_size=30).map(_noise), max_size=3),
)
def test_generated_fallen_off_messages_round_trip(pci: str, device: str, indent: str, before: list[str]) -> None:
    lines = [
        *before,
        f"{indent}NVRM: The NVIDIA GPU {pci}",
        f"{indent}NVRM: (PCI ID: 10de:{device}) installed in this system has",
        f"{indent}NVRM: fallen off the bus and is not responding to commands.",
    ]
    assert lost(kernlog.events(lines, node="n", now=NOW)) == [
        ("GPU_FALLEN_OFF_BUS", "RESTART_BM", [("PCI", gpufallen.bus(pci)), ("PCI_ID", f"10de:{device}")])
    ]


def test_the_default_rule_sets_quarantine_on_a_fatal_sxid_and_a_lost_gpu_not_on_a_non_fatal_sxid() -> None:
    from shared.health import config, replay

    lines = [
        *SXID_LINES,
        "[Tue Mar  4 10:12:00 2025] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
    ]
    events = [
        e.model_copy(update={"nodeName": f"node-{i}"}) for i, e in enumerate(kernlog.events(lines, node="n", now=NOW))
    ]
    outcomes = replay.run(config.load(None), events).outcomes
    assert [(o["checkName"], o["phase"], o["ruleSets"]) for o in outcomes] == [
        (sxid.CHECK, "NotMatched", []),
        (sxid.CHECK, "Quarantined", ["Syslog fatal error ruleset"]),
        (sxid.CHECK, "NotMatched", []),
        (gpufallen.CHECK, "Quarantined", ["Syslog fatal error ruleset"]),
    ]
