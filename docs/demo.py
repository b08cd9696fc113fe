"""The life of one cluster, behind ``make demo``.

recipe → bundle → simulated install → validate → certification (a NIC at 40 % is found and named)
→ report → nvsentinel in monitor mode, then enforcing, its monitors reading the simulated nodes'
files → an Xid 79 on one GPU → the seed's GPU rule set cordons and taints the node → drain →
remediation (a simulated reboot) → the node proves itself again and returns to service, its
conditions cleared, with no hand step → a driver upgrade → the drift gate fails → re-certification.

Every step runs the real console scripts as subprocesses and prints each command (``$ …``) before
its output. Long-running programs (the simulated cluster, ``nvsentinel run``, the monitors) run in
the background, each in its own process group, their output kept in ``logs/`` of the work
directory; the demo shows their new lines (trimmed) after each step and stops them all when it
ends, also on failure, Ctrl-C or SIGTERM. Waits poll the cluster's state with deadlines; the
simulated cluster's virtual clock makes minutes of cluster time take seconds.

Exit 0 when the walk completes; otherwise the exit status of the first command that did not do
what the walk expects (or 1 for a wait that timed out).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

BIN = Path(sys.executable).parent
SPEED = 60  # virtual seconds per real second
COMMAND_TIMEOUT = 600  # real seconds any one foreground command may take: generous, for a busy machine
T = TypeVar("T")


class DemoFailed(Exception):
    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- printing and running commands


def step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def note(text: str) -> None:
    print(f"# {text}", flush=True)


def _program(name: str) -> str:
    if name == "python":
        return sys.executable
    if (BIN / name).exists():
        return str(BIN / name)
    return shutil.which(name) or name


def _trim(text: str, show_lines: int | None, last: int, width: int | None = None) -> str:
    lines = text.splitlines()
    if width is not None:
        lines = [line if len(line) <= width else line[: width - 3] + "..." for line in lines]
        text = "".join(f"{line}\n" for line in lines)
    if show_lines is None or len(lines) <= show_lines + last:
        return text
    hidden = len(lines) - show_lines - last
    out = "".join(f"{line}\n" for line in lines[:show_lines]) + f"... ({hidden} more lines)\n"
    return out + "".join(f"{line}\n" for line in lines[len(lines) - last :]) if last else out


def run(
    *argv: str,
    expect: int = 0,
    show_lines: int | None = None,
    last: int = 0,
    width: int | None = None,
    grep: str | None = None,
) -> str:
    """Print the command, run it, print its output and errors as they came (only the lines matching
    ``grep``, trimmed to ``show_lines`` first and ``last`` last lines, each cut to ``width``); a
    different exit status ends the demo."""
    print(f"$ {shlex.join(argv)}" + (f" | grep -E {shlex.quote(grep)}" if grep else ""), flush=True)
    try:
        proc = subprocess.run(
            [_program(argv[0]), *argv[1:]],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            check=False,
            timeout=COMMAND_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        raise DemoFailed(f"{argv[0]} did not finish within {COMMAND_TIMEOUT} s") from exc
    shown = proc.stdout
    if grep and proc.returncode == expect:
        shown = "".join(f"{line}\n" for line in shown.splitlines() if re.search(grep, line))
    sys.stdout.write(_trim(shown, show_lines, last, width) if proc.returncode == expect else proc.stdout)
    sys.stdout.flush()
    if proc.returncode != expect:
        raise DemoFailed(f"{argv[0]}: expected exit {expect}, got {proc.returncode}", proc.returncode or 1)
    return proc.stdout


def kubectl(*argv: str, show_lines: int | None = None) -> None:
    """kubectl is how a person looks at the cluster; the walk does not need it."""
    if not Path(_program("kubectl")).exists():
        print(f"$ kubectl {shlex.join(argv)}\n(kubectl is not installed: skipped)", flush=True)
        return
    # kubectl caches the API's discovery (KUBECACHEDIR, set to the work directory by main) and would
    # not see the CRDs the walk installs after its first call: start each call without that cache.
    shutil.rmtree(os.environ.get("KUBECACHEDIR", "kube-cache"), ignore_errors=True)
    run("kubectl", *argv, show_lines=show_lines)


# ---------------------------------------------------------------- background programs


class Background:
    """A long-running program in its own process group, its output in a log file."""

    running: list[Background] = []

    def __init__(self, label: str, argv: list[str], log: Path, *, comment: str = "") -> None:
        self.label = label
        self.argv = argv
        self.log = log
        self.offset = 0
        self.pending: list[str] = []
        print(f"$ {shlex.join(argv)} &" + (f"     # {comment}" if comment else ""), flush=True)
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [_program(argv[0]), *argv[1:]],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        Background.running.append(self)

    def new_lines(self) -> list[str]:
        with self.log.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        return complete.decode(errors="replace").splitlines()

    def show(self, keep: Callable[[str], bool] = lambda _line: True, limit: int = 8) -> None:
        """Print the lines not shown yet that ``keep`` accepts, shortened; the others wait for a later call."""
        self.pending += self.new_lines()
        lines = [_brief(line) for line in self.pending if keep(line)]
        self.pending = [line for line in self.pending if not keep(line)]
        for line in lines[:limit]:
            print(f"  [{self.label}] {line}", flush=True)
        if len(lines) > limit:
            print(f"  [{self.label}] ... ({len(lines) - limit} more lines in {self.log.name})", flush=True)

    def grep(self, keep: Callable[[str], bool]) -> None:
        """Print every line of the whole log that ``keep`` accepts (also one an earlier ``show`` passed
        over), shortened; they are not shown again."""
        self.pending = [line for line in [*self.pending, *self.new_lines()] if not keep(line)]
        for line in self.log.read_text(errors="replace").splitlines():
            if keep(line):
                print(f"  [{self.label}] {_brief(line)}", flush=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, *, quiet: bool = False) -> None:
        """Interrupt the process group (Ctrl-C), then kill it if it does not stop within 10 s."""
        if not quiet:
            print(f"# stopping {self.label} (Ctrl-C)", flush=True)
        for sig, grace in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace)
                break
        # Anything the program itself started lives on in its group: end that too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self in Background.running:
            Background.running.remove(self)

    @classmethod
    def stop_all(cls) -> None:
        for bg in reversed(list(cls.running)):
            bg.stop(quiet=True)


def _brief(line: str, width: int = 150) -> str:
    """A HealthEvent line of a monitor as one short row; any other line cut to ``width``."""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        ev = json.loads(line)
        if isinstance(ev, dict) and "checkName" in ev:
            entities = ",".join(
                f"{e['entityType']}={e['entityValue']}"
                for e in ev.get("entitiesImpacted") or []
                if e.get("entityType") != "GPU_UUID"
            )
            kind = "healthy" if ev.get("isHealthy") else "FATAL" if ev.get("isFatal") else "non-fatal"
            line = (
                f"HealthEvent {ev.get('nodeName')} {ev['checkName']} {entities} {kind} "
                f"{ev.get('recommendedAction')}: {ev.get('message')}"
            )
    line = line.replace("[nvsentinel] ", "")
    return line if len(line) <= width else line[: width - 3] + "..."


# ---------------------------------------------------------------- waiting on the cluster


class Cluster:
    """Reads of the simulated cluster's state, for the waits (the same objects kubectl shows)."""

    def __init__(self, kubeconfig: Path) -> None:
        from shared.kube import client

        self.api = client.new_client(kubeconfig=kubeconfig)

    def get(self, path: str) -> dict[str, Any] | None:
        from shared import errors
        from shared.kube import rest

        try:
            return rest.get(self.api, path)
        except errors.ToolError:
            return None

    def node(self, name: str) -> dict[str, Any]:
        return self.get(f"/api/v1/nodes/{name}") or {}

    def cordoned(self, name: str) -> bool:
        return bool((self.node(name).get("spec") or {}).get("unschedulable"))

    def ready(self, name: str) -> bool:
        conditions = (self.node(name).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def annotation(self, node: str, key: str) -> str:
        return str(((self.node(node).get("metadata") or {}).get("annotations") or {}).get(key) or "")

    def label(self, node: str, key: str) -> str:
        return str(((self.node(node).get("metadata") or {}).get("labels") or {}).get(key) or "")

    def items(self, path: str) -> list[dict[str, Any]]:
        return list((self.get(path) or {}).get("items") or [])

    def create_all(self, manifest: str) -> None:
        """Create a manifest's Namespaces and Pods, for when kubectl is not installed."""
        from shared import yamlio
        from shared.kube import rest

        for obj in yamlio.loads_all(manifest):
            meta = obj["metadata"]
            path = rest.core_path("namespaces" if obj["kind"] == "Namespace" else "pods", meta.get("namespace"))
            rest.create(self.api, path, obj)
            print(f"{obj['kind'].lower()}/{meta['name']} created (through the API)", flush=True)

    def close(self) -> None:
        from shared.kube import client

        client.close(self.api)


WAIT_SECONDS = 300.0
"""Real seconds a ``wait_for`` may take: far beyond the few seconds each takes on an idle machine, so
that only a broken walk reaches it, also on a busy one. Every wait is for a state that lasts once
reached (a cordon, a verdict, a condition), never for a passing one the fast clock could skip."""


def wait_for(what: str, check: Callable[[], T], timeout: float = WAIT_SECONDS) -> T:
    """Poll ``check`` until it returns something true; the demo fails after ``timeout`` real seconds."""
    note(f"waiting until {what}")
    start = time.monotonic()
    while True:
        value = check()
        if value:
            note(f"... {what}: {time.monotonic() - start:.1f} s")
            return value
        if time.monotonic() - start > timeout:
            raise DemoFailed(f"timed out after {timeout:.0f} s waiting until {what}")
        time.sleep(0.2)


# ---------------------------------------------------------------- the walk


def main() -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored

    def _terminate(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    atexit.register(Background.stop_all)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="aicr-demo-"))
    os.chdir(work)
    (work / "logs").mkdir()
    os.environ["KUBECACHEDIR"] = str(work / "kube-cache")
    print(f"Working in {work}")
    try:
        configure()
        with simulated_cluster(work) as cluster:
            install_and_validate()
            certify()
            controller = operate(work, cluster)
            validate_return(cluster, controller)
            drift_and_recertify(cluster, controller)
    except DemoFailed as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        print("\ndemo: interrupted", file=sys.stderr)
        return 130
    finally:
        Background.stop_all()
    print(
        f"\nDemo finished in {time.monotonic() - started:.0f} s. The recipe, the bundles, the certification "
        f"report and every background program's log are in {work}"
    )
    return 0


def configure() -> None:
    criteria = [
        "--service",
        "eks",
        "--accelerator",
        "h100",
        "--os",
        "ubuntu",
        "--intent",
        "inference",
        "--platform",
        "dynamo",
    ]
    step("1. Configure: resolve a version-pinned recipe for the target environment")
    run("aicr", "recipe", *criteria, "-o", "recipe.yaml")
    run("aicr", "recipe", *criteria, "--format", "table")
    step("2. Review: why does gpu-operator look like this? (which overlay set each field)")
    run("aicr", "recipe", *criteria, "--explain", grep="^(COMPONENT|gpu-operator) ", show_lines=24)
    step("3. Query one merged value, as a script would")
    run("aicr", "query", *criteria[:8], "--selector", "components.gpu-operator.values.driver.version")
    step("4. Bad input is one line and exit 2, with nothing written")
    run("aicr", "recipe", "--service", "ecs", "-o", "never.yaml", expect=2)
    assert not Path("never.yaml").exists()
    step("5. Bundle: one recipe, five deployers, the dependency order encoded in each")
    for deployer in ("helm", "argocd", "argocd-helm", "flux", "helmfile"):
        run(
            "aicr",
            "bundle",
            "--recipe",
            "recipe.yaml",
            "--deployer",
            deployer,
            "--output",
            f"bundle-{deployer}",
            "--repo",
            "https://github.com/example/gitops.git",
            "--accelerated-node-selector",
            "nodeGroup=gpu",
        )
    run("ls", "bundle-helm")
    run("sed", "-n", "/^echo/,$p", "bundle-helm/deploy.sh", show_lines=8)
    step("6. Verify: the checksums prove nothing changed; an edit is named and fails with exit 1")
    run("aicr", "verify", "bundle-flux")
    with open("bundle-flux/kustomization.yaml", "a", encoding="utf-8") as handle:
        handle.write("# edited by hand\n")
    run("aicr", "verify", "bundle-flux", expect=1)


KC = ["--kubeconfig", "kubeconfig"]


@contextlib.contextmanager
def simulated_cluster(work: Path) -> Iterator[Cluster]:
    """The built-in simulated GPU cluster in its own process group, stopped when the block ends."""
    step("7. A cluster to hold to the recipe: the built-in simulated GPU cluster (8 H100 nodes, 2 racks)")
    note(
        f"virtual time runs {SPEED}x: a 3-minute reboot takes 3 s; each node's kern.log, DCGM health and "
        "sysfs live under nodes/<node>/"
    )
    server = Background(
        "sim",
        [
            "python",
            "-m",
            "shared.sim",
            "serve",
            "--nodes",
            "8",
            "--gpu",
            "h100",
            "--racks",
            "2",
            "--port",
            "0",
            "--speed",
            str(SPEED),
            "--node-root",
            "nodes",
            "--seed",
            "7",
            "--kubeconfig-out",
            "kubeconfig",
        ],
        work / "logs" / "sim.log",
    )
    wait_for(
        "the simulated cluster is ready",
        lambda: not server.alive() or any(line.startswith("ready ") for line in server.log.read_text().splitlines()),
    )
    if not server.alive():
        raise DemoFailed("the simulated cluster did not start: " + server.log.read_text()[-500:])
    server.show()
    cluster = Cluster(work / "kubeconfig")
    try:
        yield cluster
    finally:
        cluster.close()
        for bg in reversed(list(Background.running)):  # the cluster's clients first, then the cluster
            if bg is not server:
                bg.stop()
        server.stop()


def install_and_validate() -> None:
    kubectl(*KC, "get", "nodes", "-L", "nvidia.com/gpu.product,topology.kubernetes.io/rack", show_lines=4)
    note("deploying the bundle needs helm and a real cluster; here the simulator installs the recipe as Helm would:")
    note(
        "the seed stubs the CRDs of every release it installs, unless they exist; install the real ones of "
        "nvcre and nvsentinel first, as their chart does"
    )
    run("nvcrectl", "crds", "install", *KC)
    run("nvsentinel", "crds", "install", *KC)
    run("python", "-m", "shared.sim", "seed", *KC, "--recipe", "recipe.yaml", width=150)
    step("8. Validate: every constraint and every component's health asserts, against the live cluster")
    run("aicr", "validate", "--recipe", "recipe.yaml", *KC, show_lines=6, last=2)
    note("the validated state becomes the golden snapshot the drift gate compares with")
    run("aicr", "snapshot", *KC, "-o", "cm://default/golden")


RENDER_SUMMARY = (
    r"^    kind: |^      name: hand-over|^        numNodes: |numProcPerNode: |^            - name: (node|launcher)$|"
    r"^              dependsOn:|^                  - name: (node|launcher)$|podAntiAffinity:"
)
"""The lines of ``render -o yaml`` that show the shape: kinds, names, node counts, the two replicated jobs."""

CERTIFICATION = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: {name}
spec:
  target:
    nodeSelector: {{nvidia.com/gpu.present: "true"}}
  thresholds:
    busBandwidthGBps: value >= 300
  categories:
    - {{domain: communication, variant: nccl-all-reduce}}
"""


def certify() -> None:
    step(
        "9. Certify before hand-over: one NIC of node-005 runs at 40 %; the all-reduce fails and isolation "
        "names the node"
    )
    Path("certification.yaml").write_text(CERTIFICATION.format(name="hand-over"), encoding="utf-8")
    run("python", "-m", "shared.sim", "inject", *KC, "node-005:nic[3]=0.4")
    run("cat", "certification.yaml")
    note("the recipe installed Kubeflow Trainer; setup check says what each test needs and what it runs as")
    run("nvcrectl", "setup", "check", *KC, "-c", "communication/nccl-all-reduce")
    note(
        "each group is a TrainJob: a launcher without GPUs runs mpirun over one sshd worker per node "
        "(8 ranks each), through the hostfile Trainer writes"
    )
    run(
        "nvcrectl",
        "certification",
        "render",
        "--cert-file",
        "certification.yaml",
        *KC,
        "-o",
        "yaml",
        grep=RENDER_SUMMARY,
    )
    run(
        "nvcrectl",
        "certification",
        "run",
        "--cert-file",
        "certification.yaml",
        *KC,
        "--wait",
        "--timeout",
        "2h",
        expect=1,
    )
    note("every round's groups ran as TrainJobs; the scheduler placed round 1's launcher and its 8 workers:")
    kubectl(*KC, "get", "trainjobs", show_lines=4)
    kubectl(
        *KC,
        "get",
        "events",
        "--field-selector",
        "reason=Scheduled,involvedObject.kind=Pod",
        "--sort-by=.firstTimestamp",
        "-o",
        "custom-columns=POD:.involvedObject.name,MESSAGE:.message",
        show_lines=10,
    )
    step("10. Report: the run is recorded in the Certification object; the report is also JSON for CI")
    run("nvcrectl", "certification", "list", *KC)
    run(
        "nvcrectl",
        "certification",
        "report",
        "hand-over",
        *KC,
        "-o",
        "json",
        "--results-file",
        "certification-report.json",
        show_lines=10,
        expect=1,
    )


VALUES = """# nvsentinel values for this cluster, over the embedded defaults (docs/nvsentinel.md).
# The product description's example rule set, verbatim: a fatal GPU event cordons the node and taints
# it nvidia.com/gpu-error=fatal:NoSchedule. A ruleSets list replaces the defaults' whole list, so the
# NIC rule set the first step relies on is listed too.
fault-quarantine:
  validation:
    enabled: true  # a repaired node comes back through validation, not through a healthy event
  ruleSets:
    - enabled: true
      version: "1"
      name: "GPU fatal error ruleset"
      priority: 100
      match:
        all:
          - kind: "HealthEvent"
            expression: "event.agent == 'gpu-health-monitor' && event.componentClass == 'GPU' && event.isFatal == true"
          - kind: "Node"
            expression: |
              !('k8saas.nvidia.com/ManagedByNVSentinel' in node.metadata.labels &&
                node.metadata.labels['k8saas.nvidia.com/ManagedByNVSentinel'] == "false")
      cordon:
        shouldCordon: true
      taint:
        key: "nvidia.com/gpu-error"
        value: "fatal"
        effect: "NoSchedule"
    - version: "1"
      name: "NIC health monitor fatal error ruleset"
      match:
        all:
          - kind: "HealthEvent"
            expression: "event.agent == 'nic-health-monitor' && event.isFatal == true"
      cordon:
        shouldCordon: true
# The product description's lifecycle switches: validate repaired nodes, and uncordon on a pass.
global:
  lifecycleManager:
    enabled: true
lifecycle-manager:
  config:
    schedulingGate:
      cordon:
        remove: true
# Tenant pods are evicted at once when their node is quarantined (the default waits for them to finish).
node-drainer:
  userNamespaces:
    - {name: "tenant-*", mode: "Immediate"}
"""

TENANT = """apiVersion: v1
kind: Namespace
metadata: {name: tenant-a}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: tenant-a}
spec:
  nodeName: node-002
  restartPolicy: Always
  containers:
    - name: main
      image: registry.example/tenant-a/trainer:1
      command: [python, train.py]
      resources: {limits: {nvidia.com/gpu: 8}}
"""

CAUSES = "nvsentinel.nvidia.com/quarantine-causes"


def operate(work: Path, cluster: Cluster) -> Background:
    """Monitor mode, then enforcing through the remediation; returns the enforcing ``nvsentinel run``."""
    monitors = monitor_mode(work, cluster)
    controller = enforce(work, cluster, monitors)
    remediate(cluster, controller)
    return controller


def monitor_mode(work: Path, cluster: Cluster) -> list[Background]:
    """Step 11: nvsentinel records a quarantine but touches no node; returns the Xid and DCGM monitors, running."""
    logs = work / "logs"
    step("11. Operate, in monitor mode first: nvsentinel records what it would do and touches no node")
    Path("nvsentinel-values.yaml").write_text(VALUES, encoding="utf-8")
    run("cat", "nvsentinel-values.yaml")
    run("nvsentinel", "rules", "check", "-f", "nvsentinel-values.yaml")
    controller = Background(
        "nvsentinel run",
        ["nvsentinel", "run", "-f", "nvsentinel-values.yaml", *KC],
        logs / "nvsentinel-monitor-mode.log",
        comment="the controllers, in monitor mode",
    )
    xid = Background(
        "xid monitor",
        ["nvsentinel", "monitor", "xid", "--node-root", "nodes", "--follow", "--interval", "500ms", *KC],
        logs / "monitor-xid.log",
        comment="follows every nodes/<node>/kern.log",
    )
    dcgm = Background(
        "dcgm monitor",
        [
            "nvsentinel",
            "monitor",
            "dcgm",
            "--node-root",
            "nodes",
            "--state",
            "dcgm-state.json",
            "--interval",
            "1s",
            *KC,
        ],
        logs / "monitor-dcgm.log",
        comment="reads every nodes/<node>/dcgm-health.json (dcgmi health -c -j)",
    )
    nic = Background(
        "nic monitor",
        ["nvsentinel", "monitor", "nic", "--node-root", "nodes", "--interval", "1s", "--state", "nic-state.json", *KC],
        logs / "monitor-nic.log",
        comment="reads every nodes/<node>/sys/class/infiniband",
    )
    wait_for("the NIC monitor has read every port once (its baseline)", lambda: Path("nic-state.json").exists())
    note("the technician takes node-005's bad port down to replace the cable the certification named")
    run("python", "-m", "shared.sim", "inject", *KC, "node-005:nic[3]=0")
    wait_for(
        "nvsentinel has recorded a quarantine of node-005",
        lambda: cluster.annotation("node-005", CAUSES) not in ("", "{}"),
    )
    nic.show()
    controller.show()
    run("nvsentinel", "nodes", *KC, "-o", "wide")
    kubectl(*KC, "get", "node", "node-005")
    note("monitor mode: node-005 is recorded as quarantined, but it is not cordoned")
    note("the cable is replaced; the port comes up and the NIC monitor reports it healthy")
    run("python", "-m", "shared.sim", "clear", *KC, "node-005")
    wait_for("nvsentinel has lifted node-005's record", lambda: cluster.annotation("node-005", CAUSES) in ("", "{}"))
    nic.show()
    controller.show()
    run("nvsentinel", "nodes", *KC)
    nic.stop()
    controller.stop()
    return [xid, dcgm]


def enforce(work: Path, cluster: Cluster, monitors: list[Background]) -> Background:
    """Steps 12-15: an Xid on a tenant's node ends in cordon and drain; returns the enforcing controller."""
    logs = work / "logs"
    step("12. Enforce: a tenant trains on node-002; nvsentinel now cordons, drains and remediates")
    Path("tenant.yaml").write_text(TENANT, encoding="utf-8")
    kubectl(*KC, "apply", "-f", "tenant.yaml")
    if not Path(_program("kubectl")).exists():
        cluster.create_all(TENANT)
    wait_for(
        "the tenant's pod is Running on node-002",
        lambda: (
            (cluster.get("/api/v1/namespaces/tenant-a/pods/trainer") or {}).get("status", {}).get("phase") == "Running"
        ),
    )
    kubectl(*KC, "get", "pods", "-n", "tenant-a", "-o", "wide")
    controller = Background(
        "nvsentinel run",
        ["nvsentinel", "run", "-f", "nvsentinel-values.yaml", "--enforce", *KC],
        logs / "nvsentinel-enforcing.log",
        comment="enforcing",
    )

    step("13. An Xid 79 on GPU 3 of node-002: the GPU has fallen off the bus")
    run("python", "-m", "shared.sim", "inject", *KC, "node-002:xid[3]=79")
    run("tail", "-n", "2", "nodes/node-002/kern.log")
    # the cordon stays until validation passes (or the walk fails): a state that lasts, safe to wait for
    wait_for("node-002 is cordoned", lambda: cluster.cordoned("node-002"))
    for monitor in monitors:
        monitor.show()
    controller.show(lambda line: "Quarantined" in line)
    step("14. Quarantine: the GPU rule set matched the DCGM monitor's fatal Xid; the node is cordoned and tainted")
    run("nvsentinel", "nodes", *KC, "-o", "wide")
    run("nvsentinel", "events", "list", *KC, "--node", "node-002")
    step("15. Drain: the tenant's pod is evicted through the Eviction API (PodDisruptionBudgets apply)")
    wait_for(
        "the tenant's pod is gone from node-002",
        lambda: cluster.get("/api/v1/namespaces/tenant-a/pods/trainer") is None,
    )
    controller.show(lambda line: "evict" in line)
    kubectl(*KC, "get", "pods", "-n", "tenant-a")
    return controller


def remediate(cluster: Cluster, controller: Background) -> None:
    """Step 16: the remediation reboots the node through a RebootNode the simulated cluster carries out."""
    step("16. Remediation: RESTART_BM becomes a RebootNode; the simulated cluster carries out the reboot")
    reboots = "/apis/janitor.dgxc.nvidia.com/v1alpha1/rebootnodes"
    reboot = wait_for(
        "a RebootNode names node-002",
        lambda: next(
            (r["metadata"]["name"] for r in cluster.items(reboots) if r.get("spec", {}).get("nodeName") == "node-002"),
            "",
        ),
    )
    controller.show(lambda line: "RebootNode" in line)
    kubectl(*KC, "get", "rebootnodes")
    # Wait for what stays true once it happened (the reboot signal sent, or already done), not for
    # the NotReady window itself: on a busy machine the simulated minutes can pass before a poll.
    wait_for(
        "node-002 goes down for the reboot",
        lambda: any(
            (c.get("type"), c.get("status")) in (("SignalSent", "True"), ("NodeReady", "True"))
            for c in ((cluster.get(f"{reboots}/{reboot}") or {}).get("status") or {}).get("conditions") or []
        ),
    )
    kubectl(*KC, "get", "node", "node-002")
    note("the reboot takes 3 minutes of cluster time; run the virtual clock ahead instead of waiting")
    run("python", "-m", "shared.sim", "clock", *KC, "--advance", "180")
    wait_for(
        f"RebootNode {reboot} reports NodeReady",
        lambda: any(
            c.get("type") == "NodeReady" and c.get("status") == "True"
            for c in ((cluster.get(f"{reboots}/{reboot}") or {}).get("status") or {}).get("conditions") or []
        ),
    )
    wait_for("node-002 is Ready again", lambda: cluster.ready("node-002"))
    controller.show(lambda line: "remediat" in line.lower())
    kubectl(*KC, "get", "node", "node-002")
    run("tail", "-n", "1", "nodes/node-002/kern.log")
    run("nvsentinel", "nodes", *KC, "-o", "wide")
    note("repaired, but not back in service: node-002 must prove itself before it takes work again")


VALIDATIONS = "/apis/nvsentinel.nvidia.com/v1alpha1/validationrequests"
VALIDATION_STATE = "nvsentinel.nvidia.com/validation-state"


def _requests(cluster: Cluster, node: str) -> list[dict[str, Any]]:
    return [
        r
        for r in cluster.items(VALIDATIONS)
        if any(n.get("name") == node for n in (r.get("spec") or {}).get("nodes") or [])
    ]


def _phase(cluster: Cluster, name: str) -> str:
    return str(((cluster.get(f"{VALIDATIONS}/{name}") or {}).get("status") or {}).get("phase") or "")


STATE_LABEL = "dgxc.nvidia.com/nvsentinel-state"


def _condition(cluster: Cluster, node: str, kind: str) -> dict[str, Any]:
    conditions = (cluster.node(node).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), {})


def show_verdict(controller: Background, request: str) -> None:
    """Print the controller's log lines for ``request``'s verdict once it has logged it: the status is written
    just before the line, so a caller that has seen the status waits for the line too."""

    def verdict_logged(line: str) -> bool:
        # The request's own verdict ("NAME: Succeeded: ..."), not one of its test runs' ("NAME-g0-a1: ...").
        return f"{request}: Succeeded" in line or f"{request}: Failed" in line

    wait_for(
        f"the controller logs {request}'s verdict",
        lambda: any(verdict_logged(line) for line in controller.log.read_text(errors="replace").splitlines()),
    )
    controller.grep(lambda line: request in line and ("Succeeded" in line or "Failed" in line))


def validate_return(cluster: Cluster, controller: Background) -> None:
    step(
        "17. Validation: quarantine hands the repaired node to the lifecycle controller, which runs a ValidationRequest"
    )
    request = wait_for(
        "a ValidationRequest names node-002",
        lambda: next((r["metadata"]["name"] for r in _requests(cluster, "node-002")), ""),
    )
    controller.show(lambda line: "takes the node over" in line or "created" in line)
    kubectl(*KC, "get", "validationrequests")
    kubectl(*KC, "get", "nodes", "-l", VALIDATION_STATE, "-L", VALIDATION_STATE)
    wait_for(f"{request} has a verdict", lambda: _phase(cluster, request) in ("Succeeded", "Failed"))

    show_verdict(controller, request)
    run("nvsentinel", "validation", "list", *KC)
    if _phase(cluster, request) != "Succeeded":
        raise DemoFailed(f"{request} did not pass")
    step("18. Pass: the gate and the quarantine taint go, the fault conditions are cleared; node-002 takes work again")
    wait_for("node-002 is schedulable again", lambda: not cluster.cordoned("node-002"))
    wait_for(
        "node-002's SysLogsXIDError condition is False",
        lambda: _condition(cluster, "node-002", "SysLogsXIDError").get("status") == "False",
    )
    kubectl(*KC, "get", "node", "node-002", "-L", VALIDATION_STATE, "-L", STATE_LABEL)
    node = cluster.node("node-002")
    taints = ", ".join(f"{t['key']}:{t['effect']}" for t in (node.get("spec") or {}).get("taints") or []) or "none"
    note(f"node-002: schedulable, taints: {taints}")
    for kind in ("SysLogsXIDError", "GpuDriverWatch"):
        c = _condition(cluster, "node-002", kind)
        note(f"node-002 condition {kind}={c.get('status')} ({c.get('reason')}): {c.get('message')}")
    labels = (node.get("metadata") or {}).get("labels") or {}
    note(
        "node-002 labels: "
        + ", ".join(
            f"{k}={v}" for k, v in sorted(labels.items()) if "cordon" in k or k in (STATE_LABEL, VALIDATION_STATE)
        )
    )
    kubectl(
        *KC,
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=node-002,reason=ValidationPassed",
        "-o",
        "custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message",
    )
    run("nvsentinel", "nodes", *KC, "-o", "wide")


def drift_and_recertify(cluster: Cluster, controller: Background) -> None:
    step("19. Drift: the driver on node-001 is upgraded in place, and the CI gate fails")
    run(
        "python",
        "-m",
        "shared.sim",
        "upgrade-driver",
        *KC,
        "--version",
        "580.126.09",
        "--nodes",
        "node-001",
        show_lines=2,
    )
    ignore = ["--ignore", "NodeTopology.summary.*"]
    run("aicr", "diff", "--baseline", "cm://default/golden", *KC, "--fail-on-drift", "-t", "table", *ignore, expect=1)
    run(
        "aicr",
        "diff",
        "--baseline",
        "cm://default/golden",
        *KC,
        "--fail-on-drift",
        "-t",
        "yaml",
        *ignore,
        "-o",
        "drift.yaml",
        expect=1,
    )
    step("20. Re-certification: the drifted node is cordoned and must pass the all-reduce again")
    run(
        "nvsentinel",
        "validation",
        "create",
        "--nodes-from",
        "drift.yaml",
        "--cordon",
        "--tests",
        "nccl-all-reduce",
        "--name",
        "after-driver-upgrade",
        "--wait",
        "--timeout",
        "2h",
        *KC,
    )
    show_verdict(controller, "after-driver-upgrade")
    wait_for("node-001 is schedulable again", lambda: not cluster.cordoned("node-001"))
    run("nvsentinel", "validation", "list", *KC)
    note("re-certified: the current state becomes the new golden snapshot, and the gate passes")
    run("aicr", "snapshot", *KC, "-o", "cm://default/golden")
    run("aicr", "diff", "--baseline", "cm://default/golden", *KC, "--fail-on-drift", "-t", "table", *ignore)


if __name__ == "__main__":
    sys.exit(main())
