"""Criteria: parsing with aliases, the closed vocabularies, matching, criteria files.

Property tests: any string either parses to a canonical allowed value or is refused with an error
listing the allowed values; matching is reflexive for fully specified criteria and a wildcard
overlay matches every query.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import errors
from shared.recipe import criteria
from shared.recipe.vocabulary import FIELDS, allowed_values


@pytest.mark.parametrize(
    ("field", "raw", "expected"),
    [
        ("service", "EKS", "eks"),
        ("service", " self-managed ", "any"),
        ("service", "vanilla", "any"),
        ("os", "al2023", "amazonlinux"),
        ("os", "al2", "amazonlinux"),
        ("accelerator", "GB200", "gb200"),
        ("intent", "", "any"),
    ],
    ids=["upper-case", "self-managed-alias", "vanilla-alias", "al2023-alias", "al2-alias", "gb200", "empty"],
)
def test_values_are_canonicalised(field: str, raw: str, expected: str) -> None:
    assert criteria.parse_value(field, raw) == expected


def test_unknown_value_lists_the_allowed_ones() -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        criteria.parse_value("accelerator", "h300", where="--accelerator")
    assert caught.value.message == "invalid accelerator 'h300': allowed values are a100, b200, gb200, h100, l40"
    assert caught.value.where == "--accelerator"


@given(field=st.sampled_from(sorted(FIELDS)), raw=st.text(max_size=12))
def test_any_string_parses_to_an_allowed_value_or_is_refused(field: str, raw: str) -> None:
    try:
        value = criteria.parse_value(field, raw)
    except errors.InvalidInput as exc:
        assert ", ".join(allowed_values(field)) in exc.message
    else:
        assert value == "any" or value in allowed_values(field)


@pytest.mark.parametrize("raw", [-1, "-3", "many", True, 2.5])
def test_bad_node_counts_are_refused(raw: object) -> None:
    with pytest.raises(errors.InvalidInput):
        criteria.parse_nodes(raw)


_specific = st.builds(
    lambda s, a, i, o, p: criteria.Criteria(service=s, accelerator=a, intent=i, os=o, platform=p),
    *[st.sampled_from(allowed_values(f)) for f in ("service", "accelerator", "intent", "os", "platform")],
)


@given(query=_specific)
def test_a_wildcard_overlay_matches_every_query_and_a_full_one_matches_itself(query: criteria.Criteria) -> None:
    assert criteria.Criteria().matches(query)
    assert query.matches(query)


def test_an_overlay_value_never_matches_a_query_wildcard() -> None:
    overlay = criteria.Criteria(service="gke", os="cos")
    assert not overlay.matches(criteria.Criteria(service="gke", accelerator="h100"))
    assert overlay.matches(criteria.Criteria(service="gke", os="cos", intent="training"))


def test_nodes_in_an_overlay_require_the_same_count() -> None:
    overlay = criteria.Criteria(service="eks", nodes=8)
    assert overlay.matches(criteria.Criteria(service="eks", nodes=8))
    assert not overlay.matches(criteria.Criteria(service="eks"))


def test_specificity_counts_only_set_fields() -> None:
    assert criteria.Criteria().specificity() == 0
    assert criteria.Criteria(intent="training", nodes=4).specificity() == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("kind: Nope\nspec: {service: eks}\n", "invalid kind 'Nope'"),
        ("apiVersion: v9\nkind: RecipeCriteria\nspec: {service: eks}\n", "invalid apiVersion 'v9'"),
        ("kind: RecipeCriteria\nspec:\n  service: eks\n  gpu: h100\n", "unknown criteria field 'gpu'"),
        ("- a\n- b\n", "expected a RecipeCriteria mapping"),
        # keys YAML reads as null, numbers and booleans (a bare ':' is a null key)
        (":\n", "unknown criteria field 'null'"),
        ("service: eks\n1: a\n", "unknown criteria field '1'"),
        ("true: 1\nservice: eks\n", "unknown criteria field 'true'"),
        ("kind: RecipeCriteria\nspec: {}\n3: x\n~: y\n", "unknown field '3'"),
    ],
    ids=["kind", "apiVersion", "unknown-field", "not-a-mapping", "null-key", "number-key", "bool-key", "mixed-keys"],
)
def test_bad_criteria_files_are_refused_naming_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "criteria.yaml"
    path.write_text(content)
    with pytest.raises(errors.InvalidInput) as caught:
        criteria.load_criteria_file(path)
    assert message in caught.value.message
    assert str(path) in (caught.value.where or "")


def test_criteria_file_errors_carry_the_line(tmp_path: Path) -> None:
    path = tmp_path / "criteria.yaml"
    path.write_text("kind: RecipeCriteria\nspec:\n  service: eks\n  os: windows\n")
    with pytest.raises(errors.InvalidInput) as caught:
        criteria.load_criteria_file(path)
    assert caught.value.where == f"{path}:4 spec.os"


def test_a_bare_criteria_map_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "criteria.json"
    path.write_text('{"service": "aks", "accelerator": "h100", "nodes": 8}')
    assert criteria.load_criteria_file(path) == criteria.Criteria(service="aks", accelerator="h100", nodes=8)
