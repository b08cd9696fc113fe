"""``python -m shared.sim``: run the emulator in the foreground, and talk to a running one.

- ``serve``: start, write the kubeconfig, print ``ready <url>``, run until Ctrl-C/SIGTERM (exit 0);
  ``--service eks|gke|aks|oke|kind`` labels the GPU nodes as that managed service does;
  ``--operators`` picks the workload operators installed (default trainer,jobset,mpi-operator);
- ``api-faults``: change injected API faults of a running server;
- ``token``: a bearer token for a ServiceAccount (RBAC applies to it), optionally as a kubeconfig;
- ``audit``: the requests the server recorded, as lines or JSON;
- ``inject`` / ``clear``: hardware faults of a running GPU cluster (``node-007:nic=0.4`` …);
- ``upgrade-driver``: a new NVIDIA driver on some or all nodes;
- ``seed``: make the cluster look as if a recipe had been installed with Helm 3;
- ``clock``: read, advance or re-pace the virtual clock.

A thin command layer: the work is in :mod:`shared.sim.server` and :mod:`shared.sim.control`.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import typer

from shared import cli, errors, stopping
from shared.sim.apiserver import kubeconfig as kubeconfig_mod

app = cli.make_app("python -m shared.sim", "The simulated cluster: a Kubernetes API emulator on 127.0.0.1.")

_KUBECONFIG_HELP = "Kubeconfig the server wrote (default: $KUBECONFIG)."


@app.callback()
def _root() -> None:
    """The simulated cluster: a Kubernetes API emulator on 127.0.0.1."""


def _target(path: Path | None) -> kubeconfig_mod.Target:
    import os

    chosen = path or (Path(os.environ["KUBECONFIG"].split(os.pathsep)[0]) if os.environ.get("KUBECONFIG") else None)
    if chosen is None:
        raise errors.InvalidInput("no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG")
    return kubeconfig_mod.read(chosen)


def _gpu_profile(gpu: str | None, service: str | None, *, implied: bool) -> str | None:
    """The node profile ``serve`` asks for: ``h100`` when GPU options imply one, ``eks/h100`` on a service."""
    from shared.sim.gpu import providers, stages

    if gpu is None and (implied or service is not None):
        gpu = "h100"
    if gpu is not None and gpu not in stages.profile_names():
        raise errors.InvalidInput(f"--gpu must be one of {', '.join(stages.profile_names())}, got {gpu!r}")
    if service is not None and service not in providers.names():
        raise errors.InvalidInput(f"--service must be one of {', '.join(providers.names())}, got {service!r}")
    return f"{service}/{gpu}" if service is not None and gpu is not None else gpu


@app.command()
def serve(
    kubeconfig_out: Path = typer.Option(..., "--kubeconfig-out", help="Where to write the kubeconfig."),
    nodes: int = typer.Option(0, "--nodes", min=0, help="Plain nodes to create (node-000, node-001, ...)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1; 0 picks a free one."),
    state: Path | None = typer.Option(None, "--state", help="Load objects from FILE and save them on exit."),
    seed: int | None = typer.Option(None, "--seed", help="Seed for uids, generated names and fault dice."),
    gpu: str | None = typer.Option(
        None,
        "--gpu",
        help="GPU node profile: h100, gb200 or a100 (default: plain "
        "nodes; h100 when --racks, --fault or --node-root is given).",
    ),
    racks: int = typer.Option(1, "--racks", min=1, help="Racks the nodes spread over (rack-0 ...)."),
    fault: list[str] = typer.Option([], "--fault", help="Hardware fault SPEC, e.g. node-007:nic=0.4 (repeatable)."),
    speed: float = typer.Option(60.0, "--speed", min=0, help="Virtual seconds per real second (0 pauses)."),
    node_root: Path | None = typer.Option(
        None, "--node-root", help="Keep each node's kern.log, DCGM health and sysfs under DIR/<node>/."
    ),
    service: str | None = typer.Option(
        None,
        "--service",
        help="Label GPU nodes as this managed service does: eks, gke, aks, oke or kind "
        "(providerID, instance type, NIC resources, network).",
    ),
    operators: str = typer.Option(
        "trainer,jobset,mpi-operator",
        "--operators",
        help="Workload operators installed (their CRDs and controllers): a comma-separated list of "
        "trainer, jobset, mpi-operator, or none for a bare cluster.",
    ),
) -> None:
    """Run the emulator in the foreground until Ctrl-C or SIGTERM."""
    from shared.sim.gpu import fabric
    from shared.sim.server import GpuSettings, SimServer

    gpu = _gpu_profile(gpu, service, implied=bool(fault) or node_root is not None or racks > 1)
    from shared.sim import operators as operators_mod

    try:
        installed = operators_mod.parse(operators)
    except ValueError as exc:
        raise errors.InvalidInput(str(exc), where="--operators") from None
    try:
        fabric.parse_all(fault)
    except ValueError as exc:
        raise errors.InvalidInput(str(exc), where="--fault") from None
    if node_root is not None:
        node_root.mkdir(parents=True, exist_ok=True)

    try:
        server = SimServer(
            port=port,
            nodes=nodes,
            seed=seed,
            state_file=state,
            speed=speed,
            node_root=node_root,
            gpus=GpuSettings(gpu=gpu, racks=racks, faults=tuple(fault)),
            run_kubelet=True,
            operators=installed,
        )
    except OSError as exc:
        raise errors.Unavailable(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from exc
    except ValueError as exc:
        raise errors.InvalidInput(str(exc), where="--fault") from None
    stop = threading.Event()
    with stopping.on_signals(stop), server:  # SIGTERM, or Ctrl-C unless started with it ignored
        server.write_kubeconfig(kubeconfig_out)
        sys.stdout.write(f"ready {server.url}\n")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass


@app.command("api-faults")
def api_faults(
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
    latency_ms: float | None = typer.Option(None, "--latency-ms", min=0, help="Delay every API request."),
    conflict_rate: float | None = typer.Option(
        None, "--conflict-rate", min=0, max=1, help="Share of updates/patches answered 409."
    ),
    error_rate: float | None = typer.Option(None, "--error-rate", min=0, max=1, help="Share of requests answered 500."),
    throttle_rate: float | None = typer.Option(
        None, "--throttle-rate", min=0, max=1, help="Share of requests answered 429."
    ),
    stored_error_rate: float | None = typer.Option(
        None, "--stored-error-rate", min=0, max=1, help="Share of writes stored, then answered 500."
    ),
    drop_watches: bool = typer.Option(False, "--drop-watches", help="Cut every open watch now."),
    down_seconds: float | None = typer.Option(
        None, "--down-seconds", min=0, help="Cut every API connection for T seconds."
    ),
    kill_after_writes: int | None = typer.Option(
        None, "--kill-after-writes", min=0, help="Writes of --identity after the K-th get no answer."
    ),
    identity: str | None = typer.Option(None, "--identity", help="User name for --kill-after-writes."),
    clear: bool = typer.Option(False, "--clear", help="Remove every fault first."),
) -> None:
    """Change how the running API misbehaves; prints the resulting settings as JSON."""
    from shared.sim import control

    target = _target(kubeconfig)
    if kill_after_writes is not None and not identity:
        raise errors.InvalidInput("--kill-after-writes needs --identity")
    body = {
        "latency_ms": latency_ms,
        "conflict_rate": conflict_rate,
        "error_rate": error_rate,
        "throttle_rate": throttle_rate,
        "stored_error_rate": stored_error_rate,
        "drop_watches": drop_watches or None,
        "down_seconds": down_seconds,
        "kill_after_writes": kill_after_writes,
        "kill_identity": identity,
        "clear": clear,
    }
    result = control.call(target, "PUT", "faults", body)
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")


@app.command()
def token(
    serviceaccount: str = typer.Option(..., "--serviceaccount", help="NAMESPACE/NAME; created if missing."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
    kubeconfig_out: Path | None = typer.Option(
        None, "--kubeconfig-out", help="Write a kubeconfig for this identity instead of printing."
    ),
) -> None:
    """A bearer token for a ServiceAccount; requests with it are checked against RBAC."""
    from shared.sim import control

    namespace, _, name = serviceaccount.partition("/")
    if not namespace or not name:
        raise errors.InvalidInput(f"--serviceaccount must be NAMESPACE/NAME, got {serviceaccount!r}")
    target = _target(kubeconfig)
    base = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    try:
        control.api_request(target, "GET", f"{base}/{name}")
    except errors.NotFound:
        control.api_request(target, "POST", base, {"metadata": {"name": name}})
    answer = control.api_request(
        target,
        "POST",
        f"{base}/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    secret = answer["status"]["token"]
    if kubeconfig_out is not None:
        kubeconfig_mod.write(
            kubeconfig_out,
            target.server,
            secret,
            user=f"system:serviceaccount:{namespace}:{name}",
            namespace=namespace,
            ca_pem=target.ca_pem,
        )
        sys.stdout.write(f"wrote {kubeconfig_out}\n")
    else:
        sys.stdout.write(secret + "\n")


@app.command()
def audit(
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
    identity: str | None = typer.Option(None, "--identity", help="Only this user's requests."),
    output: str = typer.Option("text", "--output", "-o", help="text or json."),
) -> None:
    """The requests the server recorded: identity, verb, group/resource, namespace, name, code."""
    from urllib.parse import urlencode

    from shared.sim import control

    if output not in ("text", "json"):
        raise errors.InvalidInput(f"--output must be text or json, got {output!r}")
    target = _target(kubeconfig)
    query = urlencode({"identity": identity}) if identity else ""
    records = control.call(target, "GET", "audit", query=query)["records"]
    if output == "json":
        sys.stdout.write(json.dumps(records, indent=2) + "\n")
        return
    for r in records:
        resource = f"{r['group']}/{r['resource']}" if r["group"] else r["resource"]
        sys.stdout.write(
            f"{r['identity']} {r['verb']} {resource} {r['namespace'] or '-'} {r['name'] or '-'} {r['code']}\n"
        )


def _print(result: object) -> None:
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")


@app.command()
def inject(
    specs: list[str] = typer.Argument(..., help="Fault SPECs, e.g. node-007:nic=0.4 rack-0/rack-1:link=0.3."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
) -> None:
    """Add hardware faults to a running simulated cluster; prints the active faults."""
    from shared.sim import control
    from shared.sim.gpu import faultspec

    for spec in specs:
        try:
            faultspec.parse(spec)
        except ValueError as exc:
            raise errors.InvalidInput(str(exc)) from None
    _print(control.call(_target(kubeconfig), "POST", "inject", {"specs": specs}))


@app.command()
def clear(
    specs: list[str] = typer.Argument(None, help="TARGET[:KIND[INDEX]], e.g. node-007 or node-007:nic."),
    all_faults: bool = typer.Option(False, "--all", help="Remove every hardware fault."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
) -> None:
    """Remove hardware faults (a repair by hand); prints the faults left."""
    from shared.sim import control

    if not specs and not all_faults:
        raise errors.InvalidInput("name what to clear (node-007, node-007:nic, rack-0/rack-1:link) or pass --all")
    _print(control.call(_target(kubeconfig), "POST", "clear", {"specs": specs or [], "all": all_faults}))


@app.command("upgrade-driver")
def upgrade_driver(
    version: str = typer.Option(..., "--version", help="Driver version, e.g. 575.51.03."),
    nodes: str | None = typer.Option(None, "--nodes", help="Comma-separated node names (default: all)."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
) -> None:
    """Install another NVIDIA driver: GFD labels, kernel module, the driver DaemonSet's image."""
    from shared.sim import control

    chosen = [n.strip() for n in nodes.split(",") if n.strip()] if nodes else None
    _print(control.call(_target(kubeconfig), "POST", "upgrade-driver", {"version": version, "nodes": chosen}))


@app.command("seed")
def seed_command(
    recipe: Path = typer.Option(..., "--recipe", help="A resolved recipe (aicr recipe output)."),
    breaks: list[str] = typer.Option([], "--break", help="COMPONENT=crashloop|old-chart|missing-crd|unavailable."),
    kernels: list[str] = typer.Option([], "--kernel", help="NODE=VERSION: that node reports another kernel."),
    driver_version: str | None = typer.Option(
        None, "--driver-version", help="Install this GPU driver instead of the one the recipe pins (e.g. 570.158.01)."
    ),
    data: Path | None = typer.Option(None, "--data", help="The catalog folder the recipe was resolved with."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
) -> None:
    """Make the cluster look as if the recipe's components were installed with Helm 3, with the
    values the recipe gives them: the GPU nodes run the driver it pins unless --driver-version."""
    from shared import yamlio
    from shared.sim import control, recipevalues

    def pairs(values: list[str], flag: str) -> dict[str, str]:
        found = {}
        for value in values:
            key, sep, item = value.partition("=")
            if not sep or not key or not item:
                raise errors.InvalidInput(f"{flag} takes KEY=VALUE, got {value!r}")
            found[key] = item
        return found

    document = yamlio.load_file(recipe)
    try:
        values = recipevalues.merged(document, data_dir=data)
    except ValueError as exc:
        raise errors.InvalidInput(str(exc), where=str(recipe)) from None
    body = {
        "recipe": document,
        "breaks": pairs(breaks, "--break"),
        "kernels": pairs(kernels, "--kernel"),
        "values": values,
        "driver": driver_version,
    }
    _print(control.call(_target(kubeconfig), "POST", "seed", body))


@app.command()
def clock(
    advance: float | None = typer.Option(None, "--advance", min=0, help="Run the cluster this many virtual seconds."),
    speed: float | None = typer.Option(None, "--speed", min=0, help="New speed (virtual seconds per real second)."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help=_KUBECONFIG_HELP),
) -> None:
    """Print the virtual time and speed; --advance and --speed change them first."""
    from shared.sim import control

    target = _target(kubeconfig)
    if advance is None and speed is None:
        reading = control.call(target, "GET", "clock")
    else:
        reading = control.call(target, "PUT", "clock", {"advance": advance, "speed": speed})
    # "until" (where a reader's extrapolation stops) is for programs that read the clock, not people
    _print({k: v for k, v in reading.items() if k in ("now", "speed")} if isinstance(reading, dict) else reading)


def main() -> None:
    sys.exit(cli.run(app, "python -m shared.sim"))


if __name__ == "__main__":
    main()
