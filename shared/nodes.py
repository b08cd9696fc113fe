"""Node actions — cordon, taint, label, annotate — idempotent, owned and conflict-safe.

Every change is a read-modify-write of the whole Node with its resourceVersion (PUT): if anyone
changed the node in between, the API answers 409 and the change is recomputed on the fresh object,
so nothing another controller or a person wrote is ever clobbered. A mutation that finds the node
already as wanted writes nothing (idempotent; replays and restarts are free). Ownership is the
caller's record (nvsentinel keeps it in annotations, ``shared.health.quarantine``): these helpers
report whether a cordon or taint was already there, so the owner can remember not to remove it.
NVCRE never calls this module; only nvsentinel changes node state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from shared.kube import rest, retry
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

Node = dict[str, Any]
Mutation = Callable[[Node], bool]
"""Changes the node in place; returns False when nothing needed changing (no write)."""

CONFLICT_POLICY = retry.RetryPolicy(attempts=12, base_delay=0.02, max_delay=1.0)


def path(name: str) -> str:
    return rest.core_path("nodes", name=name)


def get(api: KubeApi, name: str) -> Node:
    return rest.get(api, path(name), what=f"node {name}")


def list_nodes(api: KubeApi, *, label_selector: str | None = None) -> list[Node]:
    return rest.list_items(api, rest.core_path("nodes"), label_selector=label_selector)


def update(api: KubeApi, name: str, mutate: Mutation, *, status: bool = False) -> Node:
    """Apply ``mutate`` to a fresh copy of the node until the write wins; returns the node as written.

    Raises NotFound for a missing node; a 409 re-reads and re-applies (up to CONFLICT_POLICY).
    """
    suffix = "/status" if status else ""

    def attempt() -> Node:
        node = get(api, name)
        if not mutate(node):
            return node
        return rest.replace(api, path(name) + suffix, node, what=f"node {name}{suffix}")

    return retry.call(attempt, policy=CONFLICT_POLICY, what=f"node {name}")


def labels(node: Node) -> dict[str, str]:
    meta = node.setdefault("metadata", {})
    if meta.get("labels") is None:  # an empty dict is the node's own, so changes to it are kept
        meta["labels"] = {}
    result: dict[str, str] = meta["labels"]
    return result


def node_annotations(node: Node) -> dict[str, str]:
    meta = node.setdefault("metadata", {})
    if meta.get("annotations") is None:
        meta["annotations"] = {}
    result: dict[str, str] = meta["annotations"]
    return result


def taints(node: Node) -> list[dict[str, Any]]:
    spec = node.setdefault("spec", {})
    if spec.get("taints") is None:
        spec["taints"] = []
    result: list[dict[str, Any]] = spec["taints"]
    return result


def is_cordoned(node: Node) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def cordon(node: Node) -> bool:
    """Mark unschedulable; True when it already was (someone else's cordon)."""
    if is_cordoned(node):
        return True
    node.setdefault("spec", {})["unschedulable"] = True
    return False


def uncordon(node: Node) -> bool:
    """Schedulable again; True when something changed."""
    spec = node.setdefault("spec", {})
    if not spec.get("unschedulable"):
        return False
    spec.pop("unschedulable", None)
    return True


def has_taint(node: Node, key: str, value: str, effect: str) -> bool:
    return any(
        t.get("key") == key and (t.get("value") or "") == value and t.get("effect") == effect for t in taints(node)
    )


def add_taint(node: Node, key: str, value: str, effect: str, *, added: str | None = None) -> bool:
    """Add the taint; True when an identical one was already there (pre-existing)."""
    if has_taint(node, key, value, effect):
        return True
    taint: dict[str, Any] = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    if added and effect == "NoExecute":
        taint["timeAdded"] = added
    taints(node).append(taint)
    return False


def remove_taint(node: Node, key: str, value: str, effect: str) -> bool:
    """Remove exactly that taint (key, value and effect); True when it was there."""
    current = taints(node)
    kept = [
        t
        for t in current
        if not (t.get("key") == key and (t.get("value") or "") == value and t.get("effect") == effect)
    ]
    node["spec"]["taints"] = kept
    return len(kept) != len(current)


def set_map(target: dict[str, str], changes: Mapping[str, str | None]) -> bool:
    """Set (value) or delete (None) keys; True when anything changed."""
    changed = False
    for key, value in changes.items():
        if value is None:
            if key in target:
                del target[key]
                changed = True
        elif target.get(key) != value:
            target[key] = value
            changed = True
    return changed


def opted_out(node: Node, pairs: Iterable[tuple[str, str]]) -> bool:
    """True when the node carries any of the opt-out label=value pairs."""
    present = (node.get("metadata") or {}).get("labels") or {}
    return any(present.get(k) == v for k, v in pairs)


# ------------------------------------------------------------ who owns a cordon or a taint
CORDON_OWNER = "nvsentinel.nvidia.com/cordon-owner"
"""The component that cordoned the node (fault-quarantine, validation, drift, ...); absent: a person."""
TAINT_OWNERS = "nvsentinel.nvidia.com/taint-owners"
"""JSON map ``key=value:effect`` → owner, for taints a component added."""


def cordon_owner(node: Node) -> str | None:
    return ((node.get("metadata") or {}).get("annotations") or {}).get(CORDON_OWNER)


def claim_cordon(node: Node, owner: str, *, take_from: Iterable[str] = ()) -> str:
    """Hold the node's cordon for ``owner``: ``cordoned`` (we cordoned it), ``taken`` (from an owner in
    ``take_from``), ``ours`` (already held) or ``foreign`` (someone else's cordon, left alone)."""
    current = cordon_owner(node)
    if is_cordoned(node):
        if current == owner:
            return "ours"
        if current is not None and current in set(take_from):
            node_annotations(node)[CORDON_OWNER] = owner
            return "taken"
        return "foreign"
    cordon(node)
    node_annotations(node)[CORDON_OWNER] = owner
    return "cordoned"


def release_cordon(node: Node, owner: str) -> bool:
    """Uncordon only when ``owner`` holds the cordon; True when anything changed."""
    if cordon_owner(node) != owner:
        return False
    del node_annotations(node)[CORDON_OWNER]
    uncordon(node)
    return True


def _taint_key(key: str, value: str, effect: str) -> str:
    return f"{key}={value}:{effect}"


def taint_owners(node: Node) -> dict[str, str]:
    import json

    text = ((node.get("metadata") or {}).get("annotations") or {}).get(TAINT_OWNERS)
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _write_taint_owners(node: Node, owners: dict[str, str]) -> None:
    import json

    set_map(node_annotations(node), {TAINT_OWNERS: json.dumps(owners, sort_keys=True) if owners else None})


def claim_taint(node: Node, key: str, value: str, effect: str, owner: str) -> bool:
    """Add the taint for ``owner`` unless it is there already (someone else's: left alone); True when added."""
    if add_taint(node, key, value, effect):
        return False
    owners = taint_owners(node)
    owners[_taint_key(key, value, effect)] = owner
    _write_taint_owners(node, owners)
    return True


def give_taint(node: Node, key: str, value: str, effect: str, owner: str) -> None:
    """Record ``owner`` as the owner of a taint already on the node (an ownership hand-over)."""
    owners = taint_owners(node)
    owners[_taint_key(key, value, effect)] = owner
    _write_taint_owners(node, owners)


def release_taints(node: Node, owner: str, *, keep: Iterable[tuple[str, str, str]] = ()) -> bool:
    """Remove every taint ``owner`` holds except those in ``keep``; True when anything changed."""
    owners = taint_owners(node)
    kept = {_taint_key(*k) for k in keep}
    changed = False
    for text, holder in list(owners.items()):
        if holder != owner or text in kept:
            continue
        key, _, rest = text.partition("=")
        value, _, effect = rest.rpartition(":")
        remove_taint(node, key, value, effect)
        del owners[text]
        changed = True
    if changed:
        _write_taint_owners(node, owners)
    return changed
