"""One mapping from API failures to the project's error classes.

Covers: every status family (401/403, 404, 409 conflict vs already-exists, 410, 429 with
Retry-After, 400/413/415/422, 5xx, 0) with real ``ApiException`` objects; a 404 for an unserved
type vs a missing object; urllib3 timeouts and connection failures; ToolErrors pass through
unchanged; messages come from the Status body and never carry a token.
"""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException
from urllib3 import exceptions as http

from shared import errors
from shared.kube import errors as kube_errors


class _Response:
    """The minimal HTTP response ApiException reads (status, reason, body, headers)."""

    def __init__(self, status: int, body: dict[str, object] | None, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.reason = "reason phrase"
        self.data = json.dumps(body).encode() if body is not None else b""
        self._headers = headers or {}

    def getheaders(self) -> dict[str, str]:
        return self._headers


def _api_exception(
    status: int, reason: str = "", message: str = "m", headers: dict[str, str] | None = None
) -> ApiException:
    body = {"kind": "Status", "reason": reason, "message": message, "code": status}
    return ApiException(http_resp=_Response(status, body, headers))


@pytest.mark.parametrize(
    ("status", "reason", "expected"),
    [
        (401, "Unauthorized", errors.Unauthorized),
        (403, "Forbidden", errors.Unauthorized),
        (404, "NotFound", errors.NotFound),
        (409, "Conflict", kube_errors.Conflict),
        (409, "AlreadyExists", kube_errors.AlreadyExists),
        (410, "Expired", kube_errors.Expired),
        (429, "TooManyRequests", kube_errors.Throttled),
        (400, "BadRequest", errors.InvalidInput),
        (413, "RequestEntityTooLarge", errors.InvalidInput),
        (415, "UnsupportedMediaType", errors.InvalidInput),
        (422, "Invalid", errors.InvalidInput),
        (500, "InternalError", kube_errors.ServerError),
        (503, "ServiceUnavailable", kube_errors.ServerError),
    ],
    ids=lambda v: str(v) if not isinstance(v, type) else v.__name__,
)
def test_each_status_maps_to_its_class(status: int, reason: str, expected: type[errors.ToolError]) -> None:
    mapped = kube_errors.from_exception(_api_exception(status, reason, "what went wrong"), where="nodes/x")
    assert type(mapped) is expected
    assert mapped.message.endswith("what went wrong") and mapped.where == "nodes/x"


def test_retryable_failures_are_unavailable_so_their_exit_status_is_six() -> None:
    for cls in kube_errors.RETRYABLE:
        assert issubclass(cls, errors.Unavailable)
        assert cls("x").exit_code == 6


def test_throttling_keeps_the_retry_after_header() -> None:
    mapped = kube_errors.from_exception(_api_exception(429, "TooManyRequests", headers={"Retry-After": "3"}))
    assert isinstance(mapped, kube_errors.Throttled) and mapped.retry_after == 3.0


def test_client_side_timeouts_are_timeouts_and_broken_connections_unavailable() -> None:
    timeout = http.ReadTimeoutError(None, "/api", "read timed out")  # type: ignore[arg-type]
    assert type(kube_errors.from_exception(timeout)) is errors.Timeout
    refused = http.MaxRetryError(None, "/api", http.NewConnectionError(None, "refused"))  # type: ignore[arg-type]
    assert isinstance(kube_errors.from_exception(refused), kube_errors.ConnectionFailed)
    assert isinstance(kube_errors.from_exception(ConnectionResetError()), kube_errors.ConnectionFailed)


def test_an_error_that_already_has_a_class_is_not_wrapped_again() -> None:
    original = errors.NotFound("gone", where="here")
    assert kube_errors.from_exception(original) is original


def test_messages_never_carry_a_bearer_token() -> None:
    mapped = kube_errors.from_exception(_api_exception(401, "Unauthorized", "bad Authorization: Bearer abc.def"))
    assert "abc.def" not in mapped.line()


def test_a_404_for_the_type_itself_is_unserved_but_a_missing_object_is_plain_not_found() -> None:
    """apimachinery ``pkg/api/errors/errors.go`` (NewGenericServerResponse, 404): an unregistered
    group or resource answers "the server could not find the requested resource"; a missing
    object names itself (``certifications.nvcre.nvidia.com "x" not found``)."""
    unserved = kube_errors.from_exception(_api_exception(404, "NotFound", kube_errors.UNSERVED_MESSAGE))
    missing = kube_errors.from_exception(
        _api_exception(404, "NotFound", 'certifications.nvcre.nvidia.com "x" not found')
    )
    assert isinstance(unserved, kube_errors.UnservedResource) and unserved.exit_code == 3
    assert type(missing) is errors.NotFound
