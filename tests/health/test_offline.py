"""HealthEvent wire/CEL shapes, rule-set semantics and linting, the Xid monitor against the samples.

Covers: enum names on the wire and integers in CEL with every field present; input as one event,
an array or NDJSON, duplicates dropped; the default values' six rule sets and the seed's rule set
compile; match.all AND match.any; rules check findings with positions; Xid lines of
reference/samples/xid match EXPECTED.tsv one for one; catalogue → recommended action.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared import cel, errors
from shared.health import config, event, rulecheck, ruleset, settings, xid

SEED_VALUES = (Path(__file__).resolve().parents[2] / "shared" / "health" / "rules" / "seed-example.yaml").read_text()
XID79 = {
    "agent": "gpu-health-monitor",
    "componentClass": "GPU",
    "checkName": "GpuXidError",
    "isFatal": True,
    "recommendedAction": "RESTART_BM",
    "errorCode": ["79"],
    "nodeName": "node-1",
    "entitiesImpacted": [{"entityType": "GPU", "entityValue": "0"}],
}
NODE = {"metadata": {"name": "node-1", "labels": {}, "resourceVersion": "1"}, "spec": {}}


def test_recommended_action_is_a_name_on_the_wire_and_an_integer_in_cel() -> None:
    ev = event.parse(XID79)
    assert ev.wire()["recommendedAction"] == "RESTART_BM"
    activation = ev.activation()
    assert activation["recommendedAction"] == 24
    assert set(activation) == set(event.HealthEvent.model_fields)
    assert activation["message"] is None and activation["quarantineOverrides"] is None


def test_an_unknown_action_name_is_refused_with_the_field() -> None:
    with pytest.raises(errors.InvalidInput, match="recommendedAction"):
        event.parse({**XID79, "recommendedAction": "REBOOT_PLEASE"}, where="e.json")


_STORED = {
    "apiVersion": "nvsentinel.nvidia.com/v1alpha1",
    "kind": "HealthEvent",
    "metadata": {"name": "he-1"},
    "spec": XID79,
    "status": {"phase": "Quarantined"},
}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(XID79),
        json.dumps([XID79, XID79]),
        json.dumps(XID79) + "\n\n" + json.dumps(XID79) + "\n",
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [_STORED, _STORED]}),
        json.dumps(_STORED),
    ],
    ids=["one", "array", "ndjson", "kubectl-list", "kubectl-object"],
)
def test_input_may_be_one_event_an_array_or_ndjson_and_repeats_collapse(text: str) -> None:
    events = event.parse_text(text, source="in")
    assert len(event.unique(events)) == 1


def test_the_default_values_ship_upstreams_six_rule_sets_the_analyzers_and_monitor_mode() -> None:
    cfg = config.load(None)
    assert len(cfg.engine.rule_sets) == 7
    assert "Health events analyzer fatal error ruleset" in [r.spec.name for r in cfg.engine.rule_sets]
    assert cfg.dry_run is True


def test_the_seeds_rule_set_cordons_and_taints_a_fatal_gpu_event(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text(SEED_VALUES)
    cfg = config.load(path)
    decision = cfg.engine.decide(cel.to_cel(event.parse(XID79).activation()), NODE)
    assert decision.matched == ["GPU fatal error ruleset"]
    assert decision.cordon is True
    assert decision.taints == [ruleset.TaintSpec("nvidia.com/gpu-error", "fatal", "NoSchedule")]


@pytest.mark.parametrize(
    ("any_rule", "matched"),
    [("event.isFatal == false", False), ("true", True)],
    ids=["any-false-blocks", "any-true-allows"],
)
def test_match_all_and_match_any_must_both_hold(any_rule: str, matched: bool) -> None:
    spec = settings.RuleSet(
        name="r",
        match=settings.Match(
            all=[settings.Rule(kind="HealthEvent", expression="event.isFatal")],
            any=[settings.Rule(kind="HealthEvent", expression=any_rule)],
        ),
        cordon=settings.Cordon(shouldCordon=True),
    )
    engine = ruleset.Engine(ruleset.compile_rule_sets([spec]))
    assert bool(engine.decide(cel.to_cel(event.parse(XID79).activation()), NODE).matched) is matched


def test_rules_check_reports_every_problem_with_rule_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("""\
fault-quarantine:
  ruleSets:
    - name: "a"
      match:
        all:
          - kind: HealthEvent
            expression: "event.isFatall == true"
      tain: {key: x}
    - name: "a"
      match:
        any:
          - kind: Node
            expression: "node.metadata.label['x'] == 'y'"
""")
    lines = [p.line() for p in rulecheck.check(path)]
    assert lines == [
        f"{path}:8:7: unknown field 'tain' (known: cordon, enabled, label, match, name, priority, taint, version)",
        f"{path}:7:32: rule set 'a': match.all[0]: HealthEvent has no field 'isFatall' (did you mean 'isFatal'?)",
        f"{path}:9:13: rule set 'a': duplicate name (also ruleSets[0])",
        f"{path}:13:40: rule set 'a': match.any[0]: Node metadata has no field 'label' (did you mean 'labels'?)",
    ]


def test_the_default_values_pass_rules_check(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text(settings.default_text())
    assert rulecheck.check(path) == []


def test_xid_monitor_reads_every_xid_line_of_the_samples_as_expected(team_shared: Path) -> None:
    folder = team_shared / "reference/samples/xid"
    text = (folder / "kernel-log-lines.txt").read_text()
    with (folder / "EXPECTED.tsv").open() as handle:
        expected = [r for r in csv.DictReader(handle, delimiter="\t") if r["is_xid"] == "1"]
    events = xid.events_from_text(text, node="n", now=datetime(2026, 1, 1, tzinfo=UTC))
    got = [
        (e.errorCode[0], e.entitiesImpacted[0].entityValue, e.metadata.get("pid", ""), e.message[:70].rstrip())
        for e in events
    ]
    want = [(r["xid_code"], r["pci_bus_id"], r["pid"], r["message_excerpt"].rstrip()) for r in expected]
    assert got == want


@pytest.mark.parametrize(
    ("code", "action"),
    [(79, "RESTART_BM"), (48, "COMPONENT_RESET"), (13, "NONE"), (145, "CONTACT_SUPPORT"), (154, "CONTACT_SUPPORT")],
)
def test_the_xid_catalogue_maps_codes_to_upstreams_actions(code: int, action: str) -> None:
    assert xid.action_for(code)[0].name == action


def test_dmesg_and_uptime_stamps_become_event_times() -> None:
    text = (
        "[Fri Apr  5 21:29:39 2024] NVRM: Xid (PCI:0000:a1:00): 79, pid='<unknown>', name=<unknown>, gone.\n"
        "[   10.500000] NVRM: Xid (PCI:0000:a1:00): 79, gone again.\n"
    )
    boot = datetime(2024, 4, 5, 0, 0, tzinfo=UTC)
    first, second = xid.events_from_text(text, node="n", now=datetime(2026, 1, 1, tzinfo=UTC), boot_time=boot)
    assert first.generatedTimestamp == datetime(2024, 4, 5, 21, 29, 39, tzinfo=UTC)
    assert second.generatedTimestamp == datetime(2024, 4, 5, 0, 0, 10, 500000, tzinfo=UTC)
    assert first.isFatal and first.recommendedAction.name == "RESTART_BM"
