"""The media types a PATCH may carry, and which of them a resource accepts.

Strategic merge patch needs the Go struct's patch strategies, so a real server refuses it for
custom resources (415); server-side apply needs a field manager (400). Same texts as
``apiserver/pkg/endpoints/handlers/patch.go``.
"""

from __future__ import annotations

from shared.sim.apiserver import apierrors, resources
from shared.sim.apiserver.apierrors import ApiError

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)


def check(r: resources.Resource, content_type: str, field_manager: str | None) -> None:
    if content_type not in PATCH_TYPES:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - "
            f"accepted media types include: {', '.join(PATCH_TYPES)}",
        )
    if content_type == STRATEGIC and not r.strategic:
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - "
            f"accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}",
        )
    if content_type == APPLY and not field_manager:
        raise apierrors.bad_request("PATCH: fieldManager must be set for apply")
