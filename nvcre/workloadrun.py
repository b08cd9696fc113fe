"""``nvcrectl workloadrun``: your own container as a certification (run, report, status, cancel)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nvcre import _options as opt
from shared import output as out

Name = opt.WorkloadRunName


def run(
    file: Annotated[Path, typer.Option("--file", "-f", help="WorkloadRun YAML.", show_default=False)],
    wait: Annotated[
        bool, typer.Option("--wait", help="Run it here to its end; exit 0 pass, 1 fail, 5 timeout.")
    ] = False,
    timeout: Annotated[str | None, typer.Option("--timeout", help="With --wait: e.g. 30m.", show_default=False)] = None,
    namespace: opt.RunNamespace = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Create the WorkloadRun and (with --wait) run it to its verdict, holding its Lease; without
    --wait, nvcrectl controller runs it."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import render, resource, workload
    from shared.kube.client import LazyClient

    loaded = workload.load_file(file)  # invalid input before the cluster
    seconds = render.seconds(timeout, where="--timeout") if timeout else None
    with LazyClient(kubeconfig=kubeconfig, context=context) as api, resource.crd_required(workload.RESOURCE):
        workload.create(api(), loaded, namespace)
        if not wait:
            out.write_data(f"workloadrun.nvcre.nvidia.com/{loaded.name} created\n")
            return 0
        done, timed_out = workload.drive(
            api(), namespace=namespace, name=loaded.name, timeout=seconds, on_progress=out.message
        )
    _emit(done, out.Format.TABLE)
    if timed_out:
        ns = "" if namespace == "default" else f" -n {namespace}"
        out.error_line(
            f"error: workloadrun {loaded.name} did not complete within {timeout}; it stays in the cluster with its "
            f"Job: `nvcrectl controller` finishes it, `nvcrectl workloadrun report {loaded.name}{ns}` shows it, "
            f"`nvcrectl workloadrun cancel {loaded.name}{ns}` stops it"
        )
        return 5
    return 0 if done.status.phase == "Succeeded" else 1


def report(
    name: Name,
    namespace: opt.RunNamespace = None,
    fmt: opt.RunOutput = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """The verdict, the metric and the nodes; exit 1 when the run failed."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    found, chosen = _fetch(name, namespace, fmt, kubeconfig, context)
    _emit(found, chosen)
    return 1 if found.status.phase == "Failed" else 0


def status(
    name: Name,
    namespace: opt.RunNamespace = None,
    fmt: opt.RunOutput = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """One line: phase and message (or the whole status as data with -o json|yaml)."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import workload

    found, chosen = _fetch(name, namespace, fmt, kubeconfig, context)
    line = f"{name}  {found.status.phase or 'Pending'}  {found.status.message or ''}\n"
    out.emit(workload.data(found), chosen, table=line)


def _fetch(name: str, namespace: str, fmt: str, kubeconfig: Path | None, context: str | None) -> tuple[Any, Any]:
    """The run and the chosen format; the format is checked before the cluster is asked."""
    from shared.certify import resource, workload
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.RUN_FORMATS, flag="--output")
    with LazyClient(kubeconfig=kubeconfig, context=context) as api, resource.crd_required(workload.RESOURCE):
        return workload.get(api(), namespace, name), chosen


def cancel(
    name: Name,
    namespace: opt.RunNamespace = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Delete the run's Job; the run is recorded as Failed (cancelled)."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import resource, workload
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=kubeconfig, context=context) as api, resource.crd_required(workload.RESOURCE):
        found = workload.cancel(api(), namespace, name)
    out.write_data(f"workloadrun.nvcre.nvidia.com/{name} {found.status.phase}: {found.status.message}\n")


def _emit(found: Any, chosen: out.Format) -> None:
    """A WorkloadRun as data (json/yaml) or one row: its verdict, metric value and nodes."""
    from shared.certify import workload

    metric = out.Column(
        found.spec.metric.name.upper(), lambda r: "-" if r.status.value is None else f"{r.status.value:g}"
    )
    columns = (
        out.Column("NAME", lambda r: r.name),
        out.Column("PHASE", lambda r: r.status.phase),
        metric,
        out.Column("NODES", lambda r: len(r.status.nodes)),
        out.Column("MESSAGE", lambda r: r.status.message or ""),
    )
    out.emit(workload.data(found), chosen, table=out.Table([found], columns))


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Your own container as a certification.", no_args_is_help=True)
    for command in (run, report, status, cancel):
        group.command(command.__name__)(command)
    app.add_typer(group, name="workloadrun")
