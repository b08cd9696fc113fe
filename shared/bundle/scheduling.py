"""Node placement flags of ``aicr bundle`` and where they land in each component's values.

The registry declares, per component, the value paths that hold node selectors, tolerations,
taints and the node count (``nodeScheduling``, ``podScheduling``). A flag given on the command line
replaces the value at each declared path; a flag not given writes nothing. Upstream injects a
tolerate-everything toleration (``operator: Exists``) at every toleration path of every bundle by
default; we do not, because that lets system components land on GPU nodes nobody meant them for.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from shared import errors, grammars
from shared.bundle import overrides
from shared.recipe import models

EFFECTS = grammars.TAINT_EFFECTS


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
        (accelerated.tolerationPaths, flags.accelerated_tolerations, bool(flags.accelerated_tolerations)),
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
