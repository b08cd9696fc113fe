"""What a lifted gate leaves on the node, by who still holds its cordon (``repaired.returned``).

A person's cordon set while the node was gated used to keep NVSentinel's state label
(``remediation-succeeded``) and hand-over record for good, so the next healthy event waited for a
validation that had already passed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared import nodes
from shared.health import quarantine
from shared.lifecycle import repaired

PREFIX = "k8saas.nvidia.com/"
STAMP = "2026-11-29T22:20:00Z"


def _gated_node(*, cordoned: bool, owner: str | None) -> dict[str, Any]:
    labels = {
        quarantine.STATE_LABEL: quarantine.STATE_REMEDIATION_SUCCEEDED,
        f"{PREFIX}cordon-by": quarantine.OWNER,
        f"{PREFIX}cordon-reason": "Syslog-fatal-error-ruleset",
        f"{PREFIX}cordon-timestamp": "2026-11-29T22-10-00Z",
        "team": "ml",
    }
    record = {"at": STAMP, "events": ["e1"], "labelPrefix": PREFIX, "conditions": {}}
    annotations = {repaired.RECORD: json.dumps(record)}
    if owner is not None:
        annotations[nodes.CORDON_OWNER] = owner
    spec = {"unschedulable": True} if cordoned else {}
    return {"metadata": {"name": "node-002", "labels": labels, "annotations": annotations}, "spec": spec}


def test_a_schedulable_node_says_nvsentinel_uncordoned_it() -> None:
    node = _gated_node(cordoned=False, owner=None)
    assert repaired.returned(node, stamp=STAMP)
    labels = nodes.labels(node)
    assert quarantine.STATE_LABEL not in labels and f"{PREFIX}cordon-by" not in labels
    assert labels[f"{PREFIX}uncordon-by"] == quarantine.OWNER and labels["team"] == "ml"
    assert repaired.read(node) is None


def test_a_cordon_a_person_holds_stays_but_nvsentinels_state_and_record_go() -> None:
    node = _gated_node(cordoned=True, owner=None)
    assert repaired.returned(node, stamp=STAMP)
    labels = nodes.labels(node)
    assert nodes.is_cordoned(node)  # the person's cordon is theirs to lift
    assert quarantine.STATE_LABEL not in labels
    assert not [k for k in labels if k.startswith(PREFIX)]  # no cordon-* labels, and no uncordon-by
    assert repaired.read(node) is None and labels["team"] == "ml"
    assert not repaired.returned(node, stamp=STAMP)  # done once


@pytest.mark.parametrize("owner", ["validation", "drift"])
def test_a_cordon_another_component_holds_keeps_everything(owner: str) -> None:
    node = _gated_node(cordoned=True, owner=owner)
    before = json.dumps(node, sort_keys=True)
    assert not repaired.returned(node, stamp=STAMP)
    assert json.dumps(node, sort_keys=True) == before


def test_a_node_quarantined_again_under_a_persons_cordon_keeps_everything() -> None:
    node = _gated_node(cordoned=True, owner=None)
    nodes.node_annotations(node)[quarantine.ANN_CAUSES] = json.dumps({"k": {"event": "e2"}})
    before = json.dumps(node, sort_keys=True)
    assert not repaired.returned(node, stamp=STAMP)  # the new quarantine's labels and record stay
    assert json.dumps(node, sort_keys=True) == before
