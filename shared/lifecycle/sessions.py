"""A node's validation bookkeeping (research/nvsentinel.md §7.3): pure functions over node dicts.

- annotation ``nvsentinel.nvidia.com/validation-session``: JSON ``[{name, tests, failed}]``, every
  pending, running or failed request that holds the node (a passed one is removed);
- annotation ``nvsentinel.nvidia.com/active-validation-request``: the one request running on it;
- label ``nvsentinel.nvidia.com/validation-state``, derived from the two on every write:
  absent (empty session), ``validating`` (a request is active), ``validation-pending`` (nothing
  active, some entry not failed), ``validation-failed`` (nothing active, every entry failed), so
  ``kubectl get nodes -l nvsentinel.nvidia.com/validation-state=validation-failed`` lists the
  nodes a person must look at.

The gate (cordon, taints) is applied and released here too, on the lifecycle's own account
(``shared.nodes`` ownership annotations), so the function that empties a session is the one that
lifts the gate, inside the same conflict-safe node write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from shared import nodes
from shared.lifecycle import settings

SESSION = "nvsentinel.nvidia.com/validation-session"
ACTIVE = "nvsentinel.nvidia.com/active-validation-request"
STATE_LABEL = "nvsentinel.nvidia.com/validation-state"
OWNER = "validation"
"""The lifecycle's name in the cordon and taint ownership annotations."""

VALIDATING, PENDING, FAILED = "validating", "validation-pending", "validation-failed"


@dataclass(frozen=True, order=True)
class Entry:
    name: str
    tests: tuple[str, ...]
    failed: bool = False


def read(node: nodes.Node) -> tuple[list[Entry], str | None]:
    """(session entries, active request) of the node; a malformed session reads as empty."""
    anns = (node.get("metadata") or {}).get("annotations") or {}
    try:
        raw = json.loads(anns.get(SESSION) or "[]")
    except ValueError:
        raw = []
    entries = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("name"):
            entries.append(
                Entry(
                    str(item["name"]), tuple(sorted(str(t) for t in item.get("tests") or [])), bool(item.get("failed"))
                )
            )
    return entries, anns.get(ACTIVE) or None


def state(entries: Sequence[Entry], active: str | None) -> str | None:
    """The validation-state label for a session (None: no label)."""
    if not entries and active is None:
        return None
    if active is not None:
        return VALIDATING
    return FAILED if all(e.failed for e in entries) else PENDING


def write(node: nodes.Node, entries: Sequence[Entry], active: str | None) -> bool:
    """Store the session, the active request and the derived label; True when anything changed."""
    ordered = sorted(set(entries))
    text = (
        json.dumps([{"name": e.name, "tests": list(e.tests), "failed": e.failed} for e in ordered]) if ordered else None
    )
    changed = nodes.set_map(nodes.node_annotations(node), {SESSION: text, ACTIVE: active})
    return nodes.set_map(nodes.labels(node), {STATE_LABEL: state(ordered, active)}) or changed


def join(entries: list[Entry], name: str, tests: Sequence[str]) -> list[Entry]:
    """The session with the request in it (once; a failed entry of the same request stays failed)."""
    if any(e.name == name for e in entries):
        return entries
    return [*entries, Entry(name, tuple(sorted(tests)))]


def passed(entries: list[Entry], name: str, tests: Sequence[str]) -> list[Entry]:
    """A pass removes the request and every failed entry that ran the same tests (superseded)."""
    same = tuple(sorted(tests))
    return [e for e in entries if e.name != name and not (e.failed and e.tests == same)]


def failed(entries: list[Entry], name: str, tests: Sequence[str]) -> list[Entry]:
    others = [e for e in entries if e.name != name]
    return [*others, Entry(name, tuple(sorted(tests)), True)]


def left(entries: list[Entry], name: str) -> list[Entry]:
    return [e for e in entries if e.name != name]


def apply_gate(node: nodes.Node, gate: settings.SchedulingGate) -> bool:
    """Cordon and taint the node on the lifecycle's account (a cordon from ``takeOverFrom`` is taken over,
    anyone else's is left alone); True when anything changed."""
    changed = False
    if gate.cordon.enabled:
        changed = nodes.claim_cordon(node, OWNER, take_from=gate.cordon.takeOverFrom) in ("cordoned", "taken")
    for t in gate.taints:
        changed = nodes.claim_taint(node, t.key, t.value, t.effect, OWNER) or changed
    return changed


def release_gate(node: nodes.Node, gate: settings.SchedulingGate) -> bool:
    """Lift what the lifecycle holds: its cordon when ``cordon.remove``, its taints but those with
    ``remove: false``; never anything another component or a person set."""
    changed = False
    if gate.cordon.remove:
        changed = nodes.release_cordon(node, OWNER)
    keep = [(t.key, t.value, t.effect) for t in gate.taints if not t.remove]
    return nodes.release_taints(node, OWNER, keep=keep) or changed
