"""``nvsentinel events list`` filters, against the simulated cluster, and their parsers.

Covers: a published HealthEvent carries node, check, agent and fatal labels, and the label selector
a filter builds selects exactly the matching objects on the server; ``--node``, ``--check``,
``--agent``, ``--fatal/--not-fatal``, ``--phase`` (``Pending`` = not processed), ``--since`` (cluster
time) and ``--after`` each select what they say and combine with AND; bad values (a duration, a
timestamp without zone, an unknown phase, ``--since`` with ``--after``) exit 2 with one line
naming the flag. Properties: any aware time printed in RFC 3339 parses back to the same instant
through ``--after``; any text is either a time or an InvalidInput, never a crash; any name becomes
a label value the API server accepts (kept as it is when it already is one); any list of phases,
in any case, parses to those phases.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import clock, errors
from shared.health import controller, eventfilter, resource
from shared.health import event as hevent
from tests.health.test_drain_remediation_sim import make

OFF = "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n"


def ev(node: str, check: str, agent: str, *, fatal: bool, at: datetime) -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": agent,
            "componentClass": "GPU",
            "checkName": check,
            "isFatal": fatal,
            "isHealthy": not fatal,
            "recommendedAction": "RESTART_BM" if fatal else "NONE",
            "errorCode": ["79"] if fatal else [],
            "nodeName": node,
            "generatedTimestamp": hevent.format_time(at),
        }
    )


@pytest.fixture()
def listed(gpu_sim: Any, api_client: Any, sim_kubeconfig: Path, tmp_path: Path, run_cli: Any) -> Iterator[Any]:
    """Four events over two nodes, two checks, two agents, fatal and not, two hours apart; the first
    three processed, the last one still pending. Yields a function: flags → listed (node, check)."""
    names = gpu_sim.add_gpu_nodes(2)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    now = clock.for_api_client(api_client, max_age=0).now()
    first = [
        ev(names[0], "GpuXidError", "gpu-health-monitor", fatal=True, at=now - timedelta(hours=3)),
        ev(names[0], "SysLogsXIDError", "syslog-health-monitor", fatal=False, at=now - timedelta(hours=2)),
        ev(names[1], "GpuXidError", "gpu-health-monitor", fatal=False, at=now - timedelta(minutes=30)),
    ]
    resource.publish(api_client, first, now=clock.WALL.now)
    make(api_client, tmp_path, OFF).reconcile_once()
    late = ev(names[1], "SysLogsXIDError", "syslog-health-monitor", fatal=True, at=now - timedelta(minutes=10))
    resource.publish(api_client, [late], now=clock.WALL.now)
    k = ["--kubeconfig", str(sim_kubeconfig)]

    def run(*flags: str) -> list[tuple[str, str]]:
        result = run_cli("nvsentinel", "events", "list", "-o", "json", *flags, *k)
        assert result.code == 0, result.stderr
        return [(e["node"], e["checkName"]) for e in json.loads(result.stdout)]

    run.names = names  # type: ignore[attr-defined]
    run.now = now  # type: ignore[attr-defined]
    run.api = api_client  # type: ignore[attr-defined]
    yield run


def test_published_events_carry_labels_the_server_selects_by(listed: Any) -> None:
    api, names = listed.api, listed.names
    [item] = [
        i for i in resource.list_events(api, selector=eventfilter.Filter(check="GpuXidError", fatal=True).selector())
    ]
    assert (item.event.nodeName, item.event.checkName, item.event.isFatal) == (names[0], "GpuXidError", True)
    chosen = eventfilter.Filter(agent="syslog-health-monitor", node=names[1]).selector()
    assert [s.event.checkName for s in resource.list_events(api, selector=chosen)] == ["SysLogsXIDError"]


def test_each_filter_selects_what_it_says(listed: Any) -> None:
    n0, n1 = listed.names
    assert listed() == [(n0, "GpuXidError"), (n0, "SysLogsXIDError"), (n1, "GpuXidError"), (n1, "SysLogsXIDError")]
    assert listed("--node", n1) == [(n1, "GpuXidError"), (n1, "SysLogsXIDError")]
    assert listed("--check", "SysLogsXIDError") == [(n0, "SysLogsXIDError"), (n1, "SysLogsXIDError")]
    assert listed("--agent", "gpu-health-monitor") == [(n0, "GpuXidError"), (n1, "GpuXidError")]
    assert listed("--fatal") == [(n0, "GpuXidError"), (n1, "SysLogsXIDError")]
    assert listed("--not-fatal") == [(n0, "SysLogsXIDError"), (n1, "GpuXidError")]
    assert listed("--phase", "Pending") == [(n1, "SysLogsXIDError")]
    assert listed("--phase", "quarantined,Pending") == [(n0, "GpuXidError"), (n1, "SysLogsXIDError")]
    assert listed("--since", "1h") == [(n1, "GpuXidError"), (n1, "SysLogsXIDError")]
    after = hevent.format_time(listed.now - timedelta(hours=2, seconds=1))
    assert listed("--after", after) == [(n0, "SysLogsXIDError"), (n1, "GpuXidError"), (n1, "SysLogsXIDError")]


def test_filters_combine(listed: Any) -> None:
    n0, n1 = listed.names
    assert listed("--check", "GpuXidError", "--since", "1h") == [(n1, "GpuXidError")]
    assert listed("--node", n0, "--fatal", "--phase", "Quarantined") == [(n0, "GpuXidError")]
    assert listed("--agent", "syslog-health-monitor", "--not-fatal", "--since", "1h") == []


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (("--since", "soon"), "error: --since: invalid duration 'soon' (use e.g. 30s, 5m, 1h30m, 7d)"),
        (("--after", "2026-01-01T00:00:00"), "error: --after: '2026-01-01T00:00:00' needs a time zone"),
        (("--after", "yesterdayZ"), "error: --after: 'yesterdayZ' is not an RFC 3339 time"),
        (("--phase", "Done"), "error: --phase: unknown phase 'Done' (known: Pending, Quarantined"),
        (("--since", "1h", "--after", "2026-01-01T00:00:00Z"), "error: --since and --after cannot be combined"),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_2(run_cli: Any, tmp_path: Path, flags: tuple[str, ...], line: str) -> None:
    result = run_cli("nvsentinel", "events", "list", *flags, "--kubeconfig", str(tmp_path / "none"))
    assert result.code == 2
    assert result.stderr.startswith(line) and result.stderr.count("\n") == 1
    assert result.stdout == ""


@given(st.datetimes(timezones=st.just(UTC), min_value=datetime(1971, 1, 1), max_value=datetime(9998, 1, 1)))
def test_any_rfc3339_time_parses_back_to_the_same_instant(moment: datetime) -> None:
    assert eventfilter.parse_after(hevent.format_time(moment)) == moment
    offset = moment.astimezone(datetime.fromisoformat("2026-01-01T00:00:00+05:30").tzinfo)
    assert eventfilter.parse_after(offset.isoformat()) == moment


@given(st.text(max_size=40))
def test_any_text_is_a_time_or_invalid_input(text: str) -> None:
    try:
        moment = eventfilter.parse_after(text)
    except errors.InvalidInput as exc:
        assert exc.line().startswith("error: --after: ")
    else:
        assert moment.tzinfo is not None


@given(st.text(max_size=100))
def test_any_name_becomes_a_label_value_the_api_server_accepts(text: str) -> None:
    from shared.sim.apiserver import selectors

    value = resource.label_value(text)
    assert selectors.valid_label_value(value)
    if text and len(text) <= 63 and selectors.valid_label_value(text):
        assert value == text  # a name that is already a label value is kept as it is


@given(st.lists(st.sampled_from(eventfilter.PHASES), min_size=1, max_size=5), st.booleans())
def test_any_list_of_phases_in_any_case_parses_to_those_phases(chosen: list[str], upper: bool) -> None:
    text = ",".join(p.upper() if upper else p.lower() for p in chosen)
    assert eventfilter.parse_phases(text) == frozenset(chosen)
