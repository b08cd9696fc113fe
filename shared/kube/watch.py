"""Raw JSON watches: the change stream a controller wakes up on.

Same transport as ``rest`` (the official client's ApiClient, auth and TLS), reading the chunked
watch response line by line. A watch ends at ``timeout_seconds`` (so a controller checks its stop
flag regularly) or when the server cuts it: an API server restart, a load balancer's idle
timeout, a node of the control plane going away. ``Changes`` tells the two apart (``broken``) and
keeps the last resourceVersion it saw (objects and bookmarks), so the caller can watch again from
there instead of listing everything again; a 410 (``Expired``) means that version is gone and only
a new list helps. Level-triggered either way: a missed event costs a re-list, never a lost change.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import Any

from shared.kube import errors as kube_errors
from shared.kube.api import KubeApi

_AUTH = ["BearerToken"]


class Changes:
    """One watch of ``path`` from ``resource_version``: (type, object) per change, iterated once.

    A caller that stops early closes the iterator (``contextlib.closing``), which closes the
    connection at once rather than when the garbage collector gets to it. Raises the mapped
    error when the watch cannot start or the server sends an ERROR event (``Expired`` for 410);
    a stream that breaks off just ends, with ``broken`` set."""

    def __init__(
        self,
        api: KubeApi,
        path: str,
        *,
        resource_version: str | None,
        timeout_seconds: int = 5,
        label_selector: str | None = None,
    ) -> None:
        self.api = api
        self.path = path
        self.version = resource_version
        """The newest resourceVersion seen so far: where a new watch resumes."""
        self.timeout_seconds = timeout_seconds
        self.label_selector = label_selector
        self.broken = False
        """True when the stream ended without the server closing it (cut, reset, truncated)."""

    def __iter__(self) -> Generator[tuple[str, dict[str, Any]], None, None]:
        from urllib3.exceptions import HTTPError

        response = self._open()
        read_to_the_end = False
        try:
            buffer = b""
            for chunk in response.stream(4096, decode_content=True):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield from self._event(json.loads(line))
            read_to_the_end = True
        except (OSError, ValueError, HTTPError):
            # "Response ended prematurely", a reset, half a JSON line: the server or the way to
            # it went away mid-stream. Not an error for a level-based caller; it watches again.
            self.broken = True
        finally:
            if not read_to_the_end:
                response.close()  # a stream left mid-way cannot serve another request: close its socket
            response.release_conn()

    def _open(self) -> Any:
        query: list[tuple[str, Any]] = [
            ("watch", "true"),
            ("timeoutSeconds", self.timeout_seconds),
            ("allowWatchBookmarks", "true"),
        ]
        if self.version:
            query.append(("resourceVersion", self.version))
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        try:
            return self.api.call_api(
                self.path,
                "GET",
                query_params=query,
                header_params={"Accept": "application/json"},
                auth_settings=_AUTH,
                _return_http_data_only=True,
                _preload_content=False,
                _request_timeout=self.timeout_seconds + 10,
            )
        except Exception as exc:
            raise kube_errors.from_exception(exc, where=self.path) from exc

    def _event(self, item: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        kind, obj = item.get("type", ""), item.get("object") or {}
        if kind == "ERROR":
            code = int(obj.get("code") or 500)
            raise kube_errors.from_status(
                code, str(obj.get("reason", "")), str(obj.get("message", "")), where=self.path
            )
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            self.version = str(version)
        yield kind, obj


def events(
    api: KubeApi,
    path: str,
    *,
    resource_version: str | None,
    timeout_seconds: int = 5,
    label_selector: str | None = None,
) -> Changes:
    """The changes after ``resource_version`` until the watch ends (see ``Changes``)."""
    return Changes(
        api, path, resource_version=resource_version, timeout_seconds=timeout_seconds, label_selector=label_selector
    )
