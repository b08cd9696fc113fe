"""``python -m shared.sim``: the commands a user runs, as subprocesses.

Covers: serve writes a kubeconfig, prints one ``ready <url>`` line, creates zero-padded nodes and
exits 0 on SIGTERM; --state keeps objects across a restart; api-faults changes and clears faults;
token gives a ServiceAccount identity that RBAC refuses; audit lists requests; missing kubeconfig
is invalid input (exit 2).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.sim import SimServer, control, server
from shared.sim.apiserver import kubeconfig

READY_TIMEOUT = 20.0


def _sim(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shared.sim", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **(env or {})},
        check=False,
    )


class _Served:
    def __init__(self, process: subprocess.Popen[str], config: Path, url: str) -> None:
        self.process, self.config, self.url = process, config, url


@pytest.fixture()
def serve(tmp_path: Path) -> Iterator[object]:
    started: list[subprocess.Popen[str]] = []

    def start(*extra: str) -> _Served:
        config = tmp_path / f"kubeconfig-{len(started)}"
        process = subprocess.Popen(
            [sys.executable, "-m", "shared.sim", "serve", "--port", "0", "--kubeconfig-out", str(config), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ready https://127.0.0.1:"), (line, process.stderr.read() if process.stderr else "")
        return _Served(process, config, line.split()[1])

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)  # reaps it and closes its pipes


def _stop(served: _Served) -> int:
    served.process.send_signal(signal.SIGTERM)
    return served.process.wait(timeout=10)


def test_serve_writes_a_kubeconfig_prints_ready_and_stops_cleanly(serve: object) -> None:
    served = serve("--nodes", "12")  # type: ignore[operator]
    target = kubeconfig.read(served.config)
    assert target.server == served.url and target.token and target.ca_pem
    assert oct(served.config.stat().st_mode & 0o777) == "0o600"
    nodes = control.api_request(target, "GET", "/api/v1/nodes")
    assert [n["metadata"]["name"] for n in nodes["items"]][:2] == ["node-000", "node-001"]
    assert len(nodes["items"]) == 12
    assert _stop(served) == 0


def test_node_names_are_padded_to_the_width_the_count_needs() -> None:
    assert server.node_names(3) == ["node-000", "node-001", "node-002"]
    assert server.node_names(1001)[-1] == "node-1000"
    assert server.node_names(1000)[-1] == "node-999"


def test_state_survives_a_restart(serve: object, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = serve("--state", str(state))  # type: ignore[operator]
    target = kubeconfig.read(first.config)
    control.api_request(
        target, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "survivor"}, "data": {"k": "v"}}
    )
    assert _stop(first) == 0
    second = serve("--state", str(state))  # type: ignore[operator]
    again = control.api_request(kubeconfig.read(second.config), "GET", "/api/v1/namespaces/default/configmaps/survivor")
    assert again["data"] == {"k": "v"}
    assert _stop(second) == 0


def test_api_faults_token_and_audit_commands(sim: SimServer, tmp_path: Path) -> None:
    config = sim.write_kubeconfig(tmp_path / "kc")
    done = _sim("api-faults", "--kubeconfig", str(config), "--latency-ms", "5", "--conflict-rate", "0.5")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["conflict_rate"] == 0.5
    assert sim.faults.settings.latency_ms == 5
    assert _sim("api-faults", "--kubeconfig", str(config), "--clear").returncode == 0
    assert sim.faults.settings.conflict_rate == 0

    sa_config = tmp_path / "sa"
    done = _sim(
        "token", "--kubeconfig", str(config), "--serviceaccount", "default/robot", "--kubeconfig-out", str(sa_config)
    )
    assert done.returncode == 0, done.stderr
    from shared import errors

    with pytest.raises(errors.Unauthorized):
        control.api_request(kubeconfig.read(sa_config), "GET", "/api/v1/namespaces/default/secrets")
    done = _sim("audit", "--kubeconfig", str(config), "--identity", "system:serviceaccount:default:robot")
    assert done.stdout.splitlines() == ["system:serviceaccount:default:robot list secrets default - 403"]


def test_commands_without_a_kubeconfig_are_invalid_input(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = subprocess.run(
        [sys.executable, "-m", "shared.sim", "audit"], capture_output=True, text=True, timeout=30, env=env, check=False
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "error: no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG"
