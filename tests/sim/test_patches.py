"""Patch functions: RFC 7386 merge, RFC 6902 JSON patch, strategic merge.

Covers: merge patch laws (property: the patch of a diff reproduces the target; patching with {}
changes nothing; inputs are never mutated); JSON patch operations and their failures (property:
add then remove restores the document); strategic merge by key, as sets, with $patch directives,
and replacing lists without a strategy.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.sim.apiserver import patches

_scalar = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans())
_doc = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3)
    ),
    max_leaves=10,
)
_obj = st.dictionaries(st.text("abcd", min_size=1, max_size=2), _doc, max_size=4)


def _diff(source: Any, target: Any) -> Any:
    """A merge patch turning ``source`` into ``target`` (None values are not in our data)."""
    if not isinstance(source, dict) or not isinstance(target, dict):
        return target
    out: dict[str, Any] = {k: None for k in source if k not in target}
    for key, value in target.items():
        if key not in source:
            out[key] = value
        elif source[key] != value:
            out[key] = _diff(source[key], value)
    return out


@given(_obj, _obj)
def test_a_merge_patch_of_a_diff_reproduces_the_target(source: dict[str, Any], target: dict[str, Any]) -> None:
    before = copy.deepcopy(source)
    assert patches.merge_patch(source, _diff(source, target)) == target
    assert source == before


@given(_obj)
def test_an_empty_merge_patch_changes_nothing(doc: dict[str, Any]) -> None:
    assert patches.merge_patch(doc, {}) == doc
    assert patches.strategic_merge(doc, {}) == doc


@given(_obj, st.text("xyz", min_size=1, max_size=3), _doc)
def test_json_patch_add_then_remove_restores_the_document(doc: dict[str, Any], key: str, value: Any) -> None:
    if key in doc:
        return
    added = patches.json_patch(doc, [{"op": "add", "path": f"/{key}", "value": value}])
    assert added[key] == value
    assert patches.json_patch(added, [{"op": "remove", "path": f"/{key}"}]) == doc


def test_json_patch_supports_every_operation() -> None:
    doc = {"a": {"b": [1, 2]}, "c": 1}
    out = patches.json_patch(
        doc,
        [
            {"op": "add", "path": "/a/b/-", "value": 3},
            {"op": "replace", "path": "/c", "value": 2},
            {"op": "copy", "from": "/a/b", "path": "/d"},
            {"op": "move", "from": "/c", "path": "/e"},
            {"op": "test", "path": "/e", "value": 2},
            {"op": "add", "path": "/a~1x", "value": 0},
        ],
    )
    assert out == {"a": {"b": [1, 2, 3]}, "d": [1, 2, 3], "e": 2, "a/x": 0}
    assert doc == {"a": {"b": [1, 2]}, "c": 1}


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/x/y", "value": 1}],
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "add", "path": "/l/9", "value": 1}],
        [{"op": "jump", "path": "/a"}],
        {"op": "add"},
        [{"op": "add", "path": "a", "value": 1}],
    ],
    ids=[
        "remove-missing",
        "replace-missing",
        "test-fails",
        "index-out-of-range",
        "unknown-op",
        "not-a-list",
        "bad-pointer",
    ],
)
def test_json_patch_failures_raise(ops: Any) -> None:
    with pytest.raises(patches.PatchError):
        patches.json_patch({"a": 1, "l": []}, ops)


def test_strategic_merge_merges_keyed_lists_and_deletes_by_directive() -> None:
    live = {
        "spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    patch = {
        "spec": {
            "containers": [{"name": "b", "image": "2"}, {"name": "a", "$patch": "delete"}, {"name": "c", "image": "3"}]
        },
        "status": {"conditions": [{"type": "GpuHealthy", "status": "False"}]},
    }
    out = patches.strategic_merge(live, patch)
    assert out["spec"]["containers"] == [{"name": "b", "image": "2"}, {"name": "c", "image": "3"}]
    assert [c["type"] for c in out["status"]["conditions"]] == ["Ready", "GpuHealthy"]


def test_strategic_merge_replaces_lists_without_a_strategy() -> None:
    live = {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}], "tolerations": [{"key": "x"}]}}
    out = patches.strategic_merge(live, {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}], "tolerations": []}})
    assert out == {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}], "tolerations": []}}


def test_strategic_merge_treats_finalizers_as_a_set_and_can_delete_from_it() -> None:
    live = {"metadata": {"finalizers": ["a", "b"]}}
    assert patches.strategic_merge(live, {"metadata": {"finalizers": ["b", "c"]}})["metadata"]["finalizers"] == [
        "a",
        "b",
        "c",
    ]
    removed = patches.strategic_merge(live, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert removed["metadata"]["finalizers"] == ["b"]


def test_strategic_merge_replace_and_retain_directives() -> None:
    live = {"spec": {"a": 1, "b": {"c": 1, "d": 2}}}
    assert patches.strategic_merge(live, {"spec": {"b": {"$patch": "replace", "e": 3}}}) == {
        "spec": {"a": 1, "b": {"e": 3}}
    }
    assert patches.strategic_merge(live, {"spec": {"$retainKeys": ["b"], "b": {"c": 5}}}) == {
        "spec": {"b": {"c": 5, "d": 2}}
    }


def test_strategic_merge_ignores_set_element_order_directives() -> None:
    live = {"spec": {"containers": [{"name": "a"}]}}
    out = patches.strategic_merge(
        live, {"spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [{"name": "a", "image": "x"}]}}
    )
    assert out == {"spec": {"containers": [{"name": "a", "image": "x"}]}}
