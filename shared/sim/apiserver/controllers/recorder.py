"""Events the built-in controllers record, as client-go's legacy recorder writes them.

kube-controller-manager's workload and node controllers record ``core/v1`` Events
(``client-go:tools/record/event.go``): named ``<object>.<hex nanoseconds>``, in the object's
namespace (``default`` for cluster-scoped objects), with ``source.component`` and
``reportingComponent`` set to the controller (``deployment-controller``...), ``reportingInstance``
empty, ``eventTime`` null, ``count`` 1 and first/last timestamps. A repeat of an identical Event
(same object, type, reason, message and component) is not a new object: the recorder patches
``count`` + 1 and ``lastTimestamp`` (``events_cache.go``'s EventCorrelator). Its memory of past
Events is lost on restart, as a real controller manager's is. The "combined from similar events"
aggregation is not modelled.
"""

from __future__ import annotations

import logging
from typing import Any

from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver import apierrors, patchtypes, vclock
from shared.sim.apiserver.controllers import kit

logger = logging.getLogger(__name__)

_CACHE_LIMIT = 4096


class Recorder:
    def __init__(self, api: api_mod.Api, clock: vclock.VirtualClock) -> None:
        self.api = api
        self.clock = clock
        self._last_nanos = 0
        self._seen: dict[tuple[str, ...], tuple[str, str, int]] = {}  # key -> (namespace, name, count)

    def reset(self) -> None:
        self._seen.clear()
        self._last_nanos = 0

    def _nanos(self) -> int:
        # A paused virtual clock would give every Event of a burst the same name: keep them apart.
        nanos = max(int(self.clock.time() * 1e9), self._last_nanos + 1)
        self._last_nanos = nanos
        return nanos

    def event(self, obj: dict[str, Any], *, type: str, reason: str, message: str, component: str) -> None:
        """Record one Event about ``obj``; failures are logged, never raised (as client-go does)."""
        events = self.api.table.by_group_resource("", "events")
        if events is None:
            return
        ref = kit.object_ref(obj)
        namespace = ref.get("namespace") or "default"
        key = (component, ref["uid"], ref["kind"], namespace, ref["name"], type, reason, message)
        now = self.api.now()
        seen = self._seen.get(key)
        if seen is not None:
            ns, name, count = seen
            try:
                self.api.patch(
                    events,
                    ns,
                    name,
                    patchtypes.MERGE,
                    {"count": count + 1, "lastTimestamp": now},
                )
                self._seen[key] = (ns, name, count + 1)
                return
            except apierrors.ApiError:
                self._seen.pop(key, None)  # expired or deleted: record a new one
        name = f"{ref['name']}.{self._nanos():x}"
        body = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": {"component": component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": "",
        }
        try:
            self.api.create(events, namespace, body)
        except apierrors.ApiError as exc:
            logger.debug("event %s/%s not recorded: %s", namespace, name, exc)
            return
        if len(self._seen) >= _CACHE_LIMIT:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = (namespace, name, 1)
