"""Raw JSON watches: the change stream a controller wakes up on.

Same transport as ``rest`` (the official client's ApiClient, auth and TLS), reading the chunked
watch response line by line. A watch ends at ``timeout_seconds`` (so a controller checks its stop
flag regularly) or when the server cuts it; the caller lists again and watches from the list's
resourceVersion — level-triggered, so a missed event costs a re-list, never a lost change.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from shared.kube import errors as kube_errors
from shared.kube.api import KubeApi

_AUTH = ["BearerToken"]


def events(
    api: KubeApi,
    path: str,
    *,
    resource_version: str | None,
    timeout_seconds: int = 5,
    label_selector: str | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(type, object) for each change after ``resource_version`` until the watch ends.

    Raises the mapped error (``Expired`` for 410: list again); a broken stream just ends.
    """
    query: list[tuple[str, Any]] = [
        ("watch", "true"),
        ("timeoutSeconds", timeout_seconds),
        ("allowWatchBookmarks", "true"),
    ]
    if resource_version:
        query.append(("resourceVersion", resource_version))
    if label_selector:
        query.append(("labelSelector", label_selector))
    try:
        response = api.call_api(
            path,
            "GET",
            query_params=query,
            header_params={"Accept": "application/json"},
            auth_settings=_AUTH,
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=timeout_seconds + 10,
        )
    except Exception as exc:
        raise kube_errors.from_exception(exc, where=path) from exc
    try:
        buffer = b""
        for chunk in response.stream(4096, decode_content=True):
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                item = json.loads(line)
                kind, obj = item.get("type", ""), item.get("object") or {}
                if kind == "ERROR":
                    code = int(obj.get("code") or 500)
                    raise kube_errors.from_status(
                        code, str(obj.get("reason", "")), str(obj.get("message", "")), where=path
                    )
                yield kind, obj
    except (OSError, ValueError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            return
        return
    finally:
        response.release_conn()
