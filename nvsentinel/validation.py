"""``nvsentinel validation create|list|get|delete|cordon``: ValidationRequests and the drift cordon."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nvsentinel import _options as opt
from shared import output as out

app = typer.Typer(
    help="Node validation: ValidationRequests run by the lifecycle controller of `nvsentinel run`.",
    no_args_is_help=True,
)
Names = opt.ValidationRequestNames


COLUMNS = (
    out.Column("NAME", lambda r: r.summary()["name"]),
    out.Column("PHASE", lambda r: r.summary()["phase"]),
    out.Column("NODES", lambda r: ",".join(r.summary()["nodes"])),
    out.Column("TESTS", lambda r: ",".join(r.summary()["tests"]) or "(defaults)"),
    out.Column("FAILED NODES", lambda r: ",".join(r.summary()["failedNodes"])),
    out.Column("MESSAGE", lambda r: r.summary()["message"], wide=True),
)


def _show(requests: list[Any], output: out.Format, *, single: bool = False) -> None:
    data = requests[0] if single and requests else requests
    out.emit(data, output, table=out.Table(requests, COLUMNS), exclude_none=True)


@app.command("create")
def create(
    nodes: Annotated[
        str | None, typer.Option("--nodes", help="Comma-separated node names.", show_default=False)
    ] = None,
    nodes_from: Annotated[
        Path | None,
        typer.Option(
            "--nodes-from",
            help="A DriftReport (aicr diff -t yaml|json): validate the nodes its changes name.",
            show_default=False,
        ),
    ] = None,
    tests: Annotated[
        str | None,
        typer.Option(
            "--tests", help="Comma-separated test names (default: the configured defaultTests).", show_default=False
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Request name (default: vr-<hash>).", show_default=False)
    ] = None,
    cordon: Annotated[
        bool,
        typer.Option(
            "--cordon",
            help="Cordon the nodes first, owned by --owner; the request takes that cordon over when it starts.",
        ),
    ] = False,
    owner: Annotated[str, typer.Option("--owner", help="Cordon owner with --cordon.")] = "drift",
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the verdict: exit 0 pass, 1 fail, 5 timeout.")] = False,
    timeout: Annotated[
        str | None, typer.Option("--timeout", help="With --wait, in cluster time: e.g. 2h.", show_default=False)
    ] = None,
    values: opt.Values = None,
    output: opt.Output = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Ask the lifecycle controller to gate NODES, run TESTS on them and release them on a pass."""
    from shared import durations
    from shared.operate import validation as service

    chosen = opt.chosen_format(output)
    seconds = durations.parse(timeout, where="--timeout") if timeout else None
    names = service.split(nodes)
    service.check_names(names, where="--nodes")
    names += service.drift_nodes(nodes_from) if nodes_from is not None else []
    result = service.create(
        kubeconfig=kubeconfig,
        context=context,
        node_names=sorted(set(names)),
        tests=service.split(tests),
        name=name,
        cordon_owner=owner if cordon else None,
        values_file=values,
        wait=wait,
        timeout=seconds,
    )
    out.acted("node", result.cordoned, f"cordoned (owner {owner})", to_stderr=True)
    out.acted("validationrequest.nvsentinel.nvidia.com", [result.request.name], "created", to_stderr=True)
    if not result.waited:
        return 0
    _show([result.request], chosen, single=True)
    if result.timed_out:
        out.error_line(f"error: validationrequest {result.request.name} did not finish within {timeout}")
        return 5
    return 0 if result.request.status.phase == "Succeeded" else 1


@app.command("list")
def list_(
    output: opt.Output = "table",
    strict: opt.Strict = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Every ValidationRequest, oldest first; one that cannot be read is skipped with a warning naming it."""
    from shared.operate import validation as service

    chosen = opt.chosen_format(output)
    listed = service.list_requests(kubeconfig=kubeconfig, context=context)
    for skipped in listed.skipped:
        out.warning(f"skipping {skipped.what}: {skipped.reason}")
    _show(listed.items, chosen)
    return 1 if strict and listed.skipped else 0


@app.command("get")
def get(
    name: opt.ValidationRequestName,
    output: opt.Output = "yaml",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """One ValidationRequest with its test groups and attempts."""
    from shared.operate import validation as service

    chosen = opt.chosen_format(output)
    _show([service.get(kubeconfig=kubeconfig, context=context, name=name)], chosen, single=True)


@app.command("delete")
def delete(names: Names, kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Delete requests; the controller releases their nodes (a failed node without a re-run)."""
    from shared.operate import validation as service

    service.delete(kubeconfig=kubeconfig, context=context, names=names)
    out.acted("validationrequest.nvsentinel.nvidia.com", names, "deleted", to_stderr=True)


@app.command("cordon")
def cordon(
    nodes: opt.NodeNames,
    owner: Annotated[
        str,
        typer.Option(
            "--owner",
            help="Recorded cordon owner; a request takes over a "
            "cordon whose owner is in schedulingGate.cordon.takeOverFrom.",
        ),
    ] = "drift",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Cordon nodes on OWNER's account (a cordon someone else holds is left as it is)."""
    from shared.operate import validation as service

    done = set(service.cordon_nodes(kubeconfig=kubeconfig, context=context, names=nodes, owner=owner))
    for node in nodes:
        out.message(f"node/{node} cordoned (owner {owner})" if node in done else f"node/{node} already cordoned")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="validation")
