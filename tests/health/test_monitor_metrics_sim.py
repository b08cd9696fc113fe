"""The monitors' metrics: what ``--metrics-addr`` serves while a monitor runs against the simulated cluster.

Covers: a dcgm poll that publishes a fault counts it by agent and check, and a DCGM file that is
not JSON counts a read error for the dcgm monitor, both on the monitor's own endpoint (only
``nvsentinel_monitor_*`` and the process collectors); the CLI takes ``--metrics-addr`` on every
monitor command and refuses a bad address in one line, exit 2, before anything is read.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared import errors
from shared.health import resource
from shared.health.monitors import agent, commands
from shared.health.service import Cluster
from shared.sim.gpu import fabric


def _scrape(address: tuple[str, int]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{address[1]}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_a_dcgm_poll_counts_what_it_published_and_what_it_could_not_read(
    gpu_sim: Any, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    names = gpu_sim.add_gpu_nodes(3)
    resource.install(api_client)
    root = tmp_path / "nodes"  # where gpu_sim keeps the node files
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[2]}:gpu-dead"]))
    published = {("agent", "gpu-health-monitor"), ("check", "GpuPcieWatch")}
    read_errors = {("monitor", "dcgm")}
    cluster = Cluster(kubeconfig=sim_kubeconfig, context=None, namespace="nvsentinel")
    with commands.serving_metrics("127.0.0.1:0") as server:
        assert server is not None
        before = _scrape(server.address)
        events = agent.run("dcgm", agent.PollRequest(node_root=root), cluster=cluster, emit=lambda batch: None)
        assert [e.checkName for e in events] == ["GpuPcieWatch"]
        (root / names[0] / agent.DCGM_FILE).write_text("{not json")
        with pytest.raises(errors.InvalidInput):
            agent.run("dcgm", agent.PollRequest(node_root=root), cluster=cluster, emit=lambda batch: None)
        after = _scrape(server.address)
    key = ("nvsentinel_monitor_events_published_total", frozenset(published))
    assert after[key] == before.get(key, 0) + 1
    err = ("nvsentinel_monitor_read_errors_total", frozenset(read_errors))
    assert after[err] == before.get(err, 0) + 1
    assert {n for n, _ in after if not n.startswith(("process_", "python_", "nvsentinel_monitor_"))} == set()


@pytest.mark.parametrize(
    ("kind", "args"),
    [
        ("xid", ["--file", "-"]),
        ("dcgm", ["--file", "dcgm.json", "--node", "n1"]),
        ("nic", ["--sysfs", "sys", "--node", "n1"]),
        ("csp", ["--url", "http://127.0.0.1:9/", "--node", "n1"]),
    ],
)
def test_every_monitor_takes_metrics_addr_and_refuses_a_bad_one(kind: str, args: list[str], run_cli: Any) -> None:
    done = run_cli("nvsentinel", "monitor", kind, *args, "--dry-run", "--metrics-addr", "nowhere:port")
    assert done.code == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "--metrics-addr" in done.stderr and done.stdout == ""
