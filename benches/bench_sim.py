"""Benchmark of the API emulator against the targets of issue 4, from a separate client process.

One emulator process (``python -m shared.sim serve``) is started; this process drives it over
keep-alive HTTPS connections on 127.0.0.1 and prints one figure per line, for docs/benchmarks.md:

- small GETs per second (one keep-alive connection);
- strategic-merge patches per second (one keep-alive connection);
- seconds to list 10,000 nodes (median of 3);
- milliseconds until one change reaches 100 open watches (median and worst watcher);
- resident memory of the emulator holding 10,000 nodes and 100,000 pods.

Every loop is bounded by its count; nothing leaves the loopback interface.
Run: ``.venv/bin/python benches/bench_sim.py [--nodes N --pods N --gets N --patches N --watchers N]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shared.sim.apiserver import kubeconfig  # noqa: E402 - after the path set-up


class Client:
    """One keep-alive HTTPS connection speaking JSON with the admin token."""

    def __init__(self, target: kubeconfig.Target, *, timeout: float = 30.0) -> None:
        host, port = target.server.removeprefix("https://").split(":")
        context = ssl.create_default_context(cadata=target.ca_pem)
        self.conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=timeout)
        self.headers = {"Authorization": f"Bearer {target.token}", "Accept": "application/json"}

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = content_type
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        payload = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:200]!r}")
        return payload

    def close(self) -> None:
        self.conn.close()


@contextmanager
def emulator() -> Iterator[tuple[subprocess.Popen[str], kubeconfig.Target]]:
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as folder:
        config = Path(folder) / "kubeconfig"
        process = subprocess.Popen(
            [sys.executable, "-m", "shared.sim", "serve", "--port", "0", "--kubeconfig-out", str(config)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            if not process.stdout.readline().startswith("ready "):
                raise RuntimeError("the emulator did not start")
            yield process, kubeconfig.read(config)
        finally:
            process.terminate()
            process.communicate(timeout=30)


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f}/s ({count} in {seconds:.2f} s)"


def bench_gets(target: kubeconfig.Target, count: int) -> str:
    client = Client(target)
    client.call("GET", "/api/v1/namespaces/default")
    started = time.perf_counter()
    for _ in range(count):
        client.call("GET", "/api/v1/namespaces/default")
    elapsed = time.perf_counter() - started
    client.close()
    return rate(count, elapsed)


def bench_patches(target: kubeconfig.Target, count: int) -> str:
    client = Client(target)
    client.call("POST", "/api/v1/nodes", {"metadata": {"name": "bench-patch"}})
    started = time.perf_counter()
    for n in range(count):
        client.call(
            "PATCH",
            "/api/v1/nodes/bench-patch",
            {"metadata": {"labels": {"round": str(n)}}},
            "application/strategic-merge-patch+json",
        )
    elapsed = time.perf_counter() - started
    client.close()
    return rate(count, elapsed)


def _create_many(
    target: kubeconfig.Target, paths_and_bodies: list[tuple[str, dict[str, Any]]], workers: int = 1
) -> float:
    chunks = [paths_and_bodies[i::workers] for i in range(workers)]

    def work(chunk: list[tuple[str, dict[str, Any]]]) -> None:
        client = Client(target)
        for path, body in chunk:
            client.call("POST", path, body)
        client.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def _node(n: int) -> dict[str, Any]:
    name = f"node-{n:05d}"
    return {
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.present": "true",
                "topology.kubernetes.io/rack": f"rack-{n // 32}",
            },
        },
        "spec": {},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"},
        },
    }


def _pod(n: int, nodes: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"pod-{n:06d}", "labels": {"app": f"app-{n % 50}"}},
        "spec": {
            "nodeName": f"node-{n % nodes:05d}",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/app:1.0",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
        },
    }


def bench_list(target: kubeconfig.Target, nodes: int) -> tuple[str, str]:
    took = _create_many(target, [("/api/v1/nodes", _node(n)) for n in range(nodes)])
    client = Client(target, timeout=120)
    times, size = [], 0
    for _ in range(3):
        started = time.perf_counter()
        payload = client.call("GET", "/api/v1/nodes")
        times.append(time.perf_counter() - started)
        size = len(json.loads(payload)["items"])
    client.close()
    return f"{statistics.median(times):.3f} s for {size} nodes (median of 3)", rate(nodes, took)


def bench_watchers(target: kubeconfig.Target, watchers: int) -> str:
    setup = Client(target)
    setup.call("POST", "/api/v1/nodes", {"metadata": {"name": "bench-watch"}})
    rv = json.loads(setup.call("GET", "/api/v1/nodes?limit=1"))["metadata"]["resourceVersion"]
    arrived: list[float] = []
    ready = threading.Barrier(watchers + 1)
    lock = threading.Lock()

    def watch() -> None:
        client = Client(target)
        client.conn.request(
            "GET",
            "/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dbench-watch"
            f"&resourceVersion={rv}&timeoutSeconds=30",
            headers=client.headers,
        )
        response = client.conn.getresponse()
        ready.wait()
        line = response.readline()
        if b"MODIFIED" in line:
            with lock:
                arrived.append(time.perf_counter())
        client.close()

    threads = [threading.Thread(target=watch) for _ in range(watchers)]
    for thread in threads:
        thread.start()
    ready.wait()
    time.sleep(0.2)  # let every watch reach its wait inside the server
    sent = time.perf_counter()
    setup.call(
        "PATCH",
        "/api/v1/nodes/bench-watch",
        {"metadata": {"labels": {"seen": "yes"}}},
        "application/strategic-merge-patch+json",
    )
    for thread in threads:
        thread.join(timeout=30)
    setup.close()
    delays = sorted((t - sent) * 1000 for t in arrived)
    return (
        f"{len(delays)}/{watchers} watchers got the event; median {statistics.median(delays):.1f} ms, "
        f"worst {delays[-1]:.1f} ms"
    )


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


NAME = "sim"


def run() -> str:
    """The issue's targets at their full size, as a markdown table for docs/benchmarks.md."""
    rows = []
    with emulator() as (process, target):
        rows.append(("small GETs, one keep-alive connection", bench_gets(target, 5000), "≥ 2,000/s"))
        rows.append(("strategic-merge patches, one keep-alive connection", bench_patches(target, 2000), "≥ 500/s"))
        rows.append(("one change reaching 100 watchers", bench_watchers(target, 100), "≤ 100 ms"))
        listing, creating = bench_list(target, 10_000)
        rows.append(("node creates, one keep-alive connection", creating, "—"))
        rows.append(("list 10,000 nodes", listing, "≤ 1 s"))
        took = _create_many(target, [("/api/v1/namespaces/default/pods", _pod(n, 10_000)) for n in range(100_000)])
        rows.append(("pod creates, one keep-alive connection", rate(100_000, took), "—"))
        rows.append(
            ("emulator resident memory, 10,000 nodes + 100,000 pods", f"{rss_mib(process.pid):,.0f} MiB", "≤ 1.5 GiB")
        )
    lines = ["| measurement | ours | target |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gets", type=int, default=5000)
    parser.add_argument("--patches", type=int, default=2000)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--watchers", type=int, default=100)
    args = parser.parse_args()
    print(
        f"# shared.sim benchmark, {datetime.now(UTC):%Y-%m-%d}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    with emulator() as (process, target):
        print(f"small GETs (one keep-alive connection): {bench_gets(target, args.gets)}")
        print(f"strategic-merge patches (one keep-alive connection): {bench_patches(target, args.patches)}")
        print(f"{args.watchers} watchers, one change: {bench_watchers(target, args.watchers)}")
        listing, creating = bench_list(target, args.nodes)
        print(f"node creates (one keep-alive connection): {creating}")
        print(f"list all nodes: {listing}")
        took = _create_many(
            target, [("/api/v1/namespaces/default/pods", _pod(n, args.nodes)) for n in range(args.pods)]
        )
        print(f"pod creates (one keep-alive connection): {rate(args.pods, took)}")
        print(f"emulator resident memory with {args.nodes} nodes and {args.pods} pods: {rss_mib(process.pid):,.0f} MiB")


if __name__ == "__main__":
    main()
