"""Node placement flags of ``aicr bundle`` and where they land in each component's values.

The registry declares, per component, the value paths that hold node selectors, tolerations,
taints and the node count (``nodeScheduling``, ``podScheduling``). A flag given on the command line
replaces the value at each declared path; a flag not given writes nothing, with one exception.

Upstream's two toleration flags default to a tolerate-everything toleration (``operator:
Exists``), so every bundle writes it at every registry toleration path. We keep upstream's default
for the accelerated paths: what runs there (device plugins, GPU operator daemonsets, the Skyhook
tuning) must reach every GPU node whatever other taints it carries, or a GPU node with a
provider's taint runs without, say, its EFA device plugin. We leave it out at the system paths,
because there it lets system components land on GPU nodes nobody meant them for.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from shared import errors, grammars
from shared.bundle import overrides
from shared.recipe import models

EFFECTS = grammars.TAINT_EFFECTS
DEFAULT_ACCELERATED_TOLERATIONS: tuple[dict[str, str], ...] = ({"operator": "Exists"},)
"""Upstream's ``--accelerated-node-toleration`` default, written when the flag is not given."""


class Scheduling(BaseModel):
    """Parsed placement flags; empty means "leave the values alone"."""

    model_config = ConfigDict(frozen=True)

    system_selector: dict[str, str] = {}
    system_tolerations: list[dict[str, str]] = []
    accelerated_selector: dict[str, str] = {}
    accelerated_tolerations: list[dict[str, str]] = []
    workload_selector: dict[str, str] = {}
    workload_gate: dict[str, str] | None = None
    nodes: int = 0


def parse_selector(items: list[str], *, flag: str) -> dict[str, str]:
    """``key=value`` items into a selector map."""
    selector: dict[str, str] = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise errors.InvalidInput(f"expected key=value, got {item!r}", where=flag)
        _check(grammars.label_key(key), flag)
        _check(grammars.label_value(value), flag)
        selector[key] = value
    return selector


def parse_taint(item: str, *, flag: str) -> dict[str, str]:
    """``key=value:Effect`` or ``key:Effect`` into ``{key, value?, effect}``."""
    body, colon, effect = item.rpartition(":")
    if not colon or effect not in EFFECTS:
        raise errors.InvalidInput(
            f"expected key=value:Effect or key:Effect with Effect one of {', '.join(EFFECTS)}, got {item!r}", where=flag
        )
    key, equals, value = body.partition("=")
    _check(grammars.taint_key(key), flag)
    if equals:
        _check(grammars.taint_value(value), flag)
    taint = {"key": key}
    if equals:
        taint["value"] = value
    taint["effect"] = effect
    return taint


def parse_toleration(item: str, *, flag: str) -> dict[str, str]:
    """A taint spelling into a toleration: with a value ``Equal``, without one ``Exists``."""
    taint = parse_taint(item, flag=flag)
    operator = "Equal" if "value" in taint else "Exists"
    return {
        "key": taint["key"],
        "operator": operator,
        **({"value": taint["value"]} if "value" in taint else {}),
        "effect": taint["effect"],
    }


def _check(problem: str | None, flag: str) -> None:
    if problem is not None:
        raise errors.InvalidInput(problem, where=flag)


def taint_text(taint: dict[str, str]) -> str:
    value = f"={taint['value']}" if "value" in taint else ""
    return f"{taint['key']}{value}:{taint['effect']}"


def apply(values: dict[str, Any], entry: models.RegistryComponent | None, flags: Scheduling, *, component: str) -> None:
    """Write each given flag at the component's declared paths (in place)."""
    if entry is None:
        return
    where = f"registry component {component} nodeScheduling"
    system, accelerated = entry.nodeScheduling.system, entry.nodeScheduling.accelerated
    writes: list[tuple[list[str], Any, bool]] = [
        (system.nodeSelectorPaths, flags.system_selector, bool(flags.system_selector)),
        (system.tolerationPaths, flags.system_tolerations, bool(flags.system_tolerations)),
        (accelerated.nodeSelectorPaths, flags.accelerated_selector, bool(flags.accelerated_selector)),
        (accelerated.tolerationPaths, flags.accelerated_tolerations or list(DEFAULT_ACCELERATED_TOLERATIONS), True),
        (entry.podScheduling.workload.workloadSelectorPaths, flags.workload_selector, bool(flags.workload_selector)),
        (entry.nodeScheduling.nodeCountPaths, flags.nodes, flags.nodes > 0),
    ]
    if flags.workload_gate is not None:
        writes.append((accelerated.taintStrPaths, taint_text(flags.workload_gate), True))
        writes.append((accelerated.taintPaths, [dict(flags.workload_gate)], True))
    for paths, value, given in writes:
        if not given:
            continue
        for path in paths:
            copied = (
                dict(value)
                if isinstance(value, dict)
                else [dict(v) for v in value]
                if isinstance(value, list)
                else value
            )
            overrides.set_path(values, tuple(path.split(".")), copied, where=f"{where} {path}")
