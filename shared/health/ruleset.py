"""Compiled fault-quarantine rule sets and the decision they make for one event on one node.

Semantics (a deliberate difference from upstream, research §3.3): a rule set matches when **every**
``match.all`` rule is true **and**, if ``match.any`` is not empty, **at least one** ``match.any``
rule is true. Upstream builds two independent evaluators and fires on all(...) OR any(...), which
makes a Node opt-out rule in ``all`` useless next to any ``any`` list; ANDing them is what a reader
of the YAML expects. A rule that fails to evaluate (missing key, non-boolean) counts as false, as
upstream does, and is reported in the decision.

Across matching rule sets: cordon if any says so; taints are deduplicated by (key, value) and the
effect comes from the highest priority, ties going to the earlier rule set (upstream leaves ties to
goroutine order); a label's value comes from the highest priority, ties to the later rule set, as
upstream. HealthEvent rules run before Node rules, so a Node is converted only when needed, and a
Node is converted once per resourceVersion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from shared import cel
from shared.health import values


@dataclass(frozen=True)
class CompiledRule:
    kind: str
    program: cel.Program


@dataclass(frozen=True)
class CompiledRuleSet:
    spec: values.RuleSet
    order: int
    all: tuple[CompiledRule, ...]
    any: tuple[CompiledRule, ...]

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class TaintSpec:
    key: str
    value: str
    effect: str


@dataclass
class Decision:
    """What the matching rule sets ask for; empty ``matched`` means nothing to do."""

    matched: list[str] = field(default_factory=list)
    cordon: bool = False
    taints: list[TaintSpec] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def acts(self) -> bool:
        return self.cordon or bool(self.taints) or bool(self.labels)


def compile_rule_sets(rule_sets: list[values.RuleSet], *, source: str = "values") -> list[CompiledRuleSet]:
    """Compile every enabled rule set's expressions; InvalidInput names the rule set and position."""
    compiled = []
    for index, spec in enumerate(rule_sets):
        if not spec.enabled:
            continue

        def build(rules: list[values.Rule], group: str, spec: values.RuleSet = spec,
                  index: int = index) -> tuple[CompiledRule, ...]:
            return tuple(CompiledRule(r.kind, cel.compile(
                r.expression, name=spec.name, where=f"{source}: fault-quarantine.ruleSets[{index}].match.{group}[{i}]"))
                for i, r in enumerate(rules))

        compiled.append(CompiledRuleSet(spec, index, build(spec.match.all, "all"), build(spec.match.any, "any")))
    return compiled


class NodeCache:
    """CEL values of Nodes, converted once per resourceVersion and only the fields rules read."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[str, Any]] = {}

    def get(self, node: dict[str, Any]) -> Any:
        meta = node.get("metadata") or {}
        name, version = str(meta.get("name", "")), str(meta.get("resourceVersion", ""))
        hit = self._cache.get(name)
        if hit is not None and hit[0] == version and version:
            return hit[1]
        status = node.get("status") or {}
        slim = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": meta.get("labels") or {},
                             "annotations": meta.get("annotations") or {}},
                "spec": node.get("spec") or {},
                "status": {k: status[k] for k in ("conditions", "capacity", "allocatable") if k in status}}
        value = cel.to_cel(slim)
        self._cache[name] = (version, value)
        return value


class Engine:
    """The compiled rule sets of one configuration."""

    def __init__(self, rule_sets: list[CompiledRuleSet]) -> None:
        self.rule_sets = rule_sets
        self.nodes = NodeCache()

    def _holds(self, rule: CompiledRule, event_value: Any, node: dict[str, Any] | None,
               problems: list[str]) -> bool:
        if rule.kind == "HealthEvent":
            activation = {"event": event_value}
        else:
            if node is None:
                problems.append(f"{rule.program.name}: node not found")
                return False
            activation = {"node": self.nodes.get(node)}
        try:
            return rule.program.evaluate_bool(activation)
        except cel.EvaluationError as exc:
            problems.append(f"{rule.program.name}: {exc}")
            return False

    def _matches(self, rs: CompiledRuleSet, event_value: Any, node: dict[str, Any] | None,
                 problems: list[str]) -> bool:
        if not rs.all and not rs.any:
            return False
        ordered = sorted(rs.all, key=lambda r: r.kind != "HealthEvent")
        if not all(self._holds(r, event_value, node, problems) for r in ordered):
            return False
        return not rs.any or any(self._holds(r, event_value, node, problems)
                                 for r in sorted(rs.any, key=lambda r: r.kind != "HealthEvent"))

    def decide(self, event_value: Any, node: dict[str, Any] | None) -> Decision:
        """Evaluate every rule set on one converted event (``cel.to_cel(event.activation())``)."""
        decision = Decision()
        winners: dict[tuple[str, str], tuple[int, int, str]] = {}
        label_winners: dict[str, tuple[int, int, str]] = {}
        for rs in self.rule_sets:
            if not self._matches(rs, event_value, node, decision.errors):
                continue
            decision.matched.append(rs.name)
            spec = rs.spec
            decision.cordon = decision.cordon or spec.cordon.shouldCordon
            if spec.taint is not None:
                key = (spec.taint.key, spec.taint.value)
                best = winners.get(key)
                if best is None or spec.priority > best[0]:
                    winners[key] = (spec.priority, rs.order, spec.taint.effect)
            if spec.label is not None:
                current = label_winners.get(spec.label.key)
                if current is None or spec.priority >= current[0]:
                    label_winners[spec.label.key] = (spec.priority, rs.order, spec.label.value)
        decision.taints = [TaintSpec(k, v, w[2]) for (k, v), w in winners.items()]
        decision.labels = {k: w[2] for k, w in label_winners.items()}
        return decision


def reason_value(names: list[str]) -> str:
    """Rule-set names as a label value: upstream's ``formatCordonOrUncordonReasonValue``."""
    text = re.sub(r"[^a-zA-Z0-9_.-]", "-", "-".join(names))[:63]
    return text.strip("-")
