"""Objects as a read shows them, where that differs from the stored bytes.

Two things are computed when an object is read rather than written: fields that move with the
clock (a node Lease's ``renewTime``, a node's ``lastHeartbeatTime`` — see
:mod:`shared.sim.apiserver.controllers.heartbeats`), and the shape of a resource served over
another one's objects (events.k8s.io Events over core Events, :mod:`shared.sim.apiserver.eventsv1`).
The verbs (``Api.as_version``), the list assembly and the watch stream all ask :class:`Views`,
so GET, LIST and the objects in watch events agree. A view never writes: the resourceVersion a
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


class Views:
    """The views by served (group, plural); resources without one read as stored."""

    def __init__(self) -> None:
        self._views: dict[tuple[str, str], View] = {}

    def register(self, group: str, plural: str, view: View) -> None:
        self._views[(group, plural)] = view

    def applies(self, r: resources.Resource) -> bool:
        return (r.group, r.plural) in self._views

    def object(self, r: resources.Resource, obj: JsonObject) -> JsonObject:
        view = self._views.get((r.group, r.plural))
        return obj if view is None else view.object(obj)

    def raw(self, r: resources.Resource, entry: store.Entry) -> bytes:
        view = self._views.get((r.group, r.plural))
        return entry.raw if view is None else view.raw(entry)

    def raws(self, r: resources.Resource, entries: list[store.Entry]) -> list[bytes]:
        view = self._views.get((r.group, r.plural))
        return [e.raw for e in entries] if view is None else view.raws(entries)


class _Stored(Views):
    """Views with nothing registered, the default of an API not wired to a cluster."""

    def register(self, group: str, plural: str, view: View) -> None:
        raise TypeError("register views on a Views() of your own, not on the shared default")


STORED: Views = _Stored()
