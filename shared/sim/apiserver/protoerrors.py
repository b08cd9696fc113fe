"""A protobuf body's 400s as kube-apiserver words them.

The decoder's errors name what it read: ``the object provided is unrecognized (must be of type
<Kind>): <why> (<the body's first 30 bytes>)`` before the type is known, and ``<Kind> in version
"<v>" cannot be handled as a <Kind>: <why>`` after (apiserver:pkg/endpoints/handlers/rest.go
``transformDecodeError``, ``summarizeData``). Go type names in conversion errors are the versioned
and the internal (hub) type. :mod:`shared.sim.apiserver.protobuf` raises these.
"""

from __future__ import annotations

import json

from shared.sim.apiserver.apierrors import ApiError


def _summary(raw: bytes) -> str:
    # apiserver pkg/endpoints/handlers/rest.go summarizeData(body, 30)
    if not raw:
        return "<empty>"
    if raw[:1] == b"{":
        return raw[:30].decode("utf-8", "replace") + (" ..." if len(raw) > 30 else "")
    return raw[:30].hex() + (" ..." if len(raw) > 30 else "")


def go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


class Cannot:
    """The decoder's 400 for a body it read the type of: ``<Kind> in version "<v>" cannot be handled as a <target>``."""

    def __init__(self, kind: str, version: str, target: str) -> None:
        self.kind, self.version, self.target = kind, version, target

    def __call__(self, text: str) -> ApiError:
        return ApiError(
            400,
            "BadRequest",
            f"{self.kind} in version {go_quote(self.version)} cannot be handled as a {self.target}: {text}",
        )


def go_type(message: str) -> str:
    parts = message.split(".")
    return f"{parts[-2]}.{parts[-1]}"


def internal_type(message: str) -> str:
    # The hub (internal) types live in packages named after the group (core, apps, rbac, ...).
    parts = message.split(".")
    return f"{parts[-3] if parts[2] == 'api' else parts[-2]}.{parts[-1]}"


def unrecognized(text: str, raw: bytes, target: str) -> ApiError:
    if not target:
        return ApiError(400, "BadRequest", text)
    return ApiError(
        400,
        "BadRequest",
        f"the object provided is unrecognized (must be of type {target}): {text} ({_summary(raw)})",
    )
