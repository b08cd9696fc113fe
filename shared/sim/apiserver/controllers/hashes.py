"""The hashes the workload controllers put in names and labels.

They follow kube-controller-manager's encoding — FNV-1a (Deployments, DaemonSets) or FNV-1
(ControllerRevisions of StatefulSets) printed in decimal and mapped through
``rand.SafeEncodeString``'s alphabet (``kubernetes:pkg/controller/controller_utils.go``
``ComputeHash``, ``pkg/controller/history/controller_history.go`` ``HashControllerRevision``), so
names look like ``web-7d9c6b5f48``. What is hashed is the template's canonical JSON, not Go's
deep-printed struct, so the values differ from a real cluster's for the same template.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET, _FNV_PRIME = 0x811C9DC5, 0x01000193


def fnv32a(data: bytes) -> int:
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def fnv32(data: bytes) -> int:
    value = _FNV_OFFSET
    for byte in data:
        value = ((value * _FNV_PRIME) & 0xFFFFFFFF) ^ byte
    return value


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: each character mapped into an alphabet without vowels or look-alikes."""
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def template_hash(template: Mapping[str, Any], collision_count: int | None) -> str:
    """``controller.ComputeHash``: FNV-1a of the template, then the collision count (8 bytes LE)."""
    data = canonical(template)
    if collision_count is not None:
        data += int(collision_count).to_bytes(4, "little") + b"\0\0\0\0"
    return safe_encode(str(fnv32a(data)))


def go_json(value: Any) -> bytes:
    """``encoding/json`` output for a map: sorted keys, compact, ``<``, ``>``, ``&`` escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()


def template_patch(template: Mapping[str, Any]) -> dict[str, Any]:
    """What a ControllerRevision stores: the patch that replaces ``spec.template`` (``getPatch``)."""
    return {"spec": {"template": {**copy.deepcopy(dict(template)), "$patch": "replace"}}}


def revision_hash(data: Mapping[str, Any], probe: int | None) -> str:
    """``history.HashControllerRevision``: FNV-1 of the revision's raw data, then the probe in decimal."""
    raw = go_json(data)
    if probe is not None:
        raw += str(int(probe)).encode()
    return safe_encode(str(fnv32(raw)))
