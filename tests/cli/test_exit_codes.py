"""Every exit status in docs/troubleshooting.md's table, produced by real commands of all three programs.

Covers: the table is read from the document; for each status but 8 there is at least one
invocation per program (``aicr``, ``nvcrectl``, ``nvsentinel``) that must end with it, against the
simulated cluster where one is needed, and each error leaves exactly one ``error:`` line on stderr,
its last (success leaves none; a verdict, 1, may list its findings so). 9 (a full disk) runs each
program in a subprocess under a 100-byte ``RLIMIT_FSIZE``; 130 (interrupted) sends SIGINT to a
subprocess once it is waiting (blocked reading stdin, or having asked the cluster for what it
waits on). 8 is a bug, so no command may produce it: a command that raises what no one expected
shows that ``shared.cli`` maps it to 8, with one line.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.kube import rest
from tests.health.test_monitors import make_port
from tests.validate import install

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TABLE = ROOT / "docs" / "troubleshooting.md"
PROGRAMS = ("aicr", "nvcrectl", "nvsentinel")
NO_COMMAND = {8: "a bug: no command may produce it (test_an_unexpected_exception_is_8_with_one_line)"}
REAL_SECONDS = 60.0
"""Generous real-time deadline of a subprocess; only a hang reaches it."""
FSIZE = 100
UNREACHABLE = "https://127.0.0.1:9"
CERT = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}}}
spec:
  maxBytes: 1G
  target: {{nodeSelector: {{pool: {pool}}}}}
  categories:
    - {{domain: diagnostics, variant: dcgm-l1}}
"""


@dataclass(frozen=True)
class Ran:
    code: int
    stderr: str


def table_codes() -> list[int]:
    """The statuses of the table under "Reading an error", in its order."""
    rows = re.findall(r"^\| (\d+) \|", TABLE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return [int(code) for code in rows]


class Env:
    """What one case needs, fixtures fetched only when asked (a GPU cluster costs more)."""

    def __init__(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.request, self.tmp = request, tmp_path

    def fixture(self, name: str) -> Any:
        return self.request.getfixturevalue(name)

    def run(self, program: str, *args: str) -> Ran:
        result = self.fixture("run_cli")(program, *args)
        return Ran(result.code, result.stderr)

    def kube(self) -> tuple[str, str]:
        return ("--kubeconfig", str(self.fixture("sim_kubeconfig")))

    def nobody(self) -> tuple[str, str]:
        return ("--kubeconfig", str(self.fixture("sim_identity")("default", "nobody")))

    def unreachable(self) -> tuple[str, str]:
        from shared.sim.apiserver import kubeconfig

        config = self.tmp / "unreachable"
        kubeconfig.write(config, UNREACHABLE, "token", user="nobody", namespace="default", ca_pem=None)
        return ("--kubeconfig", str(config))

    def write(self, name: str, text: str) -> str:
        path = self.tmp / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    def recipe(self) -> str:
        return self.write("recipe.yaml", yamlio.dumps(install.recipe_document()))

    def sysfs(self) -> str:
        """A node's /sys with one healthy InfiniBand port."""
        make_port(self.tmp / "sys", "mlx5_0")
        return str(self.tmp / "sys")

    def with_crd(self, program: str) -> None:
        assert self.run(program, "crds", "install", *self.kube()).code == 0

    def certification(self, pool: str) -> str:
        api = self.fixture("api_client")
        rest.create(api, rest.core_path("nodes"), {"metadata": {"name": "node-a", "labels": {"pool": "a"}}})
        assert self.run("nvcrectl", "crds", "install", *self.kube()).code == 0
        return self.write("cert.yaml", CERT.format(name=f"cert-{pool}", pool=pool))

    def limited(self, program: str, *args: str, stdout_file: bool = False) -> Ran:
        """``program`` in a subprocess that may write files of at most FSIZE bytes."""
        out = (self.tmp / "stdout").open("w") if stdout_file else subprocess.DEVNULL
        try:
            done = subprocess.run(
                [str(BIN / program), *args],
                preexec_fn=_small_files,
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                timeout=REAL_SECONDS,
                check=False,
            )
        finally:
            if stdout_file:
                out.close()  # type: ignore[union-attr]
        return Ran(done.returncode, done.stderr)

    def interrupted(self, program: str, *args: str, ready: Callable[[subprocess.Popen[str]], bool]) -> Ran:
        """``program`` in a subprocess, sent SIGINT once ``ready`` says it is waiting."""
        process = subprocess.Popen(
            [str(BIN / program), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + REAL_SECONDS
            while not ready(process):
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, f"{program} never reached its wait"
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=REAL_SECONDS)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        return Ran(process.returncode, stderr)

    def asked_cluster(self, resource_name: str) -> Callable[[subprocess.Popen[str]], bool]:
        """Ready once the program asked for ``resource_name``, what it waits on (the set-up's asks are cleared)."""
        sim = self.fixture("sim")
        sim.audit.clear()
        return lambda _process: any(r.resource == resource_name for r in sim.audit.records())


def _small_files() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def _reading_stdin(process: subprocess.Popen[str]) -> bool:
    """Blocked in read(0, ...): the system call number and first argument in /proc (x86-64 and arm64)."""
    try:
        fields = Path(f"/proc/{process.pid}/syscall").read_text().split()
    except OSError:
        return False
    read = {"x86_64": "0", "aarch64": "63"}.get(os.uname().machine)
    return len(fields) > 1 and fields[0] == read and int(fields[1], 16) == 0


def _aicr_verify_changed(env: Env) -> Ran:
    recipe, bundle = env.recipe(), env.tmp / "bundle"
    assert env.run("aicr", "bundle", "--recipe", recipe, "-o", str(bundle)).code == 0
    (bundle / "README.md").write_text("changed\n")
    return env.run("aicr", "verify", str(bundle))


def _nvsentinel_rules_problem(env: Env) -> Ran:
    values = env.write("values.yaml", "fault-quarantine:\n  ruleSets:\n    - name: a\n      tain: {}\n")
    return env.run("nvsentinel", "rules", "check", "-f", values)


def _nvcrectl_no_node_matches(env: Env) -> Ran:
    return env.run("nvcrectl", "certification", "run", "-f", env.certification("none"), "--wait", *env.kube())


def _aicr_validate_times_out(env: Env) -> Ran:
    install.install(env.fixture("api_client"), ready=False)
    return env.run("aicr", "validate", "--recipe", env.recipe(), *env.kube(), "--wait", "--timeout", "1ms")


def _nvcrectl_run_times_out(env: Env) -> Ran:
    cert = env.certification("a")
    return env.run("nvcrectl", "certification", "run", "-f", cert, "--wait", "--timeout", "1ms", *env.kube())


def _nvsentinel_validation_times_out(env: Env) -> Ran:
    rest.create(env.fixture("api_client"), rest.core_path("nodes"), {"metadata": {"name": "node-a"}})
    assert env.run("nvsentinel", "crds", "install", *env.kube()).code == 0
    args = ("validation", "create", "--nodes", "node-a", "--wait", "--timeout", "1ms", *env.kube())
    return env.run("nvsentinel", *args)


def _nvsentinel_state_full(env: Env) -> Ran:
    args = ("monitor", "nic", "--sysfs", env.sysfs(), "--node", "n1", "--state", str(env.tmp / "s.json"))
    return env.limited("nvsentinel", *args)


def _aicr_interrupted(env: Env) -> Ran:
    install.install(env.fixture("api_client"), ready=False)
    args = ("validate", "--recipe", env.recipe(), *env.kube(), "--wait", "--timeout", "1h")
    return env.interrupted("aicr", *args, ready=env.asked_cluster("pods"))


def _nvcrectl_interrupted(env: Env) -> Ran:
    cert = env.certification("a")
    args = ("certification", "run", "-f", cert, "--wait", "--timeout", "1h", *env.kube())
    # its first turn ends with an Event, then it sleeps a poll interval: interrupted there, not
    # two turns (20 s of real time) later when it creates the Job
    return env.interrupted("nvcrectl", *args, ready=env.asked_cluster("events"))


def _nvsentinel_interrupted(env: Env) -> Ran:
    args = ("monitor", "xid", "--node", "n1", "--file", "-", "--dry-run")
    return env.interrupted("nvsentinel", *args, ready=_reading_stdin)


def _nic(env: Env, *more: str) -> Ran:
    return env.run("nvsentinel", "monitor", "nic", "--node", "n1", "--sysfs", env.sysfs(), "--dry-run", *more)


def _nobody(env: Env, program: str, *args: str) -> Ran:
    """``args`` by an identity without rights, once the resource exists (else it is not found, 3)."""
    if program != "aicr":
        assert env.run(program, "crds", "install", *env.kube()).code == 0
    return env.run(program, *args, *env.nobody())


Case = Callable[[Env], Ran]
CASES: dict[int, dict[str, Case]] = {
    0: {
        "aicr": lambda env: env.run("aicr", "recipe", "--service", "eks", "--accelerator", "h100"),
        "nvcrectl": lambda env: env.run("nvcrectl", "catalog", "list"),
        "nvsentinel": _nic,
    },
    1: {"aicr": _aicr_verify_changed, "nvcrectl": _nvcrectl_no_node_matches, "nvsentinel": _nvsentinel_rules_problem},
    2: {
        "aicr": lambda env: env.run("aicr", "recipe", "--service", "eks", "-o", str(env.tmp / "no" / "r.yaml")),
        "nvcrectl": lambda env: env.run("nvcrectl", "results", "parse", "--kind", "nccl", str(env.tmp)),
        "nvsentinel": lambda env: _nic(env, "--state", env.write("state.json", "not json\n")),
    },
    3: {
        "aicr": lambda env: env.run("aicr", "snapshot", *env.kube(), "--context", "nope"),
        "nvcrectl": lambda env: env.run("nvcrectl", "certification", "list", *env.kube(), "--context", "nope"),
        "nvsentinel": lambda env: env.run("nvsentinel", "events", "list", *env.kube(), "--context", "nope"),
    },
    4: {
        "aicr": lambda env: _nobody(env, "aicr", "snapshot"),
        "nvcrectl": lambda env: _nobody(env, "nvcrectl", "certification", "list"),
        "nvsentinel": lambda env: _nobody(env, "nvsentinel", "events", "list"),
    },
    5: {
        "aicr": _aicr_validate_times_out,
        "nvcrectl": _nvcrectl_run_times_out,
        "nvsentinel": _nvsentinel_validation_times_out,
    },
    6: {
        "aicr": lambda env: env.run("aicr", "snapshot", *env.unreachable()),
        "nvcrectl": lambda env: env.run("nvcrectl", "certification", "list", *env.unreachable()),
        "nvsentinel": lambda env: env.run("nvsentinel", "events", "list", *env.unreachable()),
    },
    9: {
        "aicr": lambda env: env.limited("aicr", "recipe", "--service", "eks", "-o", str(env.tmp / "r.yaml")),
        "nvcrectl": lambda env: env.limited("nvcrectl", "catalog", "list", "-o", "json", stdout_file=True),
        "nvsentinel": _nvsentinel_state_full,
    },
    130: {"aicr": _aicr_interrupted, "nvcrectl": _nvcrectl_interrupted, "nvsentinel": _nvsentinel_interrupted},
}


def test_every_status_of_the_table_has_a_command_per_program() -> None:
    codes = table_codes()
    assert codes == sorted(codes) and 9 in codes
    assert sorted([*CASES, *NO_COMMAND]) == codes
    assert all(sorted(CASES[code]) == list(PROGRAMS) for code in CASES)


@pytest.mark.parametrize(("code", "program"), [(code, program) for code in CASES for program in PROGRAMS], ids=str)
def test_the_command_ends_with_the_status_and_one_error_line(
    code: int, program: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ran = CASES[code][program](Env(request, tmp_path))
    errors = [line for line in ran.stderr.splitlines() if line.startswith("error:")]
    assert ran.code == code, ran.stderr
    if code == 0:
        assert errors == [], ran.stderr
    elif code != 1:  # a verdict may list its findings as lines (``rules check``)
        assert len(errors) == 1 and ran.stderr.splitlines()[-1] == errors[0], ran.stderr


def test_an_unexpected_exception_is_8_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    from shared import cli

    app = typer.Typer()

    @app.command()
    def broken() -> None:
        raise RuntimeError("a bug")

    assert cli.run(app, "prog", []) == 8
    assert capsys.readouterr().err == "error: internal error: a bug (run with --debug for a traceback)\n"
