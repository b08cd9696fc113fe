"""Request bodies as the real server reads them: content types, and JSON with duplicate fields seen.

The handler passes the body with the media type of its ``Content-Type`` header: :func:`decode_object`
for the object of a create or update, :func:`decode` for a subresource's or an option's body.

A JSON object may name a field twice; Python keeps the last value silently, the real server's
strict decoder reports ``duplicate field "<path>"`` (sigs.k8s.io/json), and under the default
``Warn`` directive it becomes a warning. Finding duplicates costs nothing for the common body
without any: the hook only marks the objects that had one, and only then is the tree walked.
"""

from __future__ import annotations

import json
from typing import Any

from shared.sim.apiserver import apierrors, protobuf
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


def media_type(header: str | None, default: str = "") -> str:
    """The media type of a ``Content-Type`` header, parameters dropped."""
    return (header or default).split(";")[0].strip().lower()


def parse_yaml(raw: bytes) -> Any:
    from shared import errors, yamlio

    try:
        return yamlio.loads(raw.decode("utf-8", errors="replace"), source="request body")
    except errors.InvalidInput as exc:
        raise apierrors.bad_request(f"error converting YAML to JSON: {exc}") from exc


def decode(raw: bytes, media: str, into: tuple[str, str] | None = None) -> Any:
    """A subresource's or option's body: JSON, or protobuf from a typed client (kubectl drain's
    evictions, helm's DeleteOptions) when it names the ``into`` (apiVersion, kind) to decode."""
    if media == PROTOBUF and raw:
        if into is None:
            raise unsupported_media_type((JSON, YAML))
        return protobuf.decode(raw, into=into)
    return json.loads(raw) if raw.strip() else None


def decode_object(raw: bytes, media: str, *, into: tuple[str, str], custom: bool) -> tuple[Any, list[str] | None]:
    """The object a POST or PUT carries, and the fields it named twice (None: not JSON, nothing seen)."""
    if media not in MEDIA_TYPES:
        raise unsupported_media_type(MEDIA_TYPES)
    if not raw.strip():
        return None, None
    if media == PROTOBUF:
        # Protobuf has no strict decoding: unknown fields vanish whatever the directive says.
        return protobuf.decode(raw, into=into, custom=custom), None
    if media == YAML:
        return parse_yaml(raw), None
    try:
        return parse_json(raw)
    except json.JSONDecodeError as exc:
        raise invalid_json(exc) from exc
