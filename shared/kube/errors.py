"""API failures → the project's error classes, in one function.

Callers branch on our classes, never on HTTP statuses: 401/403 are ``Unauthorized``, 404
``NotFound`` (``UnservedResource`` when the type itself is not served), 400/413/415/422 and an
existing name are ``InvalidInput``, 429, 5xx and broken connections are ``Unavailable``,
client-side timeouts are ``Timeout``. Three situations a controller retries get their own
subclasses (``Conflict``, ``Throttled``, ``ServerError``, ``ConnectionFailed``); if one escapes the
retry helper it still has the right exit status, because it *is* an ``Unavailable``. An error that
already has a class is returned unchanged, never wrapped again.
"""

from __future__ import annotations

import json
from typing import Any

from shared import errors, logs


class Conflict(errors.Unavailable):
    """409: the object changed since it was read (or a precondition failed); re-read and retry."""


class Throttled(errors.Unavailable):
    """429: the server asked us to slow down, for ``retry_after`` seconds when it said so."""

    def __init__(self, message: str, *, where: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, where=where)
        self.retry_after = retry_after


class ServerError(errors.Unavailable):
    """5xx: the server failed this time; the same request may succeed later."""

    def __init__(self, message: str, *, where: str | None = None, status: int = 500) -> None:
        super().__init__(message, where=where)
        self.status = status


class ConnectionFailed(errors.Unavailable):
    """The connection failed or broke before an answer."""


class Expired(errors.Unavailable):
    """410: a watch or continue token is too old; list again and start over."""


class AlreadyExists(errors.InvalidInput):
    """409 AlreadyExists: a create for a name that is taken."""


class UnservedResource(errors.NotFound):
    """404 for the resource type itself, not one object: the server serves no such type (its CRD
    is not installed, or its API group is off). Callers that know which CRD it is say so
    (``shared.certify.resource.crd_required``); it stays a ``NotFound`` (exit 3) either way."""


UNSERVED_MESSAGE = "the server could not find the requested resource"
"""The message of a 404 for a path no handler serves (apimachinery ``pkg/api/errors/errors.go``,
``NewGenericServerResponse`` for 404; what the aggregator's NotFound handler answers for a group or
resource that is not registered). A missing object's 404 names the object instead."""


RETRYABLE: tuple[type[errors.ToolError], ...] = (Conflict, Throttled, ServerError, ConnectionFailed)


def _status_body(exc: Any) -> tuple[str, str]:
    """(reason, message) from a Status body, falling back to the HTTP reason phrase."""
    body = getattr(exc, "body", None)
    reason, message = str(getattr(exc, "reason", "") or ""), ""
    if body:
        try:
            data = json.loads(body)
        except (TypeError, ValueError):
            data = None
        if isinstance(data, dict):
            reason = str(data.get("reason") or reason)
            message = str(data.get("message") or "")
    return reason, logs.redact(message or reason or "request failed")


def _retry_after(exc: Any) -> float | None:
    headers = getattr(exc, "headers", None) or {}
    try:
        value = headers.get("Retry-After")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


_BY_STATUS: dict[int, type[errors.ToolError]] = {
    0: ConnectionFailed,  # the client's status when no answer came
    400: errors.InvalidInput,
    401: errors.Unauthorized,
    403: errors.Unauthorized,
    404: errors.NotFound,
    410: Expired,
    413: errors.InvalidInput,
    415: errors.InvalidInput,
    422: errors.InvalidInput,
}
"""The statuses whose class takes the message alone (409, 429 and 5xx carry more)."""


def from_status(
    status: int, reason: str, message: str, *, where: str | None = None, retry_after: float | None = None
) -> errors.ToolError:
    """The error class for one HTTP status and Status reason."""
    if status == 409:
        return (AlreadyExists if reason == "AlreadyExists" else Conflict)(message, where=where)
    if status == 429:
        return Throttled(message, where=where, retry_after=retry_after)
    if status >= 500:
        return ServerError(f"server error {status}: {message}", where=where, status=status)
    if status == 404 and message.startswith(UNSERVED_MESSAGE):
        return UnservedResource(message, where=where)
    kind = _BY_STATUS.get(status)
    if kind is None:
        return errors.Internal(f"unexpected API status {status}: {message}", where=where)
    return kind(message, where=where)


def from_exception(exc: BaseException, *, where: str | None = None) -> errors.ToolError:
    """Map anything the kubernetes client or urllib3 raises; ToolErrors pass through unchanged."""
    if isinstance(exc, errors.ToolError):
        return exc
    from kubernetes.client.exceptions import ApiException

    if isinstance(exc, ApiException):
        reason, message = _status_body(exc)
        return from_status(int(exc.status or 0), reason, message, where=where, retry_after=_retry_after(exc))
    return _from_transport(exc, where=where)


def _from_transport(exc: BaseException, *, where: str | None) -> errors.ToolError:
    """A failure without an HTTP answer: refused or broken connections, timeouts; else ``Internal``."""
    from urllib3 import exceptions as http

    if isinstance(exc, http.MaxRetryError) and exc.reason is not None:
        return from_exception(exc.reason, where=where)
    if isinstance(exc, http.NewConnectionError):  # a subclass of ConnectTimeoutError, but a refusal
        return ConnectionFailed(f"cannot reach the API server: {logs.redact(str(exc))}", where=where)
    if isinstance(exc, http.TimeoutError | TimeoutError):
        return errors.Timeout(f"the API server did not answer in time: {type(exc).__name__}", where=where)
    if isinstance(exc, http.HTTPError | ConnectionError | OSError):
        return ConnectionFailed(f"cannot reach the API server: {logs.redact(str(exc))}", where=where)
    return errors.Internal(f"{type(exc).__name__}: {logs.redact(str(exc))}", where=where)
