"""The one deep merge (shared/merge.py): Helm's ``mergeMaps`` rules, and nothing shared or changed.

Covers: maps merge key by key at any depth; a list, a scalar or null in the upper layer replaces
whatever was below (null does not delete); a map replaces a scalar and a scalar a map; key order
(the lower layer's keys, then the new ones); the example that shows the merge is not associative.
Properties over random value trees: merging with an empty map on either side gives the other;
a tree merged over itself is itself; every key of either layer is in the result and each value
follows the rule for its key; neither argument changes, and the result shares no dict or list with
them, so changing it leaves both alone. The expected values of the examples are what helm 3.19
gives for ``helm template -f base.yaml -f over.yaml`` with ``{{ toJson .Values }}`` (maps and
lists as written, ``pkg/cli/values/options.go`` ``mergeMaps``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import merge

KEYS = st.sampled_from(["a", "b", "c", "d"])
LEAVES = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3)
TREES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
MAPS = st.dictionaries(KEYS, TREES, max_size=4)


@pytest.mark.parametrize(
    ("base", "over", "expected"),
    [
        ({"a": {"b": 1, "c": 2}}, {"a": {"c": 3, "d": 4}}, {"a": {"b": 1, "c": 3, "d": 4}}),
        ({"a": {"b": {"c": 1, "d": 2}}}, {"a": {"b": {"d": 3}}}, {"a": {"b": {"c": 1, "d": 3}}}),
        ({"l": [1, 2, 3]}, {"l": [9]}, {"l": [9]}),
        ({"l": [{"x": 1}]}, {"l": [{"y": 2}]}, {"l": [{"y": 2}]}),
        ({"a": {"b": 1}}, {"a": None}, {"a": None}),
        ({"a": 1, "b": 2}, {"a": None}, {"a": None, "b": 2}),
        ({"a": {"b": 1}}, {"a": "text"}, {"a": "text"}),
        ({"a": "text"}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": None}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({}, {"a": {"b": None}}, {"a": {"b": None}}),
    ],
    ids=[
        "maps-merge-key-by-key",
        "nested-maps-merge-at-depth",
        "a-list-replaces-a-list",
        "lists-of-maps-are-not-merged-item-by-item",
        "null-replaces-a-map",
        "null-replaces-and-does-not-delete",
        "a-scalar-replaces-a-map",
        "a-map-replaces-a-scalar",
        "a-map-replaces-null",
        "null-is-kept-where-nothing-was-below",
    ],
)
def test_merge_follows_helms_values_file_rules(base: dict[str, Any], over: dict[str, Any], expected: Any) -> None:
    assert merge.deep_merge(base, over) == expected


def test_the_lower_layers_keys_come_first_in_their_order_then_the_new_ones() -> None:
    merged = merge.deep_merge({"z": 1, "a": {"y": 1, "b": 2}}, {"c": 3, "a": {"a": 1, "y": 0}, "z": 9})
    assert list(merged) == ["z", "a", "c"]
    assert list(merged["a"]) == ["y", "b", "a"]


def test_layers_are_applied_in_order_because_the_merge_is_not_associative() -> None:
    low, middle, top = {"k": {"x": 1}}, {"k": 1}, {"k": {"y": 2}}
    assert merge.deep_merge(merge.deep_merge(low, middle), top) == {"k": {"y": 2}}
    assert merge.deep_merge(low, merge.deep_merge(middle, top)) == {"k": {"x": 1, "y": 2}}


@given(MAPS)
def test_an_empty_layer_on_either_side_gives_the_other(tree: dict[str, Any]) -> None:
    assert merge.deep_merge(tree, {}) == tree
    assert merge.deep_merge({}, tree) == tree


@given(MAPS)
def test_a_tree_merged_over_itself_is_itself(tree: dict[str, Any]) -> None:
    assert merge.deep_merge(tree, tree) == tree


@given(MAPS, MAPS)
def test_each_key_follows_the_rule_for_its_pair_of_values(base: dict[str, Any], over: dict[str, Any]) -> None:
    merged = merge.deep_merge(base, over)
    assert set(merged) == set(base) | set(over)
    for key, value in merged.items():
        if key not in over:
            assert value == base[key]
        elif isinstance(base.get(key), dict) and isinstance(over[key], dict):
            assert value == merge.deep_merge(base[key], over[key])
        else:
            assert value == over[key]


def _containers(tree: Any) -> list[Any]:
    found = []
    if isinstance(tree, dict | list):
        found.append(tree)
        for item in tree.values() if isinstance(tree, dict) else tree:
            found.extend(_containers(item))
    return found


@given(MAPS, MAPS)
def test_neither_layer_changes_and_the_result_shares_no_container(base: dict[str, Any], over: dict[str, Any]) -> None:
    before = copy.deepcopy((base, over))
    merged = merge.deep_merge(base, over)
    assert (base, over) == before
    inputs = {id(c) for c in _containers(base) + _containers(over)}
    assert not inputs & {id(c) for c in _containers(merged)}
