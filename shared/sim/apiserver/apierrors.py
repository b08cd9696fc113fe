"""API errors as the real API server reports them: a ``Status`` object with code and reason.

Clients branch on ``code`` and ``reason`` (the kubernetes client raises ``ApiException`` with the
status; kubectl prints ``Error from server (Reason): message``), so every refusal the emulator
makes goes through :class:`ApiError` and leaves the server as one of these bodies.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class FieldError:
    """One cause of a 422, printed as apimachinery's ``field.Error`` prints it.

    ``type`` is the cause reason clients read (``FieldValueRequired`` ...); ``body`` is the text
    after ``<field>: `` (``Required value``, ``Invalid value: 0: must be ...``). Build these with the
    functions below rather than by hand, so every 422 the emulator sends reads like the real one
    (apimachinery:pkg/util/validation/field/errors.go).
    """

    field: str
    type: str
    body: str

    def text(self) -> str:
        return f"{self.field}: {self.body}" if self.field else self.body

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body, "field": self.field}


def show(value: Any) -> str:
    """A bad value as the 1.34 server prints it: strings quoted, numbers and booleans bare,
    anything else as compact JSON (older servers printed Go syntax here)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, "FieldValueRequired", f"Required value: {detail}" if detail else "Required value")


def invalid_value(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, "FieldValueInvalid", f"Invalid value: {show(value)}: {detail}")


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, "FieldValueTypeInvalid", f"Invalid value: {show(value)}: {detail}")


def not_supported(field: str, value: Any, supported: Iterable[Any]) -> FieldError:
    allowed = ", ".join(show(v) for v in supported)
    return FieldError(field, "FieldValueNotSupported", f"Unsupported value: {show(value)}: supported values: {allowed}")


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, "FieldValueForbidden", f"Forbidden: {detail}")


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(field, "FieldValueDuplicate", f"Duplicate value: {show(value)}")


def too_long(field: str, limit: int) -> FieldError:
    return FieldError(field, "FieldValueTooLong", f"Too long: may not be more than {limit} bytes")


def too_many(field: str, actual: int, limit: int) -> FieldError:
    return FieldError(field, "FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items")


def field_not_found(field: str, value: Any) -> FieldError:
    return FieldError(field, "FieldValueNotFound", f"Not found: {show(value)}")


def internal(field: str, detail: str) -> FieldError:
    return FieldError(field, "InternalError", f"Internal error: {detail}")


_BODY_TYPES = (
    ("Required value", "FieldValueRequired"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Forbidden", "FieldValueForbidden"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
    ("Not found", "FieldValueNotFound"),
    ("Internal error", "InternalError"),
)


def _as_field_error(cause: FieldError | tuple[str, str]) -> FieldError:
    if isinstance(cause, FieldError):
        return cause
    field, body = cause
    kind = next((t for prefix, t in _BODY_TYPES if body.startswith(prefix)), "FieldValueInvalid")
    return FieldError(field, kind, body)


def invalid(kind: str, name: str, causes: Sequence[FieldError | tuple[str, str]], *, group: str = "") -> ApiError:
    """422 ``Invalid``: ``<Kind>[.<group>] "<name>" is invalid: <errors>``, one cause per error.

    One error prints bare, several as ``[e1, e2]`` with repeats removed
    (apimachinery:pkg/api/errors/errors.go ``NewInvalid``, pkg/util/errors ``NewAggregate``).
    ``(field, body)`` pairs are accepted and typed by the body's leading words.
    """
    errors = [_as_field_error(c) for c in causes]
    texts = list(dict.fromkeys(e.text() for e in errors))
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified_kind = f"{kind}.{group}" if group else kind
    return ApiError(
        422,
        "Invalid",
        f'{qualified_kind} "{name}" is invalid: {text}',
        details={"name": name, "group": group, "kind": kind, "causes": [e.cause() for e in errors]},
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)
