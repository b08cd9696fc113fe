"""Admission webhooks the simulated operators register on the API (``Api.webhooks``).

A real API server calls MutatingAdmissionWebhook after decoding and ValidatingAdmissionWebhook
after the object passed its schema, on create and update of the main resource and never on a
subresource; the simulator calls these Python hooks at the same points.
"""

from __future__ import annotations

from typing import Any, Protocol

from shared.sim.apiserver import resources


class Webhook(Protocol):
    """An admission webhook an operator registers (``Api.webhooks``), called on create and update of
    the main resource, never of a subresource: ``mutate`` after decoding (MutatingAdmissionWebhook),
    ``validate`` after the object passed its schema (ValidatingAdmissionWebhook). Either raises an
    :class:`ApiError` to deny the request; ``old`` is None on create."""

    def mutate(self, r: resources.Resource, obj: dict[str, Any], old: dict[str, Any] | None) -> None: ...

    def validate(self, r: resources.Resource, obj: dict[str, Any], old: dict[str, Any] | None) -> None: ...
