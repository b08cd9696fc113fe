"""The libyaml reader of ``yamlio.loads``/``loads_all`` gives exactly what ruamel.yaml's safe loader gives.

Property tests: generated plain data (nested mappings and lists of strings, ints, floats, booleans,
nulls and dates; strings that look like numbers, YAML 1.1 booleans, timestamps, special and
non-ASCII characters, several lines), dumped by ``yamlio.dumps`` and by ruamel.yaml, reads back
the same through both readers, types included (``True`` is not ``1``, ``1`` is not ``1.0``); random
text made of YAML's indicators is either read identically or left to ruamel.yaml, never read by
the fast reader where ruamel.yaml refuses it. Hand-written: the YAML 1.1 and 1.2 differences,
duplicate keys, aliases within the budget, an alias bomb, a self-containing anchor and nesting
past MAX_NESTING (refused with ruamel.yaml's messages), and what the fast reader leaves to ruamel.yaml.
"""

from __future__ import annotations

import datetime
import io
import math
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import errors, files, yamlio

PROPERTIES = settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])


def _ruamel(text: str, *, every: bool = False) -> Any:
    """What ``loads``/``loads_all`` gave before the libyaml reader: ruamel.yaml's safe loader."""
    if every:
        every_document = yamlio._safe_loader().load_all
        return yamlio._parsed(lambda t: [d for d in every_document(t) if d is not None], text, "<input>")
    return yamlio._parsed(lambda t: yamlio._safe_loader().load(t), text, "<input>")


def _outcome(read: Any, text: str) -> Any:
    try:
        return "read", _typed(read(text))
    except errors.InvalidInput as exc:
        return "refused", exc.message, exc.where


def _typed(data: Any) -> Any:
    """Data with every value's type beside it, so that ``True`` and ``1`` or ``1`` and ``1.0`` differ."""
    if isinstance(data, dict):
        return [(_typed(key), _typed(value)) for key, value in data.items()]
    if isinstance(data, list):
        return [_typed(item) for item in data]
    if isinstance(data, float) and math.isnan(data):
        return "nan", float
    return data, type(data)


def _same(text: str) -> Any:
    """The fast reader's data, having checked it is ruamel.yaml's, for one and for every document."""
    fast = _typed(yamlio.loads(text))
    assert fast == _typed(_ruamel(text))
    assert _typed(yamlio.loads_all(text)) == _typed(_ruamel(text, every=True))
    return yamlio.loads(text)


def _is_fast(text: str) -> bool:
    return yamlio._fast(text, every=False) is not yamlio._Unsure


# --- generated plain data -----------------------------------------------------------------------

_LOOKALIKES = [
    "yes", "no", "on", "off", "y", "n", "Yes", "NO", "True", "FALSE", "true", "null", "Null", "~", "",
    "0777", "0o17", "0x1F", "0b101", "1:20", "190:20:30", "1_000", "+1", "-0", "1e3", "1.5e+3", ".5",
    ".inf", "-.Inf", ".nan", ".NaN", "1.", "12e", "0.1", "-1.5", "2020-01-01", "2020-1-1", "2020-01-01 10:00:00",
    "2020-01-01T10:00:00Z", "=", "<<", "-", "?", ":", "a: b", "# x", "&a", "*a", "!x", "%x", "@x", "`x`",
    "---", "...", "'q'", '"q"', "a\tb", "line\nline", "trail\n", "\n\nlead", " edge ", "é", "日本", "😀",
    "\x85", "\u2028", "\x1b", "\\", "{}", "[]", "{a: 1}", "[1, 2]", "a#b", "a #b",
]  # fmt: skip
_strings = st.text(max_size=12) | st.sampled_from(_LOOKALIKES) | st.text(alphabet="0123456789._-+:eoxbTZ ", max_size=10)
_scalars = st.one_of(
    _strings,
    st.integers(),
    st.integers(-(10**30), 10**30),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.dates(),
)
_keys = _strings | st.integers() | st.booleans()
_trees = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=25,
)


def _ruamel_dump(data: Any, typ: str) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ=typ, pure=True)
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()


@PROPERTIES
@given(tree=_trees)
def test_data_dumped_by_dumps_reads_back_exactly_as_ruamel_reads_it(tree: Any) -> None:
    _same(yamlio.dumps({"root": tree}))
    _same(yamlio.dumps([tree, {"k": tree}]))


@PROPERTIES
@given(tree=_trees, typ=st.sampled_from(["safe", "rt"]))
def test_data_dumped_by_ruamel_reads_back_exactly_as_ruamel_reads_it(tree: Any, typ: str) -> None:
    _same(_ruamel_dump({"root": tree, "list": [tree]}, typ))


@PROPERTIES
@given(trees=st.lists(_trees, max_size=4))
def test_every_document_of_a_stream_reads_as_ruamel_reads_it(trees: list[Any]) -> None:
    text = yamlio.dumps_all(trees)
    assert _typed(yamlio.loads_all(text)) == _typed(_ruamel(text, every=True))
    assert _outcome(yamlio.loads, text) == _outcome(_ruamel, text)


_TOKENS = [
    "a", "b", "1", "0x", "07", ".5", "~", "true", "yes", "<<", "=", " ", " ", "  ", "\n", "\n", "- ", "-", ": ", ":",
    "? ", "?", "#", " #", "&a ", "*a", "&b", "*b ", "!", "!!str ", "|", "|-", "|+", "|2", ">", "'", '"', "\\", "%",
    "@", "`", ",", "[", "]", "{", "}", "---", "...", "\t", "\r", "é",
]  # fmt: skip


@settings(PROPERTIES, max_examples=1500)
@given(pieces=st.lists(st.sampled_from(_TOKENS), max_size=30))
def test_random_yaml_is_read_as_ruamel_reads_it_or_left_to_ruamel(pieces: list[str]) -> None:
    text = "".join(pieces)
    for every in (False, True):
        fast = yamlio._fast(text, every=every)
        if fast is not yamlio._Unsure:
            assert ("read", _typed(fast)) == _outcome(lambda t, e=every: _ruamel(t, every=e), text), text


# --- YAML 1.2 as ruamel.yaml reads it -----------------------------------------------------------


@pytest.mark.parametrize(
    ("plain", "expected"),
    [
        ("yes", "yes"),
        ("No", "No"),
        ("on", "on"),
        ("OFF", "OFF"),
        ("y", "y"),
        ("True", True),
        ("FALSE", False),
        ("0777", 777),
        ("0o17", 15),
        ("0x1F", 31),
        ("0b101", 5),
        ("-0", 0),
        ("+12", 12),
        ("1_000", 1000),
        ("1:20", "1:20"),
        ("190:20:30", "190:20:30"),
        ("1e3", 1000.0),
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.inf", -math.inf),
        (".Inf", math.inf),
        ("~", None),
        ("null", None),
        ("NULL", None),
        ("", None),
        ("2020-01-01", datetime.date(2020, 1, 1)),
        ("2020-1-1", "2020-1-1"),
        ("=", "="),
        ("0b", "0b"),
        ("_", "_"),
    ],
)
def test_plain_scalars_resolve_as_yaml_1_2(plain: str, expected: Any) -> None:
    text = f"value: {plain}\n{plain or 'empty'}: key\n"
    assert _is_fast(text)
    data = _same(text)
    assert _typed(data["value"]) == _typed(expected)


def test_nan_reads_as_nan() -> None:
    assert _is_fast("a: .nan\nb: .NaN\n")
    assert all(math.isnan(v) for v in _same("a: .nan\nb: .NaN\n").values())


def test_a_snapshot_shaped_document_is_read_by_the_fast_reader() -> None:
    nodes = [f"node-{i:04d}" for i in range(200)]
    document = {
        "kind": "Snapshot",
        "apiVersion": "aicr.run/v1alpha2",
        "metadata": {"version": "0.1.0", "timestamp": "2026-01-01T00:00:00Z"},
        "measurements": [
            {
                "type": "K8s",
                "subtypes": [
                    {"subtype": "server", "data": {"version": "v1.34.1", "nodes": len(nodes), "ready": True}},
                    {"subtype": "nodes", "data": {"580.105.08": ",".join(nodes), "count": 200, "ratio": 0.5}},
                ],
            },
            {"type": "GPU", "subtypes": [{"subtype": n, "data": {"gpus": 8, "mig": None}} for n in nodes]},
        ],
        "notes": "line one\nline two\n",
    }
    text = yamlio.dumps(document)
    assert _is_fast(text)
    assert _same(text) == document


# --- what is refused, with ruamel.yaml's messages -----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: 2\na: 3\n",
        "1: a\ntrue: b\n",  # True == 1
        "x:\n  a: 1\n  a: 1\n",
        "- a: 1\n  a: 2\n",
    ],
)
def test_a_duplicate_key_is_refused_as_ruamel_refuses_it(text: str) -> None:
    assert not _is_fast(text)
    outcome = _outcome(yamlio.loads, text)
    assert outcome[0] == "refused" and "found duplicate key" in outcome[1]
    assert outcome == _outcome(_ruamel, text)


def _block_laughs(levels: int) -> str:
    lines = ["l0: &l0", *["  - lol"] * 9]
    for level in range(1, levels):
        lines += [f"l{level}: &l{level}", *[f"  - *l{level - 1}"] * 9]
    return "\n".join(lines) + "\n"


def test_aliases_within_the_budget_are_read_by_the_fast_reader() -> None:
    text = _block_laughs(3)  # 9**3 laughs: under go-yaml's floor of 1,000 nodes
    assert _is_fast(text)
    data = _same(text)
    assert data["l2"] == [[["lol"] * 9] * 9] * 9
    assert data["l2"][0] is data["l1"]  # an alias is its anchor's data, built once


def test_an_alias_bomb_is_refused_unexpanded_with_ruamels_message() -> None:
    bomb = _block_laughs(9)
    tracemalloc.start()
    try:
        assert not _is_fast(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024
    outcome = _outcome(yamlio.loads, bomb)
    assert outcome[:2] == ("refused", "invalid YAML: document contains excessive aliasing")
    assert outcome == _outcome(_ruamel, bomb)


@pytest.mark.parametrize("text", ["a: &a\n  b: *a\n", "- &a\n  - *a\n", "&a\n- x\n- *a\n"])
def test_an_anchor_that_contains_itself_is_refused(text: str) -> None:
    assert not _is_fast(text)
    outcome = _outcome(yamlio.loads, text)
    assert outcome[:2] == ("refused", "invalid YAML: anchor 'a' value contains itself")
    assert outcome == _outcome(_ruamel, text)


def test_nesting_past_the_limit_is_refused_and_to_the_limit_read_by_the_fast_reader() -> None:
    def block(depth: int) -> str:
        return "".join("  " * level + "a:\n" for level in range(depth - 2)) + "  " * (depth - 2) + "a: []\n"

    assert _is_fast(block(files.MAX_NESTING))
    assert files.nesting(_same(block(files.MAX_NESTING))) == files.MAX_NESTING
    deep = block(files.MAX_NESTING + 1)
    assert not _is_fast(deep)
    outcome = _outcome(yamlio.loads, deep)
    assert outcome[:2] == ("refused", f"invalid YAML: nested deeper than {files.MAX_NESTING} levels")
    assert outcome == _outcome(_ruamel, deep)


@pytest.mark.parametrize(
    "text",
    [
        "a: !!str 1\n",  # a tag
        "a: ! 1\n",  # the non-specific tag, which libyaml would resolve as plain
        "base: &b\n  x: 1\nc:\n  <<: *b\n",  # a merge key
        "a: <<\n",
        "%YAML 1.1\n---\na: yes\n",  # a directive
        "a: [1, 2]\n",  # a flow collection
        "a: >\n  folded\n  text\n",
        "a: 2020-01-01 10:00:00\n",  # a time of day
        "a: 2020-02-30\n",  # a date the constructor cannot build
        "a: 0x_\n",
        "a:\tb\n",
        "a: 1\r\nb: 2\r\n",
        "a: &x.y 1\nb: *x.y\n",  # names libyaml ends at the dot
        "a: &x 1\nb: &x 2\nc: *x\n",  # a reused anchor name, the latest as go-yaml reads it
        "? [a]\n: 1\n",  # a sequence as a key
        "a: 1\n---\nb: 2\n",  # two documents for loads
        "a\n...\n...\n",  # a second document end, which libyaml allows
        "|\n---\n",  # a literal block as the document, which ruamel.yaml reads ``---`` into
        "a: |\n  \n    x\n",  # a literal block's blank first line with spaces, which ruamel.yaml refuses
        "a: b: c\n",  # a syntax error
        "x: *undefined\n",
    ],
)
def test_what_the_fast_reader_is_not_sure_of_is_read_by_ruamel(text: str) -> None:
    assert not _is_fast(text)
    assert _outcome(yamlio.loads, text) == _outcome(_ruamel, text)
    assert _outcome(yamlio.loads_all, text) == _outcome(lambda t: _ruamel(t, every=True), text)


def test_an_empty_stream_and_empty_documents() -> None:
    for text in ("", "# only a comment\n", "---\n", "---\n...\n---\na: 1\n"):
        assert _outcome(yamlio.loads_all, text) == _outcome(lambda t: _ruamel(t, every=True), text)
    assert yamlio.loads("") is None
    assert yamlio.loads_all("---\n---\na: 1\n") == [{"a": 1}]
