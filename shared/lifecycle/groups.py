"""The test-group builder (research/nvsentinel.md §7.4 step 2): a request's nodes and tests → groups.

Pure. For each test: fewer nodes than ``minimumNodesPerBatch`` skips it (policy ``ignore``) or makes
a group that is Failed from the start (``fail``, reason BatchMinimumNotMet). Otherwise its node sets
are all nodes together (``supportsBatchingNodes``) or one per node; tests that share a provider and
a node set share a group when the provider batches tests. Group names are the sorted test names
joined by ``-`` (cut to fit a DNS label, with an fnv32 hash keeping them distinct) plus
``-group-<n>``, so the same request always builds the same groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.lifecycle import models, settings

_MAX_PREFIX = 40


def fnv32(text: str) -> int:
    value = 0x811C9DC5
    for byte in text.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _prefix(tests: list[str]) -> str:
    joined = "-".join(sorted(tests))
    if len(joined) <= _MAX_PREFIX:
        return joined
    return f"{joined[: _MAX_PREFIX - 9].rstrip('-')}-{fnv32(joined):08x}"


@dataclass
class Plan:
    groups: list[models.TestGroup] = field(default_factory=list)
    skipped_tests: list[str] = field(default_factory=list)


def build(nodes: list[str], tests: list[str], cfg: settings.Configuration, *, now: str | None = None) -> Plan:
    """Groups for ``nodes`` (any order) and ``tests`` (names that exist in ``cfg.tests``)."""
    ordered = sorted(set(nodes))
    plan = Plan()
    keyed: dict[tuple[str, tuple[str, ...], str], list[str]] = {}
    failed: list[tuple[str, str]] = []
    for test in sorted(set(tests)):
        spec = cfg.tests[test]
        provider = cfg.providers[spec.provider]
        if len(ordered) < spec.minimumNodesPerBatch:
            if spec.batchFailurePolicy == "ignore":
                plan.skipped_tests.append(test)
            else:
                failed.append((test, spec.provider))
            continue
        sets = [tuple(ordered)] if spec.supportsBatchingNodes else [(n,) for n in ordered]
        for node_set in sets:
            key = (spec.provider, node_set, "" if provider.supportsTestBatching else test)
            keyed.setdefault(key, []).append(test)
    number = 0
    for (provider_name, node_set, _), names in sorted(keyed.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[1])):
        plan.groups.append(
            models.TestGroup(
                name=f"{_prefix(names)}-group-{number}",
                provider=provider_name,
                tests=sorted(names),
                nodes=list(node_set),
            )
        )
        number += 1
    for test, provider_name in failed:
        attempt = models.Attempt(
            objectName="",
            phase=models.Phase.FAILED,
            failureReason=models.FailureReason.BATCH_MINIMUM_NOT_MET,
            failedNodes=ordered,
            message=f"{test} needs {cfg.tests[test].minimumNodesPerBatch} node(s), {len(ordered)} given",
            startTime=now,
            endTime=now,
        )
        plan.groups.append(
            models.TestGroup(
                name=f"{_prefix([test])}-group-{number}",
                provider=provider_name,
                tests=[test],
                nodes=ordered,
                phase=models.Phase.FAILED,
                attempts=[attempt],
            )
        )
        number += 1
    return plan
