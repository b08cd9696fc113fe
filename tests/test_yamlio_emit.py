"""``yamlio.dumps`` writes plain data itself, byte for byte as ruamel.yaml writes it.

Covers: every seed recipe (each criteria combination the bench resolves) and every values file of
the embedded catalog give ruamel.yaml's bytes; generated documents of mappings, lists, ints,
booleans, None and strings drawn from YAML's indicator characters give ruamel.yaml's bytes
whenever the emitter takes them; what it leaves (floats, line breaks, non-ASCII, long keys,
nested lists) falls back to ruamel.yaml, and the seed recipe is taken (the fast path is used).
"""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import yamlio
from shared.recipe import catalog, resolver
from shared.recipe.criteria import Criteria


def _ruamel(data: Any) -> str:
    stream = io.StringIO()
    indent = (yamlio._INDENT_MAPPING, yamlio._INDENT_SEQUENCE, yamlio._INDENT_OFFSET)
    yamlio._dumper(indent).dump(yamlio._prepare(data), stream)
    return stream.getvalue()


AXES = (
    ("service", ["eks", "gke", "aks", "kind", "oke"]),
    ("accelerator", ["h100", "gb200", "a100", "any"]),
    ("intent", ["training", "inference"]),
    ("os", ["ubuntu", "any"]),
)


def _recipes() -> list[dict[str, Any]]:
    cat = catalog.embedded()
    names = [name for name, _ in AXES]
    docs = []
    for values in itertools.product(*(choices for _, choices in AXES)):
        docs.append(resolver.resolve(Criteria(**dict(zip(names, values, strict=True))), cat).document())
    return docs


def test_every_seed_recipe_is_written_by_the_emitter_as_ruamel_writes_it() -> None:
    docs = _recipes()
    taken = [doc for doc in docs if yamlio._emit(doc) is not None]
    assert len(taken) == len(docs)  # the recipes are plain data: the emitter writes them all
    for doc in docs:
        assert yamlio.dumps(doc) == _ruamel(doc)


def test_every_values_file_of_the_catalog_dumps_as_ruamel_dumps_it() -> None:
    cat = catalog.embedded()
    values = [cat.values(rel) for rel in sorted(cat.files) if rel.endswith("values.yaml") and rel in cat.parsed]
    assert values
    for data in values:
        assert yamlio.dumps(data) == _ruamel(data)


_ALPHABET = "ab0129 -:#?,[]{}&*!|>'\"%@`=~<._/+eExXoOnNtTfF"
_strings = st.one_of(
    st.text(alphabet=_ALPHABET, max_size=8),
    st.text(alphabet="0123456789._-:+eExob Tt", max_size=12),
    st.sampled_from(
        [
            "true",
            "null",
            "~",
            "1.5",
            "1e3",
            "0x1f",
            "2024-01-01",
            "2024-1-2 3:04:05",
            "2024-01-02T03:04:05Z",
            "_",
            "---x",
            "...",
            "- a",
            "a: b",
            "é",
            "a\nb",
        ]
    ),
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), _strings, st.floats(allow_nan=False))
_documents = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_strings, children, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(data=_documents)
def test_what_the_emitter_writes_is_what_ruamel_writes(data: Any) -> None:
    fast = yamlio._emit(data)
    if fast is not None:
        assert fast == _ruamel(data)


@pytest.mark.parametrize(
    "data",
    [{"a": 1.5}, {"a": "x\ny"}, {"a": "é"}, {"k" * 130: 1}, {"a": [[1]]}, {"a": " x"}, {"a": "x\t"}, "scalar", {}],
)
def test_what_the_emitter_leaves_is_dumped_by_ruamel(data: Any) -> None:
    assert yamlio._emit(data) is None
    assert yamlio.dumps(data) == _ruamel(data)
