"""YAML reading and writing: errors name file and line; dumped values are inert data.

Property test: any tree of strings, numbers, booleans and nulls dumps to YAML that parses back to the
same tree, so a value can never turn into structure, an anchor or a second document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import errors, yamlio

HOSTILE = [
    "say \"hi\" and 'bye'",
    "line one\nline two\n",
    "{{ .Values.secret }}",
    "${HOME}",
    "$(rm -rf /)",
    "---\nkind: Secret",
    "&anchor value",
    "*alias",
    "key: value",
    "- item",
    "# comment",
    "yes",
    "null",
    "0755",
    "1e3",
    " leading space",
    "trailing space ",
    "tab\tinside",
    "...",
    "@at",
    "`tick`",
    "%TAG",
]

_scalars = st.one_of(
    st.text(), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False)
)
_trees = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_strings_round_trip_as_plain_strings(value: str) -> None:
    text = yamlio.dumps({"value": value, "list": [value]})
    assert yamlio.loads(text) == {"value": value, "list": [value]}
    assert len(yamlio.loads_all(text)) == 1


@settings(max_examples=200, deadline=None)
@given(tree=_trees)
def test_any_tree_round_trips(tree: Any) -> None:
    assert yamlio.loads(yamlio.dumps({"root": tree})) == {"root": tree}


def test_parse_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("a: 1\nb: [2, 3\nc: 4\n")
    with pytest.raises(errors.InvalidInput) as caught:
        yamlio.load_file(path)
    assert caught.value.where == f"{path}:2"
    assert caught.value.message.startswith("invalid YAML: ")


def test_duplicate_keys_are_an_error() -> None:
    with pytest.raises(errors.InvalidInput):
        yamlio.loads("a: 1\na: 2\n")


def test_line_of_finds_nested_keys_and_list_items() -> None:
    text = "components:\n  - name: a\n  - name: b\n    helm:\n      repo: x\n"
    assert yamlio.line_of(text, "components[1].helm.repo") == 5
    assert yamlio.line_of(text, "components[1].nope") == 3


def test_round_trip_editing_keeps_comments() -> None:
    text = "# keep me\na: 1  # and me\nb: 2\n"
    data = yamlio.load_roundtrip(text)
    data["b"] = 3
    out = yamlio.dumps_roundtrip(data)
    assert "# keep me" in out and "# and me" in out and "b: 3" in out


def test_a_plain_equals_sign_is_the_string_other_yaml_readers_see() -> None:
    # helm's toYaml writes `a: =` for --set a==; go-yaml reads it back as "=".
    assert yamlio.loads("a: =\nb: [=]\n") == {"a": "=", "b": ["="]}
