"""Objects as a read shows them, where that differs from the stored bytes.

Two things are computed when an object is read rather than written: fields that move with the
clock (a node Lease's ``renewTime``, a node's ``lastHeartbeatTime`` — see
:mod:`shared.sim.apiserver.controllers.heartbeats`), and the shape of a resource served over
another one's objects (events.k8s.io Events over core Events, :mod:`shared.sim.apiserver.eventsv1`),
and a version served over objects stored at another version of the same resource (autoscaling/v1
HorizontalPodAutoscalers over v2, :mod:`shared.sim.apiserver.hpaversions`): a :class:`Conversion`,
which also turns what a client writes at its version into the stored shape. The verbs
(``Api.as_version``), the list assembly and the watch stream all ask :class:`Views`, so GET, LIST
and the objects in watch events agree. A view never writes: the resourceVersion a
computed read carries is the stored one.
"""

from __future__ import annotations

from typing import Any, Protocol

from shared.sim.apiserver import resources, store

JsonObject = dict[str, Any]


class View(Protocol):
    """How one served resource's objects read."""

    def object(self, obj: JsonObject) -> JsonObject:
        """Rewrite a decoded object (in place or as a new dict) and return it."""
        ...

    def raw(self, entry: store.Entry) -> bytes:
        """The encoded object a watch sends for ``entry``."""
        ...

    def raws(self, entries: list[store.Entry]) -> list[bytes]:
        """The encoded objects a list sends (one call per list, so a view can work in bulk)."""
        ...


class Conversion(Protocol):
    """How one version of a resource reads and writes objects stored at another of its versions."""

    def from_storage(self, obj: JsonObject) -> JsonObject:
        """The stored object in this version's shape (a new dict)."""
        ...

    def to_storage(self, obj: JsonObject) -> JsonObject:
        """An object written at this version, in the stored shape (a new dict)."""
        ...

    def raw(self, entry: store.Entry) -> bytes:
        """The encoded object in this version's shape."""
        ...


class Views:
    """The views by served (group, plural) and the conversions by (group, version, plural);
    resources without either read as stored."""

    def __init__(self) -> None:
        self._views: dict[tuple[str, str], View] = {}
        self._conversions: dict[tuple[str, str, str], Conversion] = {}

    def register(self, group: str, plural: str, view: View) -> None:
        self._views[(group, plural)] = view

    def register_conversion(self, group: str, version: str, plural: str, conversion: Conversion) -> None:
        self._conversions[(group, version, plural)] = conversion

    def applies(self, r: resources.Resource) -> bool:
        return (r.group, r.plural) in self._views or (r.group, r.version, r.plural) in self._conversions

    def object(self, r: resources.Resource, obj: JsonObject) -> JsonObject:
        obj = self.from_storage(r, obj)
        view = self._views.get((r.group, r.plural))
        return obj if view is None else view.object(obj)

    def from_storage(self, r: resources.Resource, obj: JsonObject) -> JsonObject:
        """``obj`` in the shape of the version ``r`` serves (the object itself when no conversion applies)."""
        conversion = self._conversions.get((r.group, r.version, r.plural))
        return obj if conversion is None else conversion.from_storage(obj)

    def to_storage(self, r: resources.Resource, obj: JsonObject) -> JsonObject:
        """``obj``, written at the version ``r`` serves, in the stored shape."""
        conversion = self._conversions.get((r.group, r.version, r.plural))
        return obj if conversion is None else conversion.to_storage(obj)

    def raw(self, r: resources.Resource, entry: store.Entry) -> bytes:
        conversion = self._conversions.get((r.group, r.version, r.plural))
        if conversion is not None:
            return conversion.raw(entry)
        view = self._views.get((r.group, r.plural))
        return entry.raw if view is None else view.raw(entry)

    def raws(self, r: resources.Resource, entries: list[store.Entry]) -> list[bytes]:
        if (r.group, r.version, r.plural) in self._conversions:
            return [self.raw(r, e) for e in entries]
        view = self._views.get((r.group, r.plural))
        return [e.raw for e in entries] if view is None else view.raws(entries)


class _Stored(Views):
    """Views with nothing registered, the default of an API not wired to a cluster."""

    def register(self, group: str, plural: str, view: View) -> None:
        raise TypeError("register views on a Views() of your own, not on the shared default")

    def register_conversion(self, group: str, version: str, plural: str, conversion: Conversion) -> None:
        raise TypeError("register conversions on a Views() of your own, not on the shared default")


STORED: Views = _Stored()
