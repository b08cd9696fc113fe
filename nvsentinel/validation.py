"""``nvsentinel validation create|list|get|delete|cordon``: ValidationRequests and the drift cordon."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nvsentinel import _options as opt

app = typer.Typer(
    help="Node validation: ValidationRequests run by the lifecycle controller of `nvsentinel run`.",
    no_args_is_help=True,
)
Names = Annotated[list[str], typer.Argument(help="ValidationRequest name(s).")]


def _rows(requests: list[Any]) -> list[list[Any]]:
    return [
        [
            s["name"],
            s["phase"],
            ",".join(s["nodes"]),
            ",".join(s["tests"]) or "(defaults)",
            ",".join(s["failedNodes"]),
            s["message"],
        ]
        for s in (r.summary() for r in requests)
    ]


def _show(requests: list[Any], output: str, *, single: bool = False) -> None:
    data: Any = [r.model_dump(mode="json", exclude_none=True) for r in requests]
    opt.emit(
        data[0] if single and data else data,
        output,
        headers=["NAME", "PHASE", "NODES", "TESTS", "FAILED NODES"],
        rows=[r[:5] for r in _rows(requests)],
        wide_headers=["NAME", "PHASE", "NODES", "TESTS", "FAILED NODES", "MESSAGE"],
        wide_rows=_rows(requests),
    )


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
    from shared import output as out
    from shared.lifecycle import service

    out.parse_format(output, allowed=list(out.Format), flag="--output")
    seconds = durations.parse(timeout) if timeout else None
    names = service.split(nodes) + (service.drift_nodes(nodes_from) if nodes_from is not None else [])
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
    for node in result.cordoned:
        out.message(f"node/{node} cordoned (owner {owner})")
    out.message(f"validationrequest.nvsentinel.nvidia.com/{result.request.name} created")
    if not result.waited:
        return 0
    _show([result.request], output, single=True)
    if result.timed_out:
        out.error_line(f"error: validationrequest {result.request.name} did not finish within {timeout}")
        return 5
    return 0 if result.request.status.phase == "Succeeded" else 1


@app.command("list")
def list_(output: opt.Output = "table", kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Every ValidationRequest, oldest first."""
    from shared.lifecycle import service

    _show(service.list_requests(kubeconfig=kubeconfig, context=context), output)


@app.command("get")
def get(
    name: Annotated[str, typer.Argument(help="ValidationRequest name.")],
    output: opt.Output = "yaml",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """One ValidationRequest with its test groups and attempts."""
    from shared.lifecycle import service

    _show([service.get(kubeconfig=kubeconfig, context=context, name=name)], output, single=True)


@app.command("delete")
def delete(names: Names, kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Delete requests; the controller releases their nodes (a failed node without a re-run)."""
    from shared import output as out
    from shared.lifecycle import service

    service.delete(kubeconfig=kubeconfig, context=context, names=names)
    for name in names:
        out.message(f"validationrequest.nvsentinel.nvidia.com/{name} deleted")


@app.command("cordon")
def cordon(
    nodes: Annotated[list[str], typer.Argument(help="Node name(s).")],
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
    from shared import output as out
    from shared.lifecycle import service

    done = set(service.cordon_nodes(kubeconfig=kubeconfig, context=context, names=nodes, owner=owner))
    for node in nodes:
        out.message(f"node/{node} cordoned (owner {owner})" if node in done else f"node/{node} already cordoned")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="validation")
