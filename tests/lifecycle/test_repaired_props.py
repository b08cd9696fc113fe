"""Properties of what validation tolerates and what a pass clears, on generated nodes.

Covers: the validation workload tolerates the cordon only when every node of the group is cordoned,
every taint validation holds that no other owner holds on a node of the group, the configured gate
taints when every node carries them — and never any other taint; clearing sets False exactly the
recorded conditions that still say what was recorded, leaves every other condition as it was, and
clearing again changes nothing; a False condition's message never becomes a fault line of the next
unhealthy event.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from shared import nodes
from shared.health import conditions
from shared.health import event as hevent
from shared.lifecycle import providers, repaired, sessions, settings

TAINTS = st.sampled_from(
    [
        ("nvidia.com/gpu-error", "fatal", "NoSchedule"),
        ("example.com/maintenance", "rack-7", "NoSchedule"),
        ("nvsentinel.nvidia.com/validating", "", "NoSchedule"),
        ("dedicated", "infer", "NoExecute"),
    ]
)
OWNERS = st.sampled_from([None, sessions.OWNER, "fault-quarantine", "drift"])


@st.composite
def node(draw: Any) -> dict[str, Any]:
    taints = draw(st.lists(st.tuples(TAINTS, OWNERS), max_size=4, unique_by=lambda t: t[0]))
    owners = {f"{k}={v}:{e}": o for (k, v, e), o in taints if o is not None}
    anns = {nodes.TAINT_OWNERS: json.dumps(owners)} if owners else {}
    spec: dict[str, Any] = {"taints": [{"key": k, "value": v, "effect": e} for (k, v, e), _ in taints]}
    if draw(st.booleans()):
        spec["unschedulable"] = True
    return {"metadata": {"name": "n", "annotations": anns}, "spec": spec}


def _holds(n: dict[str, Any], taint: tuple[str, str, str], owner: str | None) -> bool:
    return nodes.has_taint(n, *taint) and nodes.taint_owners(n).get("{}={}:{}".format(*taint)) == owner


@given(st.lists(node(), min_size=1, max_size=3), st.lists(TAINTS, max_size=2, unique=True))
def test_only_the_cordon_and_the_taints_validation_holds_are_tolerated(
    group: list[dict[str, Any]], gate: list[Any]
) -> None:
    cfg = settings.Configuration(
        schedulingGate=settings.SchedulingGate(
            taints=[settings.GateTaint(key=k, value=v, effect=e) for k, v, e in gate]
        )
    )
    found = providers._gate_taints(group, cfg)
    cordon = [t for t in found if t[0] == providers.UNSCHEDULABLE]
    assert bool(cordon) == all(n["spec"].get("unschedulable") for n in group)
    for key, value, effect in (t for t in found if t[0] != providers.UNSCHEDULABLE):
        taint = (key, value or "", effect)
        gate_on_all = taint in gate and all(nodes.has_taint(n, *taint) for n in group)
        held = any(_holds(n, taint, sessions.OWNER) for n in group)
        foreign = any(nodes.has_taint(n, *taint) and not _holds(n, taint, sessions.OWNER) for n in group)
        assert gate_on_all or (held and not foreign), (taint, group)
    for taint in {t for n in group for t in repaired.tolerated(n)}:
        if not any(nodes.has_taint(n, *taint) and not _holds(n, taint, sessions.OWNER) for n in group):
            assert taint in [(k, v or "", e) for k, v, e in found]


CONDITION = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["SysLogsXIDError", "GpuDriverWatch", "GpuPcieWatch", "Ready"]),
        "status": st.sampled_from(["True", "False"]),
        "message": st.sampled_from(["ErrorCode:79 GPU:0 lost;", "ErrorCode:48 GPU:1 DBE;", "No Health Failures"]),
    }
)


@given(
    st.lists(CONDITION, max_size=4, unique_by=lambda c: c["type"]),
    st.dictionaries(
        st.sampled_from(["SysLogsXIDError", "GpuDriverWatch", "GpuPcieWatch"]),
        st.sampled_from(["ErrorCode:79 GPU:0 lost;", "ErrorCode:48 GPU:1 DBE;"]),
    ),
)
def test_clearing_sets_false_exactly_the_recorded_conditions_that_did_not_change(
    before: list[dict[str, Any]], recorded: dict[str, str]
) -> None:
    after = copy.deepcopy(before)
    cleared = conditions.clear(after, recorded, reason="ValidationPassed", message="vr-1 passed", stamp="t")
    for old, new in zip(before, after, strict=True):
        wanted = old["type"] in recorded and old["status"] == "True" and old["message"] == recorded[old["type"]]
        assert (old["type"] in cleared) == wanted
        if wanted:
            assert (new["status"], new["reason"], new["message"]) == ("False", "ValidationPassed", "vr-1 passed")
        else:
            assert new == old
    again = copy.deepcopy(after)
    assert conditions.clear(again, recorded, reason="ValidationPassed", message="vr-1 passed", stamp="u") == []
    assert again == after


@given(st.sampled_from(["ValidationRequest vr-1 passed after the repair; was: X", "No Health Failures"]))
def test_a_new_fault_after_a_cleared_condition_starts_a_fresh_list(message: str) -> None:
    current = [{"type": "SysLogsXIDError", "status": "False", "reason": "ValidationPassed", "message": message}]
    ev = hevent.parse(
        {
            "agent": "syslog-health-monitor",
            "componentClass": "GPU",
            "checkName": "SysLogsXIDError",
            "isFatal": True,
            "recommendedAction": "RESTART_BM",
            "errorCode": ["79"],
            "nodeName": "n",
            "message": "GPU has fallen off the bus.",
        }
    )
    assert conditions.merge(current, ev, "t")
    assert current[0]["status"] == "True" and current[0]["message"] == conditions.line(ev) + ";"
