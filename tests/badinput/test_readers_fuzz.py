"""Every file reader of the three programs, fed malformed YAML and JSON by hypothesis.

Covers: for each entry point that reads a user's file — criteria, snapshot and recipe files (both
recipe loaders), bundle checksums, kubeconfig, HealthEvent files, nvsentinel values (the loader and
``rules check``), node lists, monitor state files, dcgm input, Certifications, WorkloadRuns, the
three results parsers, chart values and DriftReports — the reader either accepts the bytes or
raises ``errors.InvalidInput`` (exit 2, one line naming the file), never another exception. The
bytes are a valid document of that reader mutated (cut short, a byte inserted or replaced, a
line duplicated or dropped), documents made of YAML and JSON tokens, random bytes, deep nesting,
and well-formed YAML of the wrong types (so the models, not only the parsers, are tried). The
hypothesis profile (tests/conftest.py) has no deadline: a busy machine is not a failure.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shared import errors, yamlio
from tests.badinput import cases
from tests.validate import install

EXAMPLES = 25
TOKENS = (
    "{",
    "}",
    "[",
    "]",
    ":",
    ": ",
    ",",
    "-",
    "- ",
    "\n",
    "  ",
    "\t",
    "&a ",
    "*a",
    "!!str ",
    "!!python/object ",
    "? ",
    "|",
    ">",
    "'",
    '"',
    "#",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "null",
    "true",
    "1e999",
    "NaN",
    "0x10",
    "kind",
    "spec",
    "apiVersion",
    "metadata",
    "name",
    "nodeName",
    "items",
    "reported",
    "counters",
    "gpus",
    "\\u0000",
    "\u2028",
    "\ufeff",
    "\x85",
    "<<: *a",
    "~",
    "=",
    "@",
)
RECIPE = yamlio.dumps(install.recipe_document())
CHECKSUMS = "0" * 64 + "  a/values.yaml\n" + "f" * 64 + "  deploy.sh\n"
KUBECONFIG = (
    "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster: {server: 'https://127.0.0.1:9'}\n"
    "contexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user: {token: t}\n"
)
STATE = '{"reported": {"n1/dcgm/0": {"isHealthy": false}}, "counters": {"n1/mlx5_0/1": {"symbol_error": 3}}}\n'
DCGM = '{"body": {"GPU": {"children": {}}}, "version": "3.3.5"}\n'
NCCL = (
    "#       size    count   type  redop  root  time  algbw  busbw\n  1048576  262144  float  sum  -1  10.0  100  187\n"
)
TRAINING = "[train-bench] step 1 time 1.5s tflops 400\n[train-bench] done: steps=1\n"


def _mutations(valid: str) -> st.SearchStrategy[bytes]:
    data = valid.encode()
    lines = valid.splitlines(keepends=True)
    cut = st.integers(0, len(data)).map(lambda n: data[:n])
    insert = st.tuples(st.integers(0, len(data)), st.binary(min_size=1, max_size=3)).map(
        lambda t: data[: t[0]] + t[1] + data[t[0] :]
    )
    replace = st.tuples(st.integers(0, max(len(data) - 1, 0)), st.sampled_from(TOKENS)).map(
        lambda t: data[: t[0]] + t[1].encode() + data[t[0] + 1 :]
    )
    shuffle = st.lists(st.sampled_from(lines), max_size=len(lines) + 3).map(lambda ls: "".join(ls).encode())
    return st.one_of(cut, insert, replace, shuffle)


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8), st.sampled_from(TOKENS)
)
_TREES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(TOKENS) | st.text(max_size=6), children, max_size=3),
    ),
    max_leaves=12,
)


def _typed(valid: str) -> st.SearchStrategy[bytes]:
    """The valid document with one top-level value (or the whole) replaced by a random tree."""
    try:
        doc = yamlio.loads(valid)
    except errors.InvalidInput:
        doc = None
    if not isinstance(doc, dict) or not doc:
        return _TREES.map(lambda tree: json.dumps(tree).encode())
    keys = sorted(doc)
    return st.tuples(st.sampled_from(keys), _TREES).map(
        lambda kv: json.dumps({**doc, kv[0]: kv[1]}, default=str).encode()
    )


def malformed(valid: str) -> st.SearchStrategy[bytes]:
    """Bytes near a valid document of one reader, and bytes no reader should take."""
    tokens = st.lists(st.sampled_from(TOKENS), max_size=30).map(lambda ts: "".join(ts).encode())
    nested = st.tuples(st.integers(90, 400), st.sampled_from(["[", '{"a": ', "- ", "a:\n "])).map(
        lambda t: (t[1] * t[0]).encode()
    )
    return st.one_of(_mutations(valid), _typed(valid), tokens, st.binary(max_size=64), nested)


def _no_cluster() -> Any:
    raise AssertionError("a reader of a file asked for a cluster")


def _kubeconfig(path: Path) -> Any:
    from shared.kube import client

    client.new_client(kubeconfig=path, environ={}).close()


def _recipe_for_bundle(path: Path) -> Any:
    from shared.bundle import plan

    return plan.load_recipe(str(path), api=_no_cluster)


def _recipe_for_validate(path: Path) -> Any:
    from shared.snapshot import service

    class Access:
        factory = staticmethod(_no_cluster)

    return service.load_recipe(str(path), Access())  # type: ignore[arg-type]


def _checksums(path: Path) -> Any:
    from shared.bundle import checksums

    return checksums.verify(path.parent)


def _criteria(path: Path) -> Any:
    from shared.recipe import criteria

    return criteria.load_criteria_file(path)


def _snapshot(path: Path) -> Any:
    from shared.recipe import snapshot

    return snapshot.load_file(path)


def _events(path: Path) -> Any:
    from shared.health import service

    return service.read_events(str(path))


def _health_values(path: Path) -> Any:
    from shared.health import config

    return config.load(path)


def _operate_values(path: Path) -> Any:
    from shared.operate import config

    return config.load(path)


def _rules_check(path: Path) -> Any:
    from shared.health import rulecheck

    return rulecheck.check(path)


@functools.cache
def _default_config() -> Any:
    from shared.health import config

    return config.load(None)  # compiles every rule: once, not per example


def _nodes(path: Path) -> Any:
    from shared.health import service

    events = path.with_name("events.json")
    events.write_text(cases.EVENT, encoding="utf-8")
    return service.replay(_default_config(), str(events), path)


def _state(path: Path) -> Any:
    from shared.health.monitors import memory

    return memory.Memory(path)


def _dcgm(path: Path) -> Any:
    from shared.health.monitors import agent

    return agent.read_dcgm(agent.Target("n1", path), datetime(2026, 1, 1, tzinfo=UTC))


def _certification(path: Path) -> Any:
    from shared.certify import resource

    return resource.load_file(path)


def _workloadrun(path: Path) -> Any:
    from shared.certify import workload

    return workload.load_file(path)


def _results(kind: str) -> Callable[[Path], Any]:
    def parse(path: Path) -> Any:
        from shared.certify import service

        return service.parse_results(kind, path)

    return parse


def _chart_values(path: Path) -> Any:
    from shared.chart import values

    return values.user_values(files=(path,))


def _drift(path: Path) -> Any:
    from shared.operate import validation

    return validation.drift_nodes(path)


READERS: dict[str, tuple[str, str, Callable[[Path], Any]]] = {
    # id: (file name, a valid document, the reader)
    "criteria": ("criteria.yaml", cases.BASES["criteria"], _criteria),
    "snapshot": ("snapshot.yaml", cases.BASES["snapshot"], _snapshot),
    "recipe-bundle": ("recipe.yaml", RECIPE, _recipe_for_bundle),
    "recipe-validate": ("recipe.yaml", RECIPE, _recipe_for_validate),
    "checksums": ("checksums.txt", CHECKSUMS, _checksums),
    "kubeconfig": ("kubeconfig", KUBECONFIG, _kubeconfig),
    "events": ("events.json", cases.EVENT, _events),
    "health-values": ("values.yaml", cases.BASES["values"], _health_values),
    "operate-values": ("values.yaml", cases.BASES["values"], _operate_values),
    "rules-check": ("values.yaml", cases.BASES["values"], _rules_check),
    "nodes": ("nodes.json", cases.BASES["nodes"], _nodes),
    "state": ("state.json", STATE, _state),
    "dcgm": ("dcgm.json", DCGM, _dcgm),
    "certification": ("cert.yaml", cases.BASES["cert"], _certification),
    "workloadrun": ("run.yaml", cases.BASES["workloadrun"], _workloadrun),
    "results-nccl": ("nccl.log", NCCL, _results("nccl")),
    "results-dcgm": ("dcgm.json", DCGM, _results("dcgm")),
    "results-training": ("train.log", TRAINING, _results("training")),
    "chart-values": ("values.yaml", cases.BASES["chart-values"], _chart_values),
    "drift": ("drift.yaml", cases.BASES["drift"], _drift),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_reader_accepts_or_refuses_with_the_one_input_error(
    reader: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    name, valid, read = READERS[reader]
    seed = tmp_path_factory.mktemp(reader) / name
    seed.write_text(valid, encoding="utf-8")
    read(seed)  # once before hypothesis watches: celpy raises the recursion limit as it builds its parsers

    @settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=malformed(valid))
    @example(data=b":")  # a null key: the criteria reader once failed to name it
    @example(data=b"1: a\nb: c\n")  # keys of two types, which do not sort together
    def accepts_or_refuses(data: bytes) -> None:
        path = tmp_path_factory.mktemp(reader) / name
        path.write_bytes(data)
        with contextlib.suppress(errors.InvalidInput):  # anything else fails the property
            read(path)

    accepts_or_refuses()


@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_accepts_its_valid_document(reader: str, tmp_path: Path) -> None:
    """The seeds are valid, so the property above starts from documents the reader takes."""
    name, valid, read = READERS[reader]
    path = tmp_path / name
    path.write_text(valid, encoding="utf-8")
    read(path)  # checksums.txt naming files that are not there: a failed verdict, not an error
