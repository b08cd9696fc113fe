"""The analyzer: rules over a node's event history that emit a derived HealthEvent.

One Xid 13 is noise; the same Xid three times in a day on one GPU is a failing GPU. Rules judge a
node on its record (research/nvsentinel.md §6, upstream's "sequence" rule format, in values):
every ``sequence`` entry counts the node's events inside ``timeWindow`` (up to the trigger's
own time, so each event is judged on the record as it stood then) whose fields equal its
``criteria`` (a value, or ``"this.<field>"`` for the triggering event's value), and the rule fires
when every count reaches its ``errorCount``. The trigger must match the literal criteria of some
entry. The first rule that fires emits a clone of the trigger with ``agent``
health-events-analyzer, ``checkName`` = the rule, the rule's action and message, ``isFatal`` =
action is not NONE — then it goes through quarantine like any event. The analyzer's own events
never trigger rules (upstream's loop guard). Windows end at the clock's ``now`` (shared/clock: the
simulated cluster's virtual time there), so tests move time instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from shared import errors
from shared.health import event as hevent
from shared.health import settings as hsettings

AGENT = "health-events-analyzer"
THIS = "this."


def _field(data: dict[str, Any], path: str) -> Any:
    current: Any = data
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


def _matches(doc: dict[str, Any], criteria: dict[str, Any], trigger: dict[str, Any], *, literal_only: bool) -> bool:
    for path, wanted in criteria.items():
        if isinstance(wanted, str) and wanted.startswith(THIS):
            if literal_only:
                continue
            wanted = _field(trigger, wanted[len(THIS) :])
        if _field(doc, path) != wanted:
            return False
    return True


class Analyzer:
    def __init__(self, settings: hsettings.Analyzer, *, now: Callable[[], datetime]) -> None:
        self.rules = [r for r in settings.rules if r.enabled] if settings.enabled else []
        self.windows = {r.name: hsettings.parse_duration(r.timeWindow) for r in self.rules}
        self.now = now
        for rule in self.rules:
            if rule.recommendedAction not in hevent.RecommendedAction.__members__:
                raise errors.InvalidInput(
                    f"analyzer rule {rule.name!r}: unknown recommendedAction {rule.recommendedAction!r}",
                    where="health-events-analyzer.rules",
                )

    def evaluate(self, trigger: hevent.HealthEvent, history: Iterable[hevent.HealthEvent]) -> hevent.HealthEvent | None:
        """The derived event of the first rule ``trigger`` makes fire over ``history``, or None."""
        if trigger.agent == AGENT or trigger.isHealthy or not self.rules:
            return None
        doc = trigger.wire()
        until = trigger.generatedTimestamp
        past = [
            e
            for e in history
            if e.nodeName == trigger.nodeName
            and e.agent != AGENT
            and (until is None or e.generatedTimestamp is None or e.generatedTimestamp <= until)
        ]
        now = self.now()
        for rule in self.rules:
            if not any(_matches(doc, s.criteria, doc, literal_only=True) for s in rule.sequence):
                continue
            since = now - self.windows[rule.name]
            recent = [e.wire() for e in past if e.generatedTimestamp is not None and e.generatedTimestamp >= since]
            if all(
                sum(_matches(d, s.criteria, doc, literal_only=False) for d in recent) >= s.errorCount
                for s in rule.sequence
            ):
                return derived(trigger, rule)
        return None


def derived(trigger: hevent.HealthEvent, rule: hsettings.AnalyzerRule) -> hevent.HealthEvent:
    action = hevent.RecommendedAction[rule.recommendedAction]
    return trigger.model_copy(
        update={
            "agent": AGENT,
            "checkName": rule.name,
            "recommendedAction": action,
            "isHealthy": False,
            "isFatal": action != hevent.RecommendedAction.NONE,
            "message": rule.message or rule.description,
            "id": "",
            "metadata": {**trigger.metadata, "analyzerRule": rule.name},
        }
    )
