"""The lifecycle walk-through behind ``make demo``.

Runs the real console scripts as subprocesses, printing each command before its output, over what
exists so far. Stops at the first command that fails, with that command's exit status.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

BIN = Path(sys.executable).parent


def step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def run(*argv: str, expect: int = 0, show_lines: int | None = None, last: int = 0) -> str:
    print(f"$ {shlex.join(argv)}", flush=True)
    program = sys.executable if argv[0] == "python" else str(BIN / argv[0]) if (BIN / argv[0]).exists() else argv[0]
    proc = subprocess.run([program, *argv[1:]], capture_output=True, text=True, check=False)
    out = proc.stdout
    lines = out.splitlines()
    if show_lines is not None and len(lines) > show_lines + last:
        hidden = len(lines) - show_lines - last
        out = "".join(f"{line}\n" for line in lines[:show_lines]) + f"... ({hidden} more lines)\n"
        out += "".join(f"{line}\n" for line in lines[len(lines) - last:]) if last else ""
    sys.stdout.write(out)
    sys.stdout.write(proc.stderr)
    if proc.returncode != expect:
        print(f"demo: expected exit {expect}, got {proc.returncode}", file=sys.stderr)
        sys.exit(proc.returncode or 1)
    return proc.stdout


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="aicr-demo-"))
    os.chdir(work)
    print(f"Working in {work}")

    step("1. Configure: resolve a version-pinned recipe for the target environment")
    run("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "--os", "ubuntu",
        "--intent", "inference", "--platform", "dynamo", "-o", "recipe.yaml")
    run("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "--os", "ubuntu",
        "--intent", "inference", "--platform", "dynamo", "--format", "table")
    step("2. Review: why does gpu-operator look like this? (which overlay set each field)")
    run("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "--os", "ubuntu",
        "--intent", "inference", "--platform", "dynamo", "--explain", show_lines=24)
    step("3. Query one merged value, as a script would")
    run("aicr", "query", "--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference",
        "--selector", "components.gpu-operator.values.driver.version")
    step("4. Bad input is one line and exit 2, with nothing written")
    run("aicr", "recipe", "--service", "ecs", "-o", "never.yaml", expect=2)
    assert not Path("never.yaml").exists()
    step("5. Bundle: one recipe, five deployers, the dependency order encoded in each")
    for deployer in ("helm", "argocd", "argocd-helm", "flux", "helmfile"):
        run("aicr", "bundle", "--recipe", "recipe.yaml", "--deployer", deployer, "--output", f"bundle-{deployer}",
            "--repo", "https://github.com/example/gitops.git", "--accelerated-node-selector", "nodeGroup=gpu")
    run("ls", "bundle-helm")
    run("sed", "-n", "/^echo/,$p", "bundle-helm/deploy.sh", show_lines=8)
    step("6. Verify: the checksums prove nothing changed; an edit is named and fails with exit 1")
    run("aicr", "verify", "bundle-flux")
    with open("bundle-flux/kustomization.yaml", "a", encoding="utf-8") as handle:
        handle.write("# edited by hand\n")
    run("aicr", "verify", "bundle-flux", expect=1)
    with simulated_cluster() as kubeconfig:
        operate(kubeconfig)
    print("\nDemo finished: the recipe, five bundles and the certification file are in", work)


@contextlib.contextmanager
def simulated_cluster() -> Iterator[str]:
    """The built-in simulated GPU cluster in its own process, stopped when the block ends."""
    step("7. A cluster to hold to the recipe: the built-in simulated GPU cluster (8 H100 nodes, 2 racks)")
    argv = ["python", "-m", "shared.sim", "serve", "--nodes", "8", "--gpu", "h100", "--racks", "2", "--port", "0",
            "--speed", "60", "--node-root", "nodes", "--seed", "7", "--kubeconfig-out", "kubeconfig"]
    print(f"$ {shlex.join(argv)} &", flush=True)
    server = subprocess.Popen([sys.executable, *argv[1:]], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        print(server.stdout.readline().rstrip(), flush=True)
        yield "kubeconfig"
    finally:
        server.terminate()
        server.communicate(timeout=30)


def operate(kubeconfig: str) -> None:
    kc = ["--kubeconfig", kubeconfig]
    run("kubectl", *kc, "get", "nodes", "-L", "nvidia.com/gpu.product,topology.kubernetes.io/rack", show_lines=4)
    print("# Deploying the bundle needs helm and a real cluster; here the simulator installs the recipe as Helm would:")
    run("python", "-m", "shared.sim", "seed", *kc, "--recipe", "recipe.yaml", show_lines=0)
    step("8. Validate: every constraint and every component's health asserts, against the live cluster")
    run("aicr", "validate", "--recipe", "recipe.yaml", *kc, show_lines=6, last=2)
    step("9. Drift: take the golden snapshot, upgrade the driver on one node, and the CI gate fails")
    run("aicr", "snapshot", *kc, "-o", "cm://default/golden")
    run("python", "-m", "shared.sim", "upgrade-driver", *kc, "--version", "580.105.08", "--nodes", "node-001",
        show_lines=2)
    run("aicr", "diff", "--baseline", "cm://default/golden", *kc, "--fail-on-drift", "-t", "table",
        "--ignore", "NodeTopology.summary.*", expect=1)
    certify(kc)
    operate_health(kc)


CERTIFICATION = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: rack-pair
spec:
  target:
    nodeSelector: {nvidia.com/gpu.present: "true"}
  thresholds:
    busBandwidthGBps: value >= 300
  categories:
    - {domain: communication, variant: nccl-all-reduce}
"""


def certify(kc: list[str]) -> None:
    step("10. Certify: one NIC of node-005 degrades to 40 %; the all-reduce fails and isolation names the node")
    Path("certification.yaml").write_text(CERTIFICATION, encoding="utf-8")
    run("python", "-m", "shared.sim", "inject", *kc, "node-005:nic[3]=0.4")
    run("nvcrectl", "crds", "install", *kc)
    run("nvcrectl", "certification", "run", "--cert-file", "certification.yaml", *kc, "--wait", "--timeout", "2h",
        expect=1)


def operate_health(kc: list[str]) -> None:
    step("11. Operate: an Xid 79 on node-002 becomes a HealthEvent; the default rule set cordons the node")
    run("python", "-m", "shared.sim", "inject", *kc, "node-002:xid=79")
    run("nvsentinel", "crds", "install", *kc)
    run("nvsentinel", "monitor", "xid", "--node-root", "nodes", "--dry-run", "-o", "table")
    run("nvsentinel", "monitor", "xid", "--node-root", "nodes", *kc, show_lines=0)
    print("$ nvsentinel run --enforce &     # the controllers, stopped once node-002 is quarantined", flush=True)
    controller = subprocess.Popen([str(BIN / "nvsentinel"), "run", "--enforce", *kc], stderr=subprocess.PIPE,
                                  text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            cordoned = subprocess.run(["kubectl", *kc, "get", "node", "node-002", "-o",
                                       "jsonpath={.spec.unschedulable}"], capture_output=True, text=True, check=False)
            if cordoned.stdout.strip() == "true":
                break
            time.sleep(0.5)
    finally:
        controller.send_signal(signal.SIGINT)
        _, errors = controller.communicate(timeout=30)
    sys.stdout.write("".join(line + "\n" for line in errors.splitlines() if "Quarantined" in line))
    run("nvsentinel", "nodes", *kc, "-o", "wide")
    run("nvsentinel", "breaker", "status", *kc)


if __name__ == "__main__":
    main()
