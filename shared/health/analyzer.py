"""The analyzer: rules over a node's event history that emit derived HealthEvents, and their recoveries.

One Xid 13 is noise; the same Xid five times in a day on one GPU is a failing GPU. Rules judge a
node on its record (research/nvsentinel.md §6, upstream's "sequence" rule format, in values;
the default set is ``health-events-analyzer.rules`` in ``rules/values.yaml``). Every ``sequence``
entry counts the node's unhealthy events inside ``timeWindow`` (up to the trigger's own time, so
each event is judged on the record as it stood then) whose fields match its ``criteria``, and the
rule fires when every count reaches its ``errorCount``. A criterion is a literal (a list field
matches a literal it contains), ``"this.<field>"`` (the trigger's value), or an operator:
``{anyOf: [...]}``, ``{noneOf: [...]}``, ``{sameEntity: PCI}`` (shares an entity of that type with
the trigger). ``burstGap`` counts events closer together than the gap as one burst (a storm of
log lines is one incident); ``distinct: <field>`` counts distinct values, ``distinct: entity:PCI``
distinct entities of a type (Xid 31 on two GPUs).

The trigger must match the criteria of some entry, read against itself. The first rule that
fires emits a clone of the trigger with ``agent`` health-events-analyzer, ``checkName`` = the rule,
the rule's action and message, ``isFatal`` = the rule's ``fatal`` or action ≠ NONE — then it goes
through quarantine like any event. The analyzer's own events never trigger rules (upstream's loop
guard). Derived events keep the trigger's time and entities, so their names (resource.py) follow
from the trigger: analysing the same history again, after a restart, publishes nothing new.

Recovery (upstream ADR 053/059): a rule with ``recovery`` publishes a *healthy* derived event —
the open derived event's clone, healthy, action NONE — when ``quietFor`` passed without an event
the rule counts (stamped at that moment: last such event + quietFor), or on a healthy event
matching ``healthyEvent`` on the same entity (stamped with its time). Quarantine then releases
the cause the derived event made. A recovery is also the history's boundary: the rule counts
only events after it, so an old record does not fire the rule again at once. Windows end at the
clock's ``now`` (shared/clock: the simulated cluster's virtual time there), so tests move time
instead of sleeping.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.health import event as hevent
from shared.health import settings as hsettings

AGENT = "health-events-analyzer"
THIS = "this."
ENTITY = "entity:"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
META_RULE, META_CHECK, META_AGENT = "analyzerRule", "analyzerTriggerCheck", "analyzerTriggerAgent"


def _field(data: dict[str, Any], path: str) -> Any:
    """``a.b`` of a wire document; None where the path leaves the document."""
    current: Any = data
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


def _same(value: Any, wanted: Any) -> bool:
    """Equal, or a list holding ``wanted``; ``"13"`` and ``13`` are the same code."""
    if isinstance(value, list) and not isinstance(wanted, list):
        return any(_same(v, wanted) for v in value)
    if value == wanted:
        return True
    scalar = (str, int)
    return (
        isinstance(value, scalar)
        and isinstance(wanted, scalar)
        and not isinstance(value, bool)
        and not isinstance(wanted, bool)
        and str(value) == str(wanted)
    )


def _entities(doc: dict[str, Any], kind: str) -> set[str]:
    found = doc.get("entitiesImpacted")
    if not isinstance(found, list):
        return set()
    return {str(e.get("entityValue")) for e in found if isinstance(e, dict) and e.get("entityType") == kind}


def _operator(wanted: Any) -> tuple[str, Any] | None:
    """``{anyOf: [..]}`` → ("anyOf", [..]); None for a literal (the settings models allow no other dict)."""
    if isinstance(wanted, dict) and len(wanted) == 1:
        op, arg = next(iter(wanted.items()))
        if op == "sameEntity" or (op in ("anyOf", "noneOf") and isinstance(arg, list)):
            return op, arg
    return None


def matches(doc: dict[str, Any], criteria: dict[str, Any], trigger: dict[str, Any]) -> bool:
    """Whether the event ``doc`` (wire form) meets every criterion, ``this.`` read from ``trigger``."""
    for path, wanted in criteria.items():
        value = _field(doc, path)
        if isinstance(wanted, str) and wanted.startswith(THIS):
            theirs = _field(trigger, wanted[len(THIS) :])
            if theirs is None or not _same(value, theirs):  # an absent value is never "the same"
                return False
        elif (operator := _operator(wanted)) is not None:
            op, arg = operator
            if op == "sameEntity":
                if not _entities(doc, str(arg)) & _entities(trigger, str(arg)):
                    return False
            elif (op == "anyOf") != any(_same(value, a) for a in arg):
                return False
        elif not _same(value, wanted):
            return False
    return True


def _at(ev: hevent.HealthEvent) -> datetime:
    """An event's time; events without one are filtered out before this is asked."""
    return ev.generatedTimestamp or _EPOCH


def _count(times: list[datetime], docs: list[dict[str, Any]], seq: hsettings.Sequence) -> int:
    if seq.distinct is not None:
        if seq.distinct.startswith(ENTITY):
            kind = seq.distinct[len(ENTITY) :]
            return len({value for d in docs for value in _entities(d, kind)})
        return len({json.dumps(_field(d, seq.distinct), sort_keys=True) for d in docs})
    if seq.burstGap is None:
        return len(times)
    gap = hsettings.parse_duration(seq.burstGap)
    bursts, last = 0, None
    for moment in sorted(times):
        if last is None or moment - last > gap:
            bursts += 1
        last = moment
    return bursts


def entity_key(ev: hevent.HealthEvent) -> str:
    return ",".join(sorted(f"{e.entityType}={e.entityValue}" for e in ev.entitiesImpacted))


def trigger_of(derived_event: hevent.HealthEvent) -> dict[str, Any]:
    """The trigger a derived event was cloned from (wire form), for its rule's ``this.`` criteria."""
    doc = derived_event.wire()
    doc["agent"] = derived_event.metadata.get(META_AGENT, doc["agent"])
    doc["checkName"] = derived_event.metadata.get(META_CHECK, doc["checkName"])
    return doc


class History:
    """The events a pass judges, indexed once per node: what rules count, and the recoveries.

    Rules read the wire form; it is built once per event, and only for the nodes a pass looks at,
    so a pass over thousands of events stays linear and an idle pass costs one walk."""

    def __init__(self, events: Iterable[hevent.HealthEvent]) -> None:
        self._events: dict[str, list[hevent.HealthEvent]] = defaultdict(list)
        self._docs: dict[str, list[tuple[datetime, dict[str, Any]]]] = {}
        self.recovered: dict[str, list[hevent.HealthEvent]] = defaultdict(list)
        for ev in events:
            if ev.generatedTimestamp is None:
                continue
            if ev.agent == AGENT:
                if ev.isHealthy:
                    self.recovered[ev.nodeName].append(ev)
            elif not ev.isHealthy:
                self._events[ev.nodeName].append(ev)

    def counted(self, node: str) -> list[tuple[datetime, dict[str, Any]]]:
        """The node's unhealthy events from monitors, as (time, wire form)."""
        if node not in self._docs:
            self._docs[node] = [(_at(e), e.wire()) for e in self._events.get(node, [])]
        return self._docs[node]


@dataclass
class _Rule:
    """A rule with its durations parsed once."""

    spec: hsettings.AnalyzerRule
    window: timedelta
    quiet: timedelta | None

    @property
    def name(self) -> str:
        return self.spec.name

    def counted(self, doc: dict[str, Any], trigger: dict[str, Any]) -> bool:
        """Whether some entry of the rule counts ``doc`` for ``trigger``."""
        return any(matches(doc, s.criteria, trigger) for s in self.spec.sequence)


class Analyzer:
    """The enabled rules of the values (overrides applied), checked at load by the settings models."""

    def __init__(self, settings: hsettings.Analyzer, *, now: Callable[[], datetime]) -> None:
        self.rules = [
            _Rule(
                spec=r,
                window=hsettings.parse_duration(r.timeWindow),
                quiet=None
                if r.recovery is None or r.recovery.quietFor is None
                else hsettings.parse_duration(r.recovery.quietFor),
            )
            for r in settings.effective()
        ]
        self.now = now

    # ------------------------------------------------------------ firing
    def evaluate(
        self, trigger: hevent.HealthEvent, history: Iterable[hevent.HealthEvent] | History
    ) -> hevent.HealthEvent | None:
        """The derived event of the first rule ``trigger`` makes fire over ``history``, or None."""
        if trigger.agent == AGENT or trigger.isHealthy or not self.rules:
            return None
        record = history if isinstance(history, History) else History(history)
        doc = trigger.wire()
        until = trigger.generatedTimestamp
        past = [(t, d) for t, d in record.counted(trigger.nodeName) if until is None or t <= until]
        recoveries = record.recovered.get(trigger.nodeName, [])
        now = self.now()
        for rule in self.rules:
            if not rule.counted(doc, doc):
                continue
            since = now - rule.window
            boundary = self._boundary(rule, doc, recoveries)
            if boundary is not None:
                since = max(since, boundary + timedelta(microseconds=1))
            recent = [(t, d) for t, d in past if t >= since]
            if all(self._enough(rule, s, recent, doc) for s in rule.spec.sequence):
                return derived(trigger, rule.spec)
        return None

    @staticmethod
    def _enough(
        rule: _Rule, seq: hsettings.Sequence, recent: list[tuple[datetime, dict[str, Any]]], doc: dict[str, Any]
    ) -> bool:
        hits = [(t, d) for t, d in recent if matches(d, seq.criteria, doc)]
        return _count([t for t, _ in hits], [d for _, d in hits], seq) >= seq.errorCount

    @staticmethod
    def _boundary(rule: _Rule, doc: dict[str, Any], recoveries: list[hevent.HealthEvent]) -> datetime | None:
        """The latest recovery of ``rule`` whose condition covers ``doc``: the rule counts only after it."""
        times = [
            r.generatedTimestamp
            for r in recoveries
            if r.checkName == rule.name and r.generatedTimestamp is not None and rule.counted(doc, trigger_of(r))
        ]
        return max(times, default=None)

    # ------------------------------------------------------------ recovery
    def open_conditions(self, history: Iterable[hevent.HealthEvent]) -> list[tuple[_Rule, hevent.HealthEvent]]:
        """Per rule, node and entity set, the latest derived event when it is unhealthy."""
        by_rule = {r.name: r for r in self.rules if r.spec.recovery is not None}
        latest: dict[tuple[str, str, str], hevent.HealthEvent] = {}
        for ev in history:
            if ev.agent != AGENT or ev.checkName not in by_rule or ev.generatedTimestamp is None:
                continue
            key = (ev.checkName, ev.nodeName, entity_key(ev))
            held = latest.get(key)
            if held is None or _later(ev, held):
                latest[key] = ev
        return [(by_rule[k[0]], ev) for k, ev in sorted(latest.items()) if not ev.isHealthy]

    def recoveries(
        self, history: Iterable[hevent.HealthEvent], *, healthy: Iterable[hevent.HealthEvent] = ()
    ) -> list[hevent.HealthEvent]:
        """Healthy derived events due: open conditions quiet for their ``quietFor``, or cleared by
        one of the ``healthy`` events (the new ones of this pass) matching the rule's ``healthyEvent``."""
        events = list(history)
        record = History(events)
        fresh = [h for h in healthy if h.isHealthy and h.agent != AGENT and h.generatedTimestamp is not None]
        now = self.now()
        out = []
        for rule, open_event in self.open_conditions(events):
            trigger = trigger_of(open_event)
            since = _at(open_event)
            at = self._cleared_by(rule, open_event, trigger, fresh, since)
            if at is None and rule.quiet is not None:
                last = max(
                    (t for t, doc in record.counted(open_event.nodeName) if t >= since and rule.counted(doc, trigger)),
                    default=since,
                )
                if now >= last + rule.quiet:
                    at = last + rule.quiet
            if at is not None:
                out.append(recovered(open_event, at=at, why=rule.spec.description or rule.name))
        return out

    @staticmethod
    def _cleared_by(
        rule: _Rule,
        open_event: hevent.HealthEvent,
        trigger: dict[str, Any],
        healthy: list[hevent.HealthEvent],
        since: datetime,
    ) -> datetime | None:
        wanted = None if rule.spec.recovery is None else rule.spec.recovery.healthyEvent
        if wanted is None:
            return None
        mine = {f"{e.entityType}={e.entityValue}" for e in open_event.entitiesImpacted}
        for h in healthy:
            if h.nodeName != open_event.nodeName or _at(h) < since:
                continue
            theirs = {f"{e.entityType}={e.entityValue}" for e in h.entitiesImpacted}
            if mine and theirs and not mine & theirs:
                continue
            if matches(h.wire(), wanted, trigger):
                return h.generatedTimestamp
        return None

    def analyze(
        self, pending: Iterable[hevent.HealthEvent], history: Iterable[hevent.HealthEvent]
    ) -> list[hevent.HealthEvent]:
        """Everything to publish for a pass: derived events of ``pending``, then recoveries due."""
        past, new = list(history), list(pending)
        record = History(past)
        out = [d for d in (self.evaluate(e, record) for e in new) if d is not None]
        return hevent.unique(out + self.recoveries(past, healthy=new))


def _later(a: hevent.HealthEvent, b: hevent.HealthEvent) -> bool:
    """``a`` after ``b``; at the same instant a healthy event is the later (it closes the condition)."""
    return (_at(a), a.isHealthy) > (_at(b), b.isHealthy)


def derived(trigger: hevent.HealthEvent, rule: hsettings.AnalyzerRule) -> hevent.HealthEvent:
    action = hevent.RecommendedAction[rule.recommendedAction]
    fatal = rule.fatal if rule.fatal is not None else action != hevent.RecommendedAction.NONE
    strategy = trigger.processingStrategy
    if strategy == hevent.ProcessingStrategy.STORE_AND_ANALYSE:  # stored for us to analyse; our verdict acts
        strategy = hevent.ProcessingStrategy.UNSPECIFIED
    return trigger.model_copy(
        update={
            "agent": AGENT,
            "checkName": rule.name,
            "recommendedAction": action,
            "isHealthy": False,
            "isFatal": fatal,
            "message": rule.message or rule.description,
            "id": "",
            "processingStrategy": strategy,
            "metadata": {
                **trigger.metadata,
                META_RULE: rule.name,
                META_CHECK: trigger.checkName,
                META_AGENT: trigger.agent,
            },
        }
    )


def recovered(open_event: hevent.HealthEvent, *, at: datetime, why: str) -> hevent.HealthEvent:
    """The healthy twin of a derived event: same rule, node and entities, so quarantine releases it."""
    return open_event.model_copy(
        update={
            "isHealthy": True,
            "isFatal": False,
            "recommendedAction": hevent.RecommendedAction.NONE,
            "errorCode": [],
            "message": f"{open_event.checkName}: recovered ({why})",
            "generatedTimestamp": at,
            "id": "",
        }
    )
