"""What the operators' admission webhooks share: how a denial reads, and the base every webhook extends.

A controller-runtime webhook that returns a plain error answers ``admission.Denied(err.Error())``
(403, reason Forbidden); the API server then prefixes the webhook's name
(apiserver:pkg/admission/plugin/webhook/errors ``ToStatusErr``), so a client reads
``admission webhook "vjobset.kb.io" denied the request: <message>``. An ``errors.Join`` of several
errors prints one per line; a ``field.ErrorList`` aggregate prints ``[e1, e2]`` for several.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors, resources


def deny(webhook: str, message: str) -> apierrors.ApiError:
    return apierrors.ApiError(403, "Forbidden", f'admission webhook "{webhook}" denied the request: {message}')


def aggregate(errors: list[apierrors.FieldError]) -> str:
    """``field.ErrorList.ToAggregate().Error()``: one error bare, several in brackets, repeats dropped."""
    texts = list(dict.fromkeys(e.text() for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


class Webhook:
    """A mutating and validating webhook pair for one resource; subclasses override what they do."""

    group_resource: tuple[str, str] = ("", "")

    def mutate(self, r: resources.Resource, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if r.group_resource == self.group_resource:
            self.default(obj, old)

    def validate(self, r: resources.Resource, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if r.group_resource == self.group_resource:
            self.check(obj, old)

    def default(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Fill defaults in place (the mutating webhook)."""

    def check(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Raise a :func:`deny` error for a refused object (the validating webhook)."""
