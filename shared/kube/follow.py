"""A collection as it is now, then every change to it: what a live view (``--watch``) reads.

``kubectl get -w`` lists, then watches from the list's resourceVersion. ``follow`` does the same
and keeps going where a watch ends: a watch that times out or is cut resumes from the last
version it saw; one the server no longer has (410, ``Expired``) is replaced by a fresh list, whose
objects are yielded again (a viewer shows what changed, so seeing an object twice costs nothing).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from shared.kube import errors as kube_errors
from shared.kube import rest, watch
from shared.kube.api import KubeApi

ADDED = "ADDED"
DELETED = "DELETED"
SYNCED = "SYNCED"
"""Yielded (with an empty object) after each list's objects: the view is complete from here on."""


def follow(
    api: KubeApi, path: str, *, stop: threading.Event | None = None, timeout_seconds: int = 5
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(type, object): ``ADDED`` for each listed object, ``SYNCED``, then the watch's ``ADDED``,
    ``MODIFIED`` and ``DELETED`` changes (bookmarks left out) until ``stop`` is set or the caller stops
    iterating (closing the generator closes the watch's connection). Raises what the list raises
    (NotFound for an unserved kind, Unauthorized, Unavailable)."""
    while stop is None or not stop.is_set():
        listed = rest.get(api, path)
        version = (listed.get("metadata") or {}).get("resourceVersion")
        for item in listed.get("items") or []:
            yield ADDED, item
        yield SYNCED, {}
        while stop is None or not stop.is_set():
            changes = watch.events(api, path, resource_version=version, timeout_seconds=timeout_seconds)
            try:
                with contextlib.closing(iter(changes)) as stream:
                    for kind, obj in stream:
                        if kind != "BOOKMARK":
                            yield kind, obj
                        if stop is not None and stop.is_set():
                            return
            except kube_errors.Expired:
                break  # that version is gone: list again
            version = changes.version
