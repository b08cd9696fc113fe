"""Pure parts of the lifecycle, held to properties by hypothesis: node bookkeeping and test groups.

Covers: the validation-state label is derived from the session and the active request exactly as
research §7.3 states, and survives a write/read round trip; a pass removes the request and only
the failed entries with the same tests; joining twice is joining once; the test-group builder
covers every (test, node) pair that meets its batch minimum exactly once, skips or pre-fails the
others by policy, never mixes providers, batches tests only where the provider does, names groups
uniquely within a DNS label, and does not depend on the order of its input.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.lifecycle import groups, models, sessions
from shared.lifecycle import settings as lsettings

NAMES = st.sampled_from(["vr-a", "vr-b", "vr-c", "node-000-validation-0f3a", "validation-new-77"])
TESTS = st.lists(st.sampled_from(["dcgm-diag", "nccl-all-reduce", "nemotron-5b"]), max_size=3, unique=True)
ENTRIES = st.lists(
    st.builds(sessions.Entry, NAMES, TESTS.map(lambda t: tuple(sorted(t))), st.booleans()),
    max_size=5,
    unique_by=lambda e: e.name,
)
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@given(ENTRIES, st.one_of(st.none(), NAMES))
def test_the_state_label_follows_the_session_and_the_active_request(
    entries: list[sessions.Entry], active: str | None
) -> None:
    label = sessions.state(entries, active)
    if active is not None:
        assert label == "validating"
    elif not entries:
        assert label is None
    elif all(e.failed for e in entries):
        assert label == "validation-failed"
    else:
        assert label == "validation-pending"


@given(ENTRIES, st.one_of(st.none(), NAMES))
def test_a_session_written_to_a_node_reads_back_with_its_label(
    entries: list[sessions.Entry], active: str | None
) -> None:
    node: dict[str, object] = {"metadata": {"name": "n"}}
    sessions.write(node, entries, active)
    back, back_active = sessions.read(node)
    assert (back, back_active) == (sorted(entries), active)
    labels = node["metadata"]["labels"]  # type: ignore[index]
    assert labels.get(sessions.STATE_LABEL) == sessions.state(entries, active)
    assert not sessions.write(node, back, back_active)  # idempotent: nothing to change


@given(ENTRIES, NAMES, TESTS)
def test_a_pass_removes_the_request_and_only_failures_of_the_same_tests(
    entries: list[sessions.Entry], name: str, tests: list[str]
) -> None:
    after = sessions.passed(entries, name, tests)
    same = tuple(sorted(tests))
    assert all(e.name != name for e in after)
    assert not any(e.failed and e.tests == same for e in after)
    assert [e for e in entries if e.name != name and not (e.failed and e.tests == same)] == after


@given(ENTRIES, NAMES, TESTS)
def test_joining_twice_is_joining_once(entries: list[sessions.Entry], name: str, tests: list[str]) -> None:
    once = sessions.join(entries, name, tests)
    assert sessions.join(once, name, tests) == once
    assert sum(1 for e in once if e.name == name) == 1


def _config(data: st.DataObject) -> lsettings.Configuration:
    providers = {
        "cert": lsettings.Provider(kind="Certification", supportsTestBatching=True),
        "job": lsettings.Provider(kind="Job", supportsTestBatching=data.draw(st.booleans())),
    }
    tests = {}
    for i in range(data.draw(st.integers(1, 6))):
        tests[f"test-{i}-{'x' * data.draw(st.integers(0, 30))}"] = lsettings.Test(
            provider=data.draw(st.sampled_from(sorted(providers))),
            supportsBatchingNodes=data.draw(st.booleans()),
            minimumNodesPerBatch=data.draw(st.integers(1, 4)),
            batchFailurePolicy=data.draw(st.sampled_from(["fail", "ignore"])),
        )
    return lsettings.Configuration(providers=providers, tests=tests)


@settings(max_examples=200, deadline=None)  # a shared 2-core machine: timing varies
@given(st.data())
def test_the_group_builder_covers_each_test_and_node_once_and_honours_minimums(data: st.DataObject) -> None:
    cfg = _config(data)
    node_names = data.draw(
        st.lists(st.sampled_from([f"node-{i:03d}" for i in range(6)]), min_size=1, max_size=6, unique=True)
    )
    chosen = data.draw(st.lists(st.sampled_from(sorted(cfg.tests)), min_size=1, unique=True))
    plan = groups.build(node_names, chosen, cfg)
    runnable = [t for t in chosen if len(node_names) >= cfg.tests[t].minimumNodesPerBatch]
    assert sorted(plan.skipped_tests) == sorted(
        t for t in chosen if t not in runnable and cfg.tests[t].batchFailurePolicy == "ignore"
    )
    prefailed = [g for g in plan.groups if g.phase is models.Phase.FAILED]
    assert sorted(t for g in prefailed for t in g.tests) == sorted(
        t for t in chosen if t not in runnable and cfg.tests[t].batchFailurePolicy == "fail"
    )
    assert all(g.attempts[0].failureReason is models.FailureReason.BATCH_MINIMUM_NOT_MET for g in prefailed)
    pairs = [(t, n) for g in plan.groups if g.phase is not models.Phase.FAILED for t in g.tests for n in g.nodes]
    assert sorted(pairs) == sorted((t, n) for t in runnable for n in node_names)
    for g in plan.groups:
        assert {cfg.tests[t].provider for t in g.tests} == {g.provider}
        assert len(g.tests) == 1 or cfg.providers[g.provider].supportsTestBatching
        assert len(g.name) <= 63 and DNS_LABEL.match(g.name)
    assert len({g.name for g in plan.groups}) == len(plan.groups)
    again = groups.build(list(reversed(node_names)), list(reversed(chosen)), cfg)
    assert again == plan
