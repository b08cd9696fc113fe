"""``nvcrectl workloadrun``: your own container as a certification (run, report, status, cancel)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nvcre import _options as opt

Name = Annotated[str, typer.Argument(help="WorkloadRun name.")]
Output = Annotated[str, typer.Option("--output", "-o", help="Format: table, yaml or json.")]


def run(
    file: Annotated[Path, typer.Option("--file", "-f", help="WorkloadRun YAML.", show_default=False)],
    wait: Annotated[
        bool, typer.Option("--wait", help="Run it here to its end; exit 0 pass, 1 fail, 5 timeout.")
    ] = False,
    timeout: Annotated[str | None, typer.Option("--timeout", help="With --wait: e.g. 30m.", show_default=False)] = None,
    namespace: opt.Namespace = "default",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Create the WorkloadRun and (with --wait) run it to its verdict, holding its Lease; without
    --wait, nvcrectl controller runs it."""
    from shared import output
    from shared.certify import render, workload
    from shared.kube.client import LazyClient

    loaded = workload.load_file(file)  # invalid input before the cluster
    seconds = render.seconds(timeout) if timeout else None
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        workload.create(api(), loaded, namespace)
        if not wait:
            output.write_data(f"workloadrun.nvcre.nvidia.com/{loaded.name} created\n")
            return 0
        done, timed_out = workload.drive(
            api(), namespace=namespace, name=loaded.name, timeout=seconds, on_progress=output.message
        )
    _emit(done, output.Format.TABLE)
    if timed_out:
        output.error_line(f"error: workloadrun {loaded.name} did not complete within {timeout}")
        return 5
    return 0 if done.status.phase == "Succeeded" else 1


def report(
    name: Name,
    namespace: opt.Namespace = "default",
    fmt: Output = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """The verdict, the metric and the nodes; exit 1 when the run failed."""
    found, chosen = _fetch(name, namespace, fmt, kubeconfig, context)
    _emit(found, chosen)
    return 1 if found.status.phase == "Failed" else 0


def status(
    name: Name,
    namespace: opt.Namespace = "default",
    fmt: Output = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """One line: phase and message (or the whole status as data with -o json|yaml)."""
    from shared import output

    found, chosen = _fetch(name, namespace, fmt, kubeconfig, context)
    if chosen is not output.Format.TABLE:
        _emit(found, chosen)
        return
    output.write_data(f"{name}  {found.status.phase or 'Pending'}  {found.status.message or ''}\n")


def _fetch(name: str, namespace: str, fmt: str, kubeconfig: Path | None, context: str | None) -> tuple[Any, Any]:
    """The run and the chosen format; the format is checked before the cluster is asked."""
    from shared import output
    from shared.certify import workload
    from shared.kube.client import LazyClient

    chosen = output.parse_format(
        fmt, allowed=(output.Format.TABLE, output.Format.JSON, output.Format.YAML), flag="--output"
    )
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        return workload.get(api(), namespace, name), chosen


def cancel(
    name: Name, namespace: opt.Namespace = "default", kubeconfig: opt.Kubeconfig = None, context: opt.Context = None
) -> None:
    """Delete the run's Job; the run is recorded as Failed (cancelled)."""
    from shared import output
    from shared.certify import workload
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        found = workload.cancel(api(), namespace, name)
    output.write_data(f"workloadrun.nvcre.nvidia.com/{name} {found.status.phase}: {found.status.message}\n")


def _emit(found: object, chosen: object) -> None:
    from shared import output
    from shared.certify import workload

    assert isinstance(found, workload.WorkloadRun)
    if chosen in (output.Format.JSON, output.Format.YAML):
        data = workload.data(found)
        output.write_data(output.to_json(data) if chosen is output.Format.JSON else output.to_yaml(data))
        return
    st = found.status
    value = "-" if st.value is None else f"{st.value:g}"
    output.write_data(
        output.render_table(
            ["NAME", "PHASE", found.spec.metric.name.upper(), "NODES", "MESSAGE"],
            [[found.name, st.phase, value, len(st.nodes), st.message or ""]],
        )
    )


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Your own container as a certification.", no_args_is_help=True)
    for command in (run, report, status, cancel):
        group.command(command.__name__)(command)
    app.add_typer(group, name="workloadrun")
