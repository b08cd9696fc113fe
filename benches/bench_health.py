"""nvsentinel fault quarantine against the issue's targets.

1. Rule evaluation in one process: distinct events (each converted to CEL once, as the controller
   does), Node conversions cached per resourceVersion, the seed's rule set and upstream's six
   default rule sets. Target: ≥ 20,000 and ≥ 5,000 events/s.
2. Quarantine latency, scaled down and in-process (the simulated cluster shares the process and its
   GIL with the controller, so this understates what a separate server gives): N GPU nodes, N/2
   fatal events published at once, enforcement on, breaker off; from the first publish to the last
   node cordoned.
3. The issue's end-to-end figure: the simulated cluster in its own process (``python -m shared.sim
   serve``, 1,500 H100 nodes, 10 ms injected latency on every request), ``nvsentinel run --enforce``
   in another with the breaker disabled, 750 fatal events published at once by 16 threads of this
   process; from the first publish to the last of the 750 nodes seen cordoned (nodes listed every
   0.2 s), and the controller's peak RSS. Everything a production controller runs is on: its
   metrics endpoint (scraped once at the end), a CloudEvents notification sink for every outcome
   (a receiver in this process answering 204), drain, remediation, the analyzer and the
   lifecycle. Every wait is bounded; everything is on 127.0.0.1.
4. Memory at scale: the simulated cluster in its own process with 10,000 H100 nodes,
   ``nvsentinel run --enforce`` with the default values (upstream's rule sets, breaker at 50 %,
   drain and remediation on) in another; 1,000 fatal syslog Xid events on distinct nodes published
   at once; once every event has its outcome and the pass that follows has run, the controller's
   peak RSS (VmHWM of /proc/<pid>/status: the high-water mark over its whole run, start-up,
   listing 10,000 nodes and the batch included).
"""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

NAME = "health"
SEED = (Path(__file__).resolve().parents[1] / "shared" / "health" / "rules" / "seed-example.yaml").read_text()


def _events(count: int, agents: list[str]) -> list[Any]:
    from shared.health import event

    return [
        event.parse(
            {
                "agent": agents[i % len(agents)],
                "componentClass": "GPU",
                "checkName": "GpuXidError",
                "isFatal": True,
                "recommendedAction": "RESTART_BM",
                "errorCode": ["79"],
                "entitiesImpacted": [{"entityType": "GPU", "entityValue": str(i % 8)}],
                "nodeName": f"node-{i % 100:03d}",
                "generatedTimestamp": f"2026-01-01T00:00:{i % 60:02d}Z",
            }
        )
        for i in range(count)
    ]


def _throughput(values_file: Path | None, agents: list[str], count: int = 20000) -> float:
    from shared.health import config

    cfg = config.load(values_file)
    nodes = {
        f"node-{i:03d}": {
            "metadata": {
                "name": f"node-{i:03d}",
                "resourceVersion": "1",
                "labels": {f"label-{j}": "x" for j in range(30)},
            },
            "spec": {},
        }
        for i in range(100)
    }
    events = _events(count, agents)
    start = time.perf_counter()
    matched = 0
    for ev in events:
        decision = cfg.engine.decide(ev.cel_value(), nodes[ev.nodeName])
        matched += bool(decision.matched)
    elapsed = time.perf_counter() - start
    assert matched == count, matched
    return count / elapsed


def _latency(node_count: int) -> tuple[float, int]:
    from shared import clock, nodes
    from shared.health import config, controller, resource
    from shared.health import event as hevent
    from shared.kube import client
    from shared.sim import SimServer

    with SimServer() as sim, tempfile.TemporaryDirectory() as tmp:
        sim.vclock.set_speed(0)
        names = sim.add_gpu_nodes(node_count)
        kubeconfig = sim.write_kubeconfig(Path(tmp) / "kubeconfig")
        values_file = Path(tmp) / "values.yaml"
        values_file.write_text(SEED + "  circuitBreaker: {enabled: false}\nnvsentinel: {workers: 32}\n")
        api = client.new_client(kubeconfig=kubeconfig)
        try:
            resource.install(api)
            controller.ensure_namespace(api, "nvsentinel")
            ctl = controller.Controller(
                api, config.load(values_file, enforce=True), namespace="nvsentinel", clk=clock.for_api_client(api)
            )
            events = [
                hevent.parse(
                    {
                        "agent": "gpu-health-monitor",
                        "componentClass": "GPU",
                        "checkName": "GpuXidError",
                        "isFatal": True,
                        "errorCode": ["79"],
                        "nodeName": n,
                        "generatedTimestamp": "2026-01-01T00:00:00Z",
                    }
                )
                for n in names[::2]
            ]
            start = time.perf_counter()
            resource.publish(api, events, now=clock.WALL.now)
            while ctl.reconcile_once().processed:
                pass
            elapsed = time.perf_counter() - start
            cordoned = sum(1 for n in nodes.list_nodes(api) if nodes.is_cordoned(n))
        finally:
            client.close(api)
    return elapsed, cordoned


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _peak_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _start_sim(
    tmp: Path, node_count: int, procs: list[subprocess.Popen[bytes]], env: dict[str, str], *, limit_s: float = 600
) -> Path:
    """``python -m shared.sim serve`` with ``node_count`` H100 nodes; its kubeconfig once it serves."""
    kubeconfig = tmp / "kubeconfig"
    with open(tmp / "sim.log", "wb") as sim_log:
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "shared.sim",
                    "serve",
                    "--nodes",
                    str(node_count),
                    "--gpu",
                    "h100",
                    "--port",
                    "0",
                    "--speed",
                    "1",
                    "--kubeconfig-out",
                    str(kubeconfig),
                ],
                stdout=sim_log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
    limit = time.monotonic() + limit_s
    while not kubeconfig.exists() or not kubeconfig.stat().st_size:
        if procs[-1].poll() is not None or time.monotonic() > limit:
            raise RuntimeError("simulated cluster did not start: " + _tail(tmp / "sim.log"))
        time.sleep(0.1)
    time.sleep(0.5)
    return kubeconfig


def _rss_at_scale(node_count: int = 10000, event_count: int = 1000, deadline_s: float = 600) -> dict[str, Any]:
    """See the module docstring (4)."""
    from shared import clock
    from shared.health import event as hevent
    from shared.health import resource
    from shared.kube import client

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            kubeconfig = _start_sim(tmp, node_count, procs, env)
            subprocess.run(
                [python, "-m", "nvsentinel.main", "crds", "install", "--kubeconfig", str(kubeconfig)],
                check=True,
                capture_output=True,
                timeout=120,
                env=env,
            )
            api = client.new_client(kubeconfig=kubeconfig)
            try:
                with open(tmp / "run.log", "wb") as run_log:
                    procs.append(
                        subprocess.Popen(
                            [python, "-m", "nvsentinel.main", "run", "--enforce", "--kubeconfig", str(kubeconfig)],
                            stdout=run_log,
                            stderr=subprocess.STDOUT,
                            env=env,
                        )
                    )
                limit = time.monotonic() + 120
                while not any(i["metadata"]["name"].startswith("nvsentinel-fault-quarantine") for i in _leases(api)):
                    if procs[1].poll() is not None or time.monotonic() > limit:
                        raise RuntimeError("nvsentinel run did not start: " + _tail(tmp / "run.log"))
                    time.sleep(0.2)
                step, width = max(1, node_count // event_count), max(3, len(str(node_count - 1)))
                events = [
                    hevent.parse(
                        {
                            "agent": "syslog-health-monitor",
                            "componentClass": "GPU",
                            "checkName": "SysLogsXIDError",
                            "isFatal": True,
                            "errorCode": ["79"],
                            "recommendedAction": "RESTART_BM",
                            "nodeName": f"node-{i:0{width}d}",
                            "entitiesImpacted": [{"entityType": "PCI", "entityValue": "0000:1b:00"}],
                            "generatedTimestamp": "2026-01-01T00:00:00Z",
                        }
                    )
                    for i in range(0, step * event_count, step)
                ]
                start = time.perf_counter()
                published = len(resource.publish(api, events, now=clock.WALL.now).created)
                done, elapsed = 0, float("nan")
                limit = time.monotonic() + deadline_s
                while time.monotonic() < limit and procs[1].poll() is None:
                    done = sum(1 for s in resource.list_events(api) if s.phase)
                    if done >= published:
                        elapsed = time.perf_counter() - start
                        break
                    time.sleep(1.0)
                time.sleep(5.0)  # the follow-up pass (drain, remediation) after the last outcome
                rss = _peak_rss_mb(procs[1].pid)
                alive = procs[1].poll() is None
            finally:
                client.close(api)
        finally:
            for proc in reversed(procs):
                _stop(proc)
    if not alive:
        raise RuntimeError("nvsentinel run exited during the measurement")
    return {"nodes": node_count, "events": published, "processed": done, "elapsed": elapsed, "rss": rss}


def _end_to_end(
    node_count: int = 1500,
    event_count: int = 750,
    latency_ms: float = 10,
    workers: int = 32,
    deadline_s: float = 180,
    breaker: bool = False,
) -> dict[str, Any]:
    """Separate processes for the cluster and the controller; see the module docstring (3)."""
    from shared import nodes
    from shared.kube import client

    python = sys.executable
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    receiver = _Receiver()
    metrics_port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        values_file = Path(tmp) / "values.yaml"
        values_file.write_text(
            SEED
            + f"  circuitBreaker: {{enabled: {str(breaker).lower()}}}\n"
            + f"nvsentinel:\n  workers: {workers}\n"
            + f"  notifications:\n    sinks: [{{name: bench, url: 'http://127.0.0.1:{receiver.port}/'}}]\n"
        )
        procs: list[subprocess.Popen[bytes]] = []
        try:
            kubeconfig = _start_sim(Path(tmp), node_count, procs, env, limit_s=120)
            subprocess.run(
                [python, "-m", "nvsentinel.main", "crds", "install", "--kubeconfig", str(kubeconfig)],
                check=True,
                capture_output=True,
                timeout=120,
                env=env,
            )
            subprocess.run(
                [
                    python,
                    "-m",
                    "shared.sim",
                    "api-faults",
                    "--kubeconfig",
                    str(kubeconfig),
                    "--latency-ms",
                    str(latency_ms),
                ],
                check=True,
                capture_output=True,
                timeout=60,
                env=env,
            )
            api = client.new_client(kubeconfig=kubeconfig)
            try:
                names = sorted(n["metadata"]["name"] for n in nodes.list_nodes(api))
                targets = set(names[:: max(1, len(names) // event_count)][:event_count])
                with open(Path(tmp) / "run.log", "wb") as run_log:
                    procs.append(
                        subprocess.Popen(
                            [
                                python,
                                "-m",
                                "nvsentinel.main",
                                "run",
                                "--enforce",
                                "--values",
                                str(values_file),
                                "--kubeconfig",
                                str(kubeconfig),
                                "--metrics-addr",
                                f"127.0.0.1:{metrics_port}",
                            ],
                            stdout=run_log,
                            stderr=subprocess.STDOUT,
                            env=env,
                        )
                    )
                limit = time.monotonic() + 120
                while not any(i["metadata"]["name"].startswith("nvsentinel-fault-quarantine") for i in (_leases(api))):
                    if procs[1].poll() is not None or time.monotonic() > limit:
                        raise RuntimeError("nvsentinel run did not start: " + _tail(Path(tmp) / "run.log"))
                    time.sleep(0.2)
                time.sleep(1.0)  # its first (empty) pass is over; it now waits on the watch
                ready_s = _await_node_cache(Path(tmp) / "run.log", procs[1])
                load = os.getloadavg()[0]
                cpu_before = [_cpu_seconds(p.pid) for p in procs]
                published, publish_s, cordoned, elapsed = _storm(api, targets, procs[1], deadline_s)
                cpu = [b - a for a, b in zip(cpu_before, [_cpu_seconds(p.pid) for p in procs], strict=True)]
                rss = _peak_rss_mb(procs[1].pid)
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=30) as scrape:
                    series = sum(1 for line in scrape.read().decode().splitlines() if line and line[0] != "#")
            finally:
                client.close(api)
        finally:
            for proc in reversed(procs):
                _stop(proc)
            receiver.stop()
    return {
        "notified": receiver.count,
        "series": series,
        "nodes": node_count,
        "events": published,
        "cordoned": cordoned,
        "elapsed": elapsed,
        "publish": publish_s,
        "rss": rss,
        "latency": latency_ms,
        "ready": ready_s,
        "load": load,
        "sim_cpu": cpu[0],
        "controller_cpu": cpu[1],
    }


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (/proc/<pid>/stat): what a storm cost
    it, whatever else shares the machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


READY_LINE = "of /api/v1/nodes in"
"""What ``nvsentinel run`` logs once its node informer has listed the cluster (``shared.kube.informer``)."""


def _await_node_cache(log: Path, controller: subprocess.Popen[bytes], limit_s: float = 300) -> float | None:
    """Real seconds until the controller's node informer has its first list (None: the controller
    has no informer, as before the change, or it did not say so in time). A storm measured from
    there is the steady state: the one listing of 10,000 nodes at start-up is not in it."""
    if not _has_informer():
        return None
    start = time.monotonic()
    while time.monotonic() - start < limit_s and controller.poll() is None:
        if READY_LINE in log.read_text(errors="replace"):
            return time.monotonic() - start
        time.sleep(0.2)
    return None


def _has_informer() -> bool:
    import importlib.util

    return importlib.util.find_spec("shared.kube.informer") is not None


def _storm(
    api: Any, targets: set[str], controller: subprocess.Popen[bytes], deadline_s: float
) -> tuple[int, float, int, float]:
    """Publish one fatal event per target node from 16 threads; (published, publish seconds,
    cordoned, seconds from the first publish to the last cordon)."""
    from shared import clock, nodes
    from shared.health import event as hevent
    from shared.health import resource

    events = [
        hevent.parse(
            {
                "agent": "gpu-health-monitor",
                "componentClass": "GPU",
                "checkName": "GpuXidError",
                "isFatal": True,
                "errorCode": ["79"],
                "nodeName": n,
                "generatedTimestamp": "2026-01-01T00:00:00Z",
            }
        )
        for n in sorted(targets)
    ]
    chunks = [events[i::16] for i in range(16)]
    start = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        published = sum(
            len(r.created) for r in pool.map(lambda chunk: resource.publish(api, chunk, now=clock.WALL.now), chunks)
        )
    publish_s = time.perf_counter() - start
    cordoned, elapsed = 0, float("nan")
    limit = time.monotonic() + deadline_s
    while time.monotonic() < limit and controller.poll() is None:
        cordoned = sum(1 for n in nodes.list_nodes(api) if n["metadata"]["name"] in targets and nodes.is_cordoned(n))
        if cordoned >= len(targets):
            elapsed = time.perf_counter() - start
            break
        time.sleep(0.2)
    return published, publish_s, cordoned, elapsed


class _Receiver:
    """A notification receiver on a free loopback port, answering 204 and counting what arrives."""

    def __init__(self) -> None:
        outer = self
        self.count = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.count += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


def _leases(api: Any) -> list[dict[str, Any]]:
    from shared.kube import rest

    items: list[dict[str, Any]] = rest.list_items(api, "/apis/coordination.k8s.io/v1/namespaces/nvsentinel/leases")
    return items


def run() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        seed = Path(tmp) / "seed.yaml"
        seed.write_text(SEED)
        seed_rate = _throughput(seed, ["gpu-health-monitor"])
        six_rate = _throughput(
            None, ["gpu-health-monitor", "syslog-health-monitor", "nic-health-monitor", "preflight-dcgm"]
        )
    lat_nodes = 300
    elapsed, cordoned = _latency(lat_nodes)
    e2e = _end_to_end()
    scale = _rss_at_scale()
    e2e_rate = e2e["cordoned"] / e2e["elapsed"] if e2e["elapsed"] == e2e["elapsed"] else 0.0
    return "\n".join(
        [
            "| measurement | result | target |",
            "|---|---|---|",
            "| rule evaluation, seed rule set (distinct events, cached nodes) |"
            f" {seed_rate:,.0f} events/s | ≥ 20,000 |",
            f"| rule evaluation, upstream's six default rule sets | {six_rate:,.0f} events/s | ≥ 5,000 |",
            f"| quarantine, {lat_nodes} GPU nodes, {lat_nodes // 2} fatal events at once, in-process sim, no latency "
            f"| {elapsed:.1f} s to the last of {cordoned} cordons ({cordoned / elapsed:.0f} nodes/s) | (smoke test) |",
            f"| quarantine end to end: {e2e['nodes']:,} H100 nodes (sim in its own process, {e2e['latency']:.0f} ms "
            f"latency per request), {e2e['events']} fatal events at once (published in {e2e['publish']:.1f} s), "
            "`nvsentinel run --enforce`, breaker off, metrics served, a CloudEvents sink for every outcome "
            f"| {e2e['elapsed']:.1f} s to the last of {e2e['cordoned']} cordons ({e2e_rate:.0f} nodes/s); "
            f"{e2e['notified']} notifications received, {e2e['series']} series on the last scrape "
            "| ≤ 10 s (≥ 75 nodes/s) |",
            f"| peak RSS of `nvsentinel run` in that run (1,500 nodes) | {e2e['rss']:.0f} MB | (for comparison) |",
            f"| peak RSS of `nvsentinel run --enforce` (default values) watching {scale['nodes']:,} H100 nodes "
            f"(sim in its own process), {scale['events']:,} fatal events at once "
            f"| {scale['rss']:.0f} MB ({scale['processed']:,} events processed in {scale['elapsed']:.0f} s) "
            "| ≤ 300 MB |",
            "",
        ]
    )
