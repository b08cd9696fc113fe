"""YAML reading and writing: errors name file and line; dumped values are inert data; limits hold.

Property tests: any tree of strings, numbers, booleans and nulls dumps to YAML that parses back to the
same tree, so a value can never turn into structure, an anchor or a second document; any malformed
YAML is either read or refused with one InvalidInput line naming the source (never another
exception); a document of anchors and aliases is refused exactly when a go-yaml decode would be
(checked against a model of go-yaml's decoder walk, node by node).
Limits: an alias bomb is refused with little memory, a self-containing anchor and nesting past
MAX_NESTING (flow and block) are refused at their line, values the constructor cannot build are
errors at their line, files are read through shared.files (UTF-8, size).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import errors, files, yamlio

INPUTS = settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
"""The profile of the input-layer properties: no deadline, so a busy machine never fails them."""

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


# --- limits: aliases ----------------------------------------------------------------------------


def _laughs(levels: int, width: int = 9) -> str:
    """The "billion laughs": each level lists the one before ``width`` times."""
    text = "l0: &l0 [" + ",".join(["lol"] * width) + "]\n"
    for level in range(1, levels + 1):
        text += f"l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * width) + "]\n"
    return text


def test_an_alias_bomb_is_refused_unexpanded_with_little_memory() -> None:
    bomb = _laughs(9)
    assert len(bomb) < 500  # a billion (9**9 + …) "lol"s
    tracemalloc.start()
    try:
        with pytest.raises(errors.InvalidInput) as caught:
            yamlio.loads(bomb, source="bomb.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.message == "invalid YAML: document contains excessive aliasing"
    assert caught.value.where == "bomb.yaml:4"  # 9**3 laughs pass go-yaml's floor of 1,000 nodes
    assert peak < 4 * 1024 * 1024


def test_a_modest_use_of_anchors_is_read() -> None:
    text = "".join(f"d{i}: &d{i} {{x: 1, y: 2}}\n" for i in range(50))
    text += "".join(f"u{i}: [{', '.join([f'*d{i}'] * 10)}]\n" for i in range(50))
    data = yamlio.loads(text)
    assert data["u49"] == [{"x": 1, "y": 2}] * 10


@pytest.mark.parametrize("text", ["&a [*a]", "a: &a {b: [1, *a]}", "- &a\n  - *a\n"], ids=["flow", "mapping", "block"])
def test_an_anchor_that_contains_itself_is_refused(text: str) -> None:
    with pytest.raises(errors.InvalidInput, match="invalid YAML: anchor 'a' value contains itself"):
        yamlio.loads(text)


def test_a_reused_anchor_name_refers_to_its_latest_value_quietly() -> None:
    # go-yaml lets a later anchor take the name over; ruamel would warn (an error under pytest).
    assert yamlio.loads("a: &x 1\nb: &x 2\nc: *x\n") == {"a": 1, "b": 2, "c": 2}
    assert yamlio.loads("- &a [&a 1, *a]\n") == [[1, 1]]


@pytest.mark.parametrize(
    ("decoded", "ratio"),
    [(0, 0.99), (400_000, 0.99), (2_200_000, 0.545), (4_000_000, 0.10), (9_000_000, 0.10)],
)
def test_the_allowed_ratio_is_go_yamls(decoded: int, ratio: float) -> None:
    """gopkg.in/yaml.v3 decode.go ``allowedAliasRatio`` (the same in yaml.v2 since v2.2.8)."""
    assert yamlio.allowed_alias_ratio(decoded) == pytest.approx(ratio)


def test_the_budget_refuses_only_past_go_yamls_floor_of_1000_decoded_nodes() -> None:
    """decode.go: ``aliasCount > 100 && decodeCount > 1000 && ratio > allowedAliasRatio(decodeCount)``."""
    budget = yamlio.AliasBudget()  # the document node: 1
    assert not budget.visit() and not budget.visit() and not budget.visit()  # 4
    assert not budget.expand(995)  # an alias node and its 995: 1,000 decoded, 99.5% aliased
    assert budget.visit()  # 1,001 decoded, 99.4% aliased
    lenient = yamlio.AliasBudget()
    lenient.decoded, lenient.aliased = 2000, 1970  # 98.5%: within the ratio
    assert not lenient.excessive()


class _Excessive(Exception):
    pass


def _tree(text: str) -> list[Any]:
    """The document as go-yaml's nodes: ``["node", children]`` and ``["alias", anchored node]``."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, ScalarEvent

    document: list[Any] = ["node", []]
    open_nodes = [document]
    anchors: dict[str, Any] = {}
    for event in YAML(typ="safe", pure=True).parse(text):
        if isinstance(event, AliasEvent):
            open_nodes[-1][1].append(["alias", anchors[event.anchor]])
        elif isinstance(event, ScalarEvent | CollectionStartEvent):
            node: list[Any] = ["node", []]
            open_nodes[-1][1].append(node)
            if event.anchor is not None:
                anchors[event.anchor] = node
            if isinstance(event, CollectionStartEvent):
                open_nodes.append(node)
        elif isinstance(event, CollectionEndEvent):
            open_nodes.pop()
    return document


def _go_yaml_refuses(text: str) -> bool:
    """A model of go-yaml's ``decoder.unmarshal`` walk: aliases expanded in place, the check at every node."""
    counts = {"decoded": 0, "aliased": 0}

    def unmarshal(node: list[Any], depth: int) -> None:
        counts["decoded"] += 1
        counts["aliased"] += depth > 0
        d, a = counts["decoded"], counts["aliased"]
        if a > 100 and d > 1000 and a / d > yamlio.allowed_alias_ratio(d):
            raise _Excessive
        if node[0] == "alias":
            unmarshal(node[1], depth + 1)
        else:
            for child in node[1]:
                unmarshal(child, depth)

    try:
        unmarshal(_tree(text), 0)
    except _Excessive:
        return True
    return False


@st.composite
def _anchored_documents(draw: st.DrawFn) -> str:
    """Padding, a chain of anchored lists each listing scalars and earlier anchors, then their uses:
    around go-yaml's floors (100 aliased of 1,000 decoded) and its 99% ratio on either side."""
    pad = draw(st.sampled_from([0, 1, 10, 100, 1000]) | st.integers(0, 1500))
    lines = [f"pad: [{', '.join(['p'] * pad)}]"]
    count = draw(st.integers(1, 6))
    for index in range(count):
        earlier = st.just(index - 1) | st.integers(-1, index - 1)
        items = draw(st.lists(earlier, min_size=1, max_size=10) | st.lists(st.just(index - 1), min_size=6, max_size=10))
        lines.append(f"d{index}: &a{index} [{', '.join('s' if i < 0 else f'*a{i}' for i in items)}]")
    uses = draw(st.lists(st.integers(0, count - 1), max_size=60))
    lines.append(f"use: [{', '.join(f'*a{u}' for u in uses)}]")
    return "\n".join(lines) + "\n"


@settings(INPUTS, max_examples=150)
@given(text=_anchored_documents())
def test_aliases_are_refused_exactly_when_go_yaml_refuses(text: str) -> None:
    try:
        yamlio.loads(text)
        refused = False
    except errors.InvalidInput as exc:
        assert exc.message == "invalid YAML: document contains excessive aliasing"
        refused = True
    assert refused == _go_yaml_refuses(text)


# --- limits: nesting ----------------------------------------------------------------------------


def _flow(depth: int) -> str:
    return "[" * depth + "]" * depth


def _block(depth: int) -> str:
    """``depth - 1`` mappings, the last holding a flow sequence, one line each."""
    return "".join("  " * level + "a:\n" for level in range(depth - 2)) + "  " * (depth - 2) + "a: [1]\n"


@pytest.mark.parametrize("shape", [_flow, _block], ids=["flow", "block"])
def test_nesting_to_the_limit_is_read_and_one_more_level_is_refused_at_its_line(shape: Any) -> None:
    data = yamlio.loads(shape(files.MAX_NESTING))
    assert files.nesting(data) == files.MAX_NESTING
    with pytest.raises(errors.InvalidInput) as caught:
        yamlio.loads(shape(files.MAX_NESTING + 1), source="deep.yaml")
    assert caught.value.message == f"invalid YAML: nested deeper than {files.MAX_NESTING} levels"
    expected_line = 1 if shape is _flow else files.MAX_NESTING  # the sequence on the last line
    assert caught.value.where == f"deep.yaml:{expected_line}"


@pytest.mark.parametrize("loader", [yamlio.loads, yamlio.loads_all, yamlio.load_roundtrip])
def test_every_loader_refuses_a_hundred_thousand_open_brackets(loader: Any) -> None:
    with pytest.raises(errors.InvalidInput, match="nested deeper than"):
        loader(_flow(100_000))


# --- values the constructor cannot build --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: 1\nday: 2020-02-30\n",
            "invalid YAML: cannot read '2020-02-30' as timestamp: day is out of range for month",
        ),
        ("n: !!int abc\n", "invalid YAML: cannot read 'abc' as int: invalid literal for int() with base 10: 'abc'"),
        ("b: !!bool maybe\n", "invalid YAML: cannot read 'maybe' as bool: 'maybe'"),
        ("f: !!float x\n", "invalid YAML: cannot read 'x' as float: could not convert string to float: 'x'"),
    ],
    ids=["impossible-date", "int", "bool", "float"],
)
def test_a_value_the_constructor_cannot_build_is_an_error_at_its_line(text: str, message: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        yamlio.loads(text, source="values.yaml")
    assert caught.value.message == message
    assert caught.value.where == f"values.yaml:{text.count(chr(10))}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"a\\nb": 1\n"a\\nb": 2\n', 'invalid YAML: while constructing a mapping found duplicate key "a\\nb" with'),
        (
            "? |\n  x\n: 1\n? |\n  x\n: 2\n",
            'invalid YAML: while constructing a mapping found duplicate key "x\\n" with',
        ),
    ],
    ids=["escaped", "literal-block"],
)
def test_an_error_quoting_a_multi_line_key_stays_one_line(text: str, message: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        yamlio.loads(text)
    assert caught.value.message.startswith(message)
    assert "\n" not in caught.value.line()


# --- files and size -----------------------------------------------------------------------------


def test_load_file_reads_through_the_input_layer(tmp_path: Path) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_bytes(b"kind: RecipeResult\nnote: \xe9t\xe9\n")
    with pytest.raises(errors.InvalidInput) as caught:
        yamlio.load_file(path)
    assert (caught.value.where, caught.value.message) == (
        str(path),
        "not UTF-8 text: byte 0xe9 at offset 25 (line 2)",
    )
    with pytest.raises(errors.InvalidInput, match="is a directory, expected a file"):
        yamlio.load_file(tmp_path)


def test_text_past_the_limit_is_refused_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, "20")
    assert yamlio.loads("a: 1\n") == {"a": 1}
    with pytest.raises(errors.InvalidInput, match="more than the limit of 20 bytes") as caught:
        yamlio.loads("a: [" + "1, " * 10 + "]\n", source="cm://ns/snap snapshot.yaml")
    assert caught.value.where == "cm://ns/snap snapshot.yaml"


# --- any malformed YAML -------------------------------------------------------------------------

_YAML_PIECES = st.sampled_from(
    [
        "a", "b", ":", ": ", " ", "  ", "\n", "- ", "[", "]", "{", "}", ", ", "&a ", "&b ", "*a", "*b", "? ", "|",
        ">", "'", '"', "# c", "---\n", "...\n", "%YAML 1.2\n", "%TAG ! tag:x,2000:\n", "\t", "<<: ", "2020-02-30",
        "0x", "0o9", "~", "!!binary ", "!!timestamp ", "!!bool ", "!!int ", "!!float ", "!!set ", "!!omap ",
        "!!pairs ", "!!map ", "!!seq ", "!!str ", "!x ", "!<tag:yaml.org,2002:int> ", "=", "\\", "\\x", "\u2028",
        "\ufeff", "\x85", "\x00", "\x07", "1e3", ".inf", "12:30:45", "\ud800",
        '"a\\nb": 1\n', "? |\n  x\n: 1\n",
    ]
)  # fmt: skip


@INPUTS
@given(text=st.lists(_YAML_PIECES | st.text(max_size=3), max_size=40).map("".join))
def test_malformed_yaml_is_read_or_refused_in_one_line(text: str) -> None:
    for loader in (yamlio.loads, yamlio.loads_all, yamlio.load_roundtrip):
        try:
            loader(text, source="in.yaml")
        except errors.InvalidInput as exc:
            assert (exc.where or "").startswith("in.yaml")
            assert "\n" not in exc.line() and "\r" not in exc.line()
            assert exc.message.startswith("invalid YAML: ")
