"""Compiled fault-quarantine rule sets and the decision they make for one event on one node.

Semantics (a deliberate difference from upstream, research §3.3): a rule set matches when **every**
``match.all`` rule is true **and**, if ``match.any`` is not empty, **at least one** ``match.any``
rule is true. Upstream builds two independent evaluators and fires on all(...) OR any(...), which
makes a Node opt-out rule in ``all`` useless next to any ``any`` list; ANDing them is what a reader
of the YAML expects. A rule that fails to evaluate (missing key, non-boolean) counts as false, as
upstream does, is reported in the decision, and is logged once per rule (``Engine``).

Across matching rule sets: cordon if any says so; taints are deduplicated by (key, value) and the
effect comes from the highest priority, ties going to the earlier rule set (upstream leaves ties to
goroutine order); a label's value comes from the highest priority, ties to the later rule set, as
upstream. HealthEvent rules run before Node rules, so a Node is converted only when needed, and a
Node is converted once per resourceVersion.

Evaluation cost (the fault-quarantine throughput target): for one event, each distinct expression
runs at most once however many rule sets share it, the event's CEL activation is built once, a
Node rule's outcome is kept per (expression, node resourceVersion), and ``match.all`` stops at the
first false. Only work is skipped: every rule the plain per-rule loop would look at is still looked
at in the same order, so the decision, including ``errors``, is the same
(tests/health/test_ruleset_equivalence.py).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared import cel
from shared.health import settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompiledRule:
    kind: str
    program: cel.Program


@dataclass(frozen=True)
class CompiledRuleSet:
    spec: settings.RuleSet
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


def compile_rule_sets(rule_sets: list[settings.RuleSet], *, source: str = "values") -> list[CompiledRuleSet]:
    """Compile every enabled rule set's expressions; InvalidInput names the rule set and position."""
    compiled = []
    for index, spec in enumerate(rule_sets):
        if not spec.enabled:
            continue

        def build(
            rules: list[settings.Rule], group: str, spec: settings.RuleSet = spec, index: int = index
        ) -> tuple[CompiledRule, ...]:
            return tuple(
                CompiledRule(
                    r.kind,
                    cel.compile(
                        r.expression,
                        name=spec.name,
                        where=f"{source}: fault-quarantine.ruleSets[{index}].match.{group}[{i}]",
                    ),
                )
                for i, r in enumerate(rules)
            )

        compiled.append(CompiledRuleSet(spec, index, build(spec.match.all, "all"), build(spec.match.any, "any")))
    return compiled


Outcome = tuple[bool, Any]
"""One expression on one input: (True, its value) or (False, the evaluation error's message)."""


def _run(program: cel.Program, prepared: cel.Activation | None, error: str) -> Outcome:
    if prepared is None:
        return False, error
    try:
        return True, program.evaluate(prepared)
    except cel.EvaluationError as exc:
        return False, str(exc)


class CelInput:
    """One input of the rules (the event, or a Node): its CEL value, the activation binding it to
    ``variable`` (built on first use; a value that cannot be bound fails every expression with the
    reason) and each expression's outcome on it."""

    __slots__ = ("_activation", "_error", "_variable", "results", "value")

    def __init__(self, variable: str, value: Any) -> None:
        self._variable = variable
        self.value = value
        self._activation: cel.Activation | None = None
        self._error = ""
        self.results: dict[str, Outcome] = {}

    def outcome(self, program: cel.Program) -> Outcome:
        hit = self.results.get(program.expression)
        if hit is None:
            if self._activation is None and not self._error:
                try:
                    self._activation = cel.activation({self._variable: self.value})
                except cel.EvaluationError as exc:
                    self._error = str(exc)
            hit = self.results[program.expression] = _run(program, self._activation, self._error)
        return hit


class NodeEntry(CelInput):
    """One Node at one resourceVersion, as the ``node`` of Node rules."""

    __slots__ = ("version",)

    def __init__(self, version: str, value: Any) -> None:
        super().__init__("node", value)
        self.version = version


class NodeCache:
    """CEL values of Nodes, converted once per resourceVersion and only the fields rules read.

    A Node rule's outcome is kept with the entry, so it is evaluated once per (expression, node
    resourceVersion); a node without a resourceVersion is converted and evaluated afresh each time.
    """

    def __init__(self) -> None:
        self._cache: dict[str, NodeEntry] = {}

    def get(self, node: dict[str, Any]) -> Any:
        return self.entry(node).value

    def entry(self, node: dict[str, Any]) -> NodeEntry:
        meta = node.get("metadata") or {}
        name, version = str(meta.get("name", "")), str(meta.get("resourceVersion", ""))
        hit = self._cache.get(name)
        if hit is not None and hit.version == version and version:
            return hit
        status = node.get("status") or {}
        slim = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": meta.get("labels") or {},
                "annotations": meta.get("annotations") or {},
            },
            "spec": node.get("spec") or {},
            "status": {k: status[k] for k in ("conditions", "capacity", "allocatable") if k in status},
        }
        entry = NodeEntry(version, cel.to_cel(slim))
        self._cache[name] = entry
        return entry


class _Evaluation:
    """One event on one node: each distinct expression evaluated at most once, inputs prepared once."""

    __slots__ = ("_entry", "_event", "_failed", "_node", "_nodes")

    def __init__(
        self,
        nodes: NodeCache,
        event_value: Any,
        node: dict[str, Any] | None,
        failed: Callable[[cel.Program, str], None],
    ) -> None:
        self._nodes = nodes
        self._event = CelInput("event", event_value)
        self._node = node
        self._entry: NodeEntry | None = None
        self._failed = failed

    def holds(self, rule: CompiledRule, problems: list[str]) -> bool:
        program = rule.program
        if rule.kind == "HealthEvent":
            outcome = self._event.outcome(program)
        else:
            if self._node is None:
                problems.append(f"{program.name}: node not found")
                return False
            if self._entry is None:
                self._entry = self._nodes.entry(self._node)
            outcome = self._entry.outcome(program)
        ok, value = outcome
        if ok:
            try:
                return program.as_bool(value)
            except cel.EvaluationError as exc:
                value = str(exc)
        self._failed(program, str(value))
        problems.append(f"{program.name}: {value}")
        return False


def _cheapest_first(rules: tuple[CompiledRule, ...]) -> tuple[CompiledRule, ...]:
    """HealthEvent rules before Node rules (stable), so a Node is looked at only when needed."""
    return tuple(sorted(rules, key=lambda r: r.kind != "HealthEvent"))


class Engine:
    """The compiled rule sets of one configuration.

    A rule that fails to evaluate is logged once (a warning naming the rule set, the expression and
    the first error), not once per event: such a rule usually fails on every event, and the count
    is in ``nvsentinel_rule_evaluation_errors_total``.
    """

    def __init__(self, rule_sets: list[CompiledRuleSet]) -> None:
        self.rule_sets = rule_sets
        self.nodes = NodeCache()
        self._ordered = [(rs, _cheapest_first(rs.all), _cheapest_first(rs.any)) for rs in rule_sets]
        self._logged: set[tuple[str, str]] = set()
        self._log_lock = threading.Lock()

    def _failed(self, program: cel.Program, message: str) -> None:
        key = (program.name, program.expression)
        if key in self._logged:
            return
        with self._log_lock:
            if key in self._logged:
                return
            self._logged.add(key)
        logger.warning(
            "rule set %r: rule %r fails to evaluate and counts as not matching: %s (logged once per rule)",
            program.name,
            program.expression,
            message,
            extra={"subject": program.name},
        )

    def _matches(
        self,
        rs: CompiledRuleSet,
        all_rules: tuple[CompiledRule, ...],
        any_rules: tuple[CompiledRule, ...],
        ev: _Evaluation,
        problems: list[str],
    ) -> bool:
        if not all_rules and not any_rules:
            return False
        for rule in all_rules:
            if not ev.holds(rule, problems):
                return False
        if not any_rules:
            return True
        return any(ev.holds(rule, problems) for rule in any_rules)

    def decide(self, event_value: Any, node: dict[str, Any] | None) -> Decision:
        """Evaluate every rule set on one converted event (``HealthEvent.cel_value()``)."""
        decision = Decision()
        ev = _Evaluation(self.nodes, event_value, node, self._failed)
        winners: dict[tuple[str, str], tuple[int, int, str]] = {}
        label_winners: dict[str, tuple[int, int, str]] = {}
        for rs, all_rules, any_rules in self._ordered:
            if not self._matches(rs, all_rules, any_rules, ev, decision.errors):
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
