"""Reading the PodDisruptionBudget out of a refused eviction's Status body.

Covers: the body a Kubernetes 1.34 API server answers (429, ``details.causes`` with reason
``DisruptionBudget``) names the budget; a 429 without that cause (throttling) names none; any
JSON at all, or bytes that are not JSON, never make the reader raise.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from shared.kube import evictions

REFUSED = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": "Cannot evict pod as it would violate the pod's disruption budget.",
    "reason": "TooManyRequests",
    "details": {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget db-quorum needs 2 healthy pods and has 2 currently",
            }
        ]
    },
    "code": 429,
}


def test_a_budget_refusal_names_the_budget() -> None:
    assert evictions.budget_refusal(json.dumps(REFUSED)) == (
        "db-quorum",
        "The disruption budget db-quorum needs 2 healthy pods and has 2 currently",
    )


def test_a_budget_not_yet_counted_is_named_too() -> None:
    cause = {
        "reason": "DisruptionBudget",
        "message": "The disruption budget web is still being processed by the server.",
    }
    pending = {**REFUSED, "details": {"causes": [cause]}}
    assert evictions.budget_refusal(json.dumps(pending))[0] == "web"


def test_throttling_names_no_budget() -> None:
    throttled = {**REFUSED, "message": "Too many requests, please try again later.", "details": {}}
    assert evictions.budget_refusal(json.dumps(throttled)) == ("", "")
    assert evictions.budget_refusal(None) == ("", "")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


CAUSE = st.dictionaries(
    st.sampled_from(["reason", "message", "field"]), st.sampled_from(["DisruptionBudget", ""]) | JSON, max_size=3
)
BODIES = st.one_of(
    JSON.map(json.dumps),
    st.binary(max_size=60),
    JSON.map(lambda d: json.dumps({"details": d})),
    st.lists(CAUSE | JSON, max_size=4).map(lambda causes: json.dumps({"details": {"causes": causes}})),
)


@given(BODIES)
def test_any_body_is_read_without_raising(body: Any) -> None:
    budget, message = evictions.budget_refusal(body)
    assert isinstance(budget, str) and isinstance(message, str)
    assert (budget == "") == (message == "")
