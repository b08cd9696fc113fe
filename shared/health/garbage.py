"""Garbage collection of old HealthEvents, by age, inside the running controller and ``events prune``.

HealthEvents are the history (``nvsentinel events list``, the analyzer's windows), but a fleet
publishes thousands a day, and etcd is no archive: upstream keeps 30 days (``720h``), so the
default ``nvsentinel.retention`` does too. The controller deletes at most once per
``nvsentinel.gcInterval`` of cluster time, reads page by page and deletes at most ``BATCH`` events
per pass (a backlog is worked off over the next passes, not in one pass that holds quarantine up).
Two kinds are never deleted, whatever their age: an event without ``status.phase`` (not processed
yet: deleting it would lose a fault) and an event that is the recorded cause of a node's current
quarantine (``nvsentinel.nvidia.com/quarantine-causes`` names it: ``nodes``, drain and
remediation read it back). ``retention: 0s`` turns collection off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from shared import errors, metrics
from shared.health import quarantine, resource
from shared.health import settings as hsettings
from shared.kube import informer, rest
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

BATCH = 1000
"""Most deletions in one controller pass."""


HOLDING = "nvsentinel/holding-causes"
"""The node informer's index of the nodes carrying the quarantine-causes annotation (key ``HELD``)."""
HELD = "held"


def holding(node: dict[str, Any]) -> list[str]:
    """``HOLDING``'s key for ``node``: one, when it carries the causes annotation at all."""
    return [HELD] if quarantine.ANN_CAUSES in ((node.get("metadata") or {}).get("annotations") or {}) else []


def index_nodes(cache: informer.Informer) -> None:
    cache.add_index(HOLDING, holding)


def holding_nodes(api: KubeApi, cache: informer.Informer | None = None) -> Iterator[dict[str, Any]]:
    """The nodes carrying quarantine causes: from the informer's index when it is current (a few
    of 10,000 nodes, no request), else every node page by page, those kept."""
    store = cache.current() if cache is not None else None
    if store is not None:
        yield from store.by_index(HOLDING, HELD)
        return
    for node in rest.iter_items(api, rest.core_path("nodes")):
        if holding(node):
            yield node


def quarantine_causes(api: KubeApi, cache: informer.Informer | None = None) -> frozenset[str]:
    """Names of the HealthEvents some node holds as a quarantine cause (``holding_nodes``)."""
    held: set[str] = set()
    for node in holding_nodes(api, cache):
        held.update(str(c.get("event")) for c in quarantine.causes(node).values() if c.get("event"))
    return frozenset(held)


def prune(
    api: KubeApi,
    *,
    older_than: timedelta,
    now: Callable[[], datetime],
    dry_run: bool = False,
    most: int | None = None,
    cache: informer.Informer | None = None,
) -> list[str]:
    """Delete (or, dry, list) the processed events older than ``older_than`` no quarantine holds."""
    keep = quarantine_causes(api, cache)
    return resource.prune(api, older_than=older_than, now=now, dry_run=dry_run, keep=keep, most=most)


COLLECTED = metrics.counter(
    "nvsentinel_healthevents_collected_total",
    "HealthEvents deleted by the controller for being older than the retention.",
)


def collected(count: int) -> None:
    """The HealthEvents one collection deleted."""
    COLLECTED.inc(count)
    logger.debug("collected %d HealthEvent(s)", count)


class Collector:
    """The controller's collection: ``maybe_run`` each pass, acting at most once per interval."""

    def __init__(
        self,
        api: KubeApi,
        settings: hsettings.Ours,
        *,
        now: Callable[[], datetime],
        cache: informer.Informer | None = None,
    ) -> None:
        self.api = api
        self.cache = cache
        self.now = now
        self.retention = hsettings.parse_duration(settings.retention)
        self.retention_text = settings.retention
        self.interval = hsettings.parse_duration(settings.gcInterval)
        self._last: datetime | None = None

    def due(self, moment: datetime) -> bool:
        if self.retention <= timedelta(0):
            return False
        return self._last is None or moment - self._last >= self.interval

    def maybe_run(self) -> list[str] | None:
        """The names deleted, or None when collection was not due (or failed: logged, retried next pass)."""
        moment = self.now()
        if not self.due(moment) or (self.cache is not None and self.cache.starting()):
            return None  # not due, or the node informer's first list is not in yet: a later pass
        try:
            deleted = prune(self.api, older_than=self.retention, now=self.now, most=BATCH, cache=self.cache)
        except errors.ToolError as exc:
            logger.warning("old HealthEvents not collected: %s", exc.line())
            return None
        collected(len(deleted))
        if len(deleted) < BATCH:
            self._last = moment  # caught up: wait the interval; a full batch goes on next pass
        if deleted:
            logger.info(
                "deleted %d HealthEvent(s) older than %s", len(deleted), self.retention_text, extra={"subject": "gc"}
            )
        return deleted
