"""The runner's reading of a workload's pods, as pure functions over pod documents.

Covers: a hostname NCCL prints is matched to the pod that printed it (a JobSet or Job pod's name is
its hostname plus one random suffix; ``…-node-0-1`` is not ``…-node-0-13-x``); the log of a failed
run comes from the pod that exited non-zero first; bound pods map their hostnames to their nodes.
"""

from __future__ import annotations

from typing import Any

from shared.certify.workloads import launch


def _pod(
    name: str, *, hostname: str | None = None, node: str | None = None, exits: list[tuple[str, int, str]] = ()
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if hostname:
        spec["hostname"] = hostname
    if node:
        spec["nodeName"] = node
    statuses = [
        {"name": container, "state": {"terminated": {"exitCode": code, "finishedAt": at}}}
        for at, code, container in exits
    ]
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec, "status": {"containerStatuses": statuses}}


def test_a_printed_hostname_matches_only_its_own_pod() -> None:
    host = "cert-c0-r1-g0-node-0-1"
    assert launch._pod_has_hostname("cert-c0-r1-g0-node-0-1-x7k2q", host)  # JobSet / Job: one random suffix
    assert launch._pod_has_hostname("mpi-worker-1", "mpi-worker-1")  # MPIJob: the name is the hostname
    assert not launch._pod_has_hostname("cert-c0-r1-g0-node-0-13-x7k2p", host)
    assert not launch._pod_has_hostname("cert-c0-r1-g0-node-0-1-0-x7k2p", host)
    assert not launch._pod_has_hostname("cert-c0-r1-g0-node-0-1", "cert-c0-r1-g0-node-0")


def test_the_failure_log_is_the_pod_that_exited_non_zero_first() -> None:
    pods = [
        _pod("worker-0", exits=[("2026-12-01T10:00:09Z", 143, "node")]),
        _pod("launcher", exits=[("2026-12-01T10:00:05Z", 1, "node")]),
        _pod("worker-1", exits=[("2026-12-01T10:00:01Z", 0, "node")]),
    ]
    first = launch._first_failure(pods)
    assert first is not None and (first[0]["metadata"]["name"], first[1]) == ("launcher", "node")
    assert launch._first_failure([_pod("ok", exits=[("2026-12-01T10:00:00Z", 0, "node")])]) is None


def test_bound_pods_map_their_hostnames_to_their_nodes() -> None:
    pods = [_pod("a-x1", hostname="a", node="node-003"), _pod("b-x2", hostname="b"), _pod("c", node="node-001")]
    assert launch.placement(pods) == {"a": "node-003", "c": "node-001"}
