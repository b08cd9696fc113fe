"""API errors as the real API server reports them: a ``Status`` object with code and reason.

Clients branch on ``code`` and ``reason`` (the kubernetes client raises ``ApiException`` with the
status; kubectl prints ``Error from server (Reason): message``), so every refusal the emulator
makes goes through :class:`ApiError` and leaves the server as one of these bodies.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A refusal with an HTTP status, a machine reason and a human message."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        """The ``Status`` body, shaped as ``metav1.Status``."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def qualified(plural: str, group: str) -> str:
    """``pods`` or ``certifications.nvcre.nvidia.com``: how the server names a resource in messages."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{qualified(plural, group)} "{name}" not found',
        details={"name": name, "group": group, "kind": plural},
    )


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified(plural, group)} "{name}" already exists',
        details={"name": name, "group": group, "kind": plural},
    )


def conflict(plural: str, group: str, name: str, why: str | None = None) -> ApiError:
    text = why or ("the object has been modified; please apply your changes to the latest version and try again")
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {text}',
        details={"name": name, "group": group, "kind": plural},
    )


def invalid(kind: str, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """422 with one cause per bad field, as ``field: message`` pairs."""
    text = "; ".join(f"{field}: {why}" for field, why in causes)
    return ApiError(
        422,
        "Invalid",
        f'{kind} "{name}" is invalid: {text}',
        details={
            "name": name,
            "kind": kind,
            "causes": [{"field": f, "message": m, "reason": "FieldValueInvalid"} for f, m in causes],
        },
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)
