"""Request bodies as the real server reads them: content types, and JSON with duplicate fields seen.

A JSON object may name a field twice; Python keeps the last value silently, the real server's
strict decoder reports ``duplicate field "<path>"`` (sigs.k8s.io/json), and under the default
``Warn`` directive it becomes a warning. Finding duplicates costs nothing for the common body
without any: the hook only marks the objects that had one, and only then is the tree walked.
"""

from __future__ import annotations

import json
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import ApiError

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
MEDIA_TYPES = (JSON, YAML, PROTOBUF)
CR_MEDIA_TYPES = (JSON, YAML)


class _Duplicated(dict[str, Any]):
    """An object that named at least one field twice (the names are kept for the walk)."""

    names: list[str]


def parse_json(raw: bytes) -> tuple[Any, list[str]]:
    """The decoded body and the paths of fields it named twice (``spec.replicas``)."""
    marked = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal marked
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        marked = True
        seen: set[str] = set()
        duplicated = _Duplicated(obj)
        duplicated.names = []
        for key, _ in items:
            if key in seen and key not in duplicated.names:
                duplicated.names.append(key)
            seen.add(key)
        return duplicated

    body = json.loads(raw, object_pairs_hook=pairs)
    if not marked:
        return body, []
    duplicates: list[str] = []
    return _plain(body, "", duplicates), duplicates


def _plain(value: Any, path: str, duplicates: list[str]) -> Any:
    """Walk only when needed: turn marked objects back into plain dicts, collecting their paths."""
    if isinstance(value, dict):
        if isinstance(value, _Duplicated):
            duplicates.extend(f"{path}.{n}" if path else n for n in value.names)
            value = dict(value)
        for key, item in value.items():
            if isinstance(item, dict | list):
                value[key] = _plain(item, f"{path}.{key}" if path else key, duplicates)
        return value
    if isinstance(value, list):
        return [
            _plain(item, f"{path}[{i}]", duplicates) if isinstance(item, dict | list) else item
            for i, item in enumerate(value)
        ]
    return value


def unsupported_media_type(accepted: tuple[str, ...]) -> ApiError:
    """415 (apiserver:pkg/endpoints/handlers/negotiation/errors.go)."""
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
    )


def invalid_json(exc: json.JSONDecodeError) -> ApiError:
    return apierrors.bad_request(f"the object provided is unrecognized: {exc}")
