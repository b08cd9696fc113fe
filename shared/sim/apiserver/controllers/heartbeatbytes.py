"""Heartbeat times found and advanced in a stored object's bytes, without decoding it.

A list of 10,000 nodes or Leases is served from the stored JSON bytes; the heartbeat times a read
shows (see :mod:`.heartbeats`) are spliced into those bytes at the offsets where the stored times
sit (:func:`lease_slot`, :func:`heartbeat_slots`), and each rendering is kept with the span of
virtual time it stays right for (:class:`Memo`), so a repeated list costs a comparison per object.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from functools import lru_cache

from shared.sim.apiserver import store
from shared.sim.apiserver.controllers import kit

_DECODER = json.JSONDecoder()
_LEASE_KEY = b'"renewTime":"'
_HEARTBEAT_KEY = '"lastHeartbeatTime":'

Slot = tuple[int, int, float]
"""The byte offsets of a timestamp's text in the stored bytes, and the time it holds."""


@lru_cache(maxsize=4096)
def parse(stamp: str) -> float | None:
    return kit.epoch(stamp)


def advanced(base: float, until: float, interval: float) -> float:
    """``base`` moved forward by whole ``interval`` steps, not past ``until``."""
    if until <= base:
        return base
    return base + math.floor((until - base) / interval) * interval


def _splice(raw: bytes, slots: list[tuple[int, int, str]]) -> bytes:
    parts, last = [], 0
    for start, end, text in slots:
        parts += [raw[last:start], text.encode()]
        last = end
    parts.append(raw[last:])
    return b"".join(parts)


def lease_slot(raw: bytes) -> Slot | None:
    start = raw.find(_LEASE_KEY)
    if start < 0:
        return None
    start += len(_LEASE_KEY)
    end = raw.find(b'"', start)
    value = parse(raw[start:end].decode()) if end > start else None
    return (start, end, value) if value is not None else None


def heartbeat_slots(raw: bytes, *, owned: Container[str]) -> list[Slot]:
    """Where the ``lastHeartbeatTime`` values of the conditions ``owned`` (by the kubelet) sit in a
    stored node; a condition already ``Unknown`` is left out (nothing beats for it)."""
    text = raw.decode()
    at = text.rfind('"conditions":[')
    if at < 0:
        return []
    begin = at + len('"conditions":')
    try:
        conditions, end = _DECODER.raw_decode(text, begin)
    except ValueError:
        return []
    ascii_only = len(text) == len(raw)
    slots: list[Slot] = []
    pos = begin
    for condition in conditions if isinstance(conditions, list) else []:
        stamp = condition.get("lastHeartbeatTime") if isinstance(condition, dict) else None
        if not isinstance(stamp, str):
            continue
        encoded = json.dumps(stamp, ensure_ascii=False)
        found = text.find(_HEARTBEAT_KEY + encoded, pos, end)
        if found < 0:
            return []
        start = found + len(_HEARTBEAT_KEY) + 1
        stop = start + len(encoded) - 2
        pos = stop
        value = parse(stamp)
        if condition.get("type") in owned and condition.get("status") != "Unknown" and value is not None:
            if not ascii_only:
                start, stop = len(text[:start].encode()), len(text[:stop].encode())
            slots.append((start, stop, value))
    return slots


@dataclass(frozen=True, slots=True)
class Memo:
    """One object's rendering, right for every moment in [lo, hi) of its stored version rv."""

    rv: int
    slots: Sequence[Slot | None]
    lo: float
    hi: float
    text: bytes


def render(
    entry: store.Entry, slots: Sequence[Slot | None], until: float, interval: float, show: Callable[[float], str]
) -> Memo:
    """``entry`` with each slot's time advanced to ``until``, and for how long that stays right."""
    lo, hi = -math.inf, math.inf
    changed = []
    for slot in slots:
        if slot is None:
            continue
        start, end, base = slot
        if until < base + interval:
            hi = min(hi, base + interval)
            continue
        moment = base + ((until - base) // interval) * interval
        lo, hi = max(lo, moment), min(hi, moment + interval)
        changed.append((start, end, show(moment)))
    return Memo(entry.rv, slots, lo, hi, _splice(entry.raw, changed) if changed else entry.raw)
