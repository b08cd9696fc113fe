"""``nvcrectl certification``: run, report, list, get, delete and render Certifications."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from nvcre import _options as opt
from shared import cli
from shared import output as out

Name = opt.CertificationName
Strategy = Annotated[
    str | None,
    typer.Option("--strategy", help="Isolation strategy: adaptive (default) or halving.", show_default=False),
]

Backend = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="trainjob (Kubeflow Trainer v2), mpijob (MPI Operator) or job (batch/v1, single-node tests only); "
        "default (auto): what the cluster serves.",
        show_default=False,
    ),
]
Platform = Annotated[
    str | None,
    typer.Option(
        "--platform",
        help="Platform overrides: aws|gcp|azure|oci|togetherai|nscale|onprem|…, or none for the generic shape; "
        "default: detected from the target nodes.",
        show_default=False,
    ),
]

LIST_COLUMNS = (
    out.Column("namespace", lambda c: c.namespace),
    out.Column("name", lambda c: c.name),
    out.Column("phase", lambda c: c.status.phase or "Pending"),
    out.Column("categories", lambda c: ",".join(x.variant for x in c.spec.categories)),
    out.Column("message", lambda c: c.status.message or ""),
)
PLAN_COLUMNS = (
    out.Column("category", lambda p: p.category),
    out.Column("nodes", lambda p: p.nodes),
    out.Column("groups", lambda p: len(p.groups)),
    out.Column("strategy", lambda p: p.strategy),
    out.Column("rounds (1 fault)", lambda p: p.estimated_rounds_if_one_fault),
    out.Column("node-minutes (1 fault)", lambda p: f"{p.estimated_node_minutes:.0f}"),
)


def run(
    cert_file: Annotated[
        Path | None, typer.Option("--cert-file", "-f", help="Certification YAML.", show_default=False)
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Take over this run now (implies --wait).", show_default=False)
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Run it here to its end; exit 0 pass, 1 fail, 5 timeout.")
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            help="With --wait: e.g. 2h (cluster time). On a timeout the run stays in the cluster; "
            "--resume NAME continues it.",
            show_default=False,
        ),
    ] = None,
    strategy: Strategy = None,
    backend: Backend = None,
    platform: Platform = None,
    namespace: opt.Namespace = None,
    fmt: opt.Output = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Create the Certification and (with --wait) run it, holding a Lease named after it.

    --backend and --platform are written into the new object (spec.backend, spec.platform).

    Examples:

      nvcrectl certification run -f cert.yaml --wait --timeout 2h

      nvcrectl certification run --resume cert-h100
    """
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import live, render, service
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.TABLE_FORMATS, flag="--output")
    seconds = render.seconds(timeout, where="--timeout") if timeout else None
    # Progress on stderr (a live view on a terminal, event lines otherwise); stdout keeps the result.
    with LazyClient(kubeconfig=kubeconfig, context=context) as api, live.Display() as display:
        result = service.run(
            api,
            cert_file=cert_file,
            resume=resume,
            namespace=namespace,
            wait=wait or resume is not None,
            timeout=seconds,
            strategy=strategy,
            backend=None if backend == "auto" else backend,
            platform=platform,
            on_progress=display.note,
            on_status=display.status,
        )
    if not result.waited:
        out.write_data(f"certification.nvcre.nvidia.com/{result.cert.name} created\n")
        return 0
    _emit(result.cert, chosen)
    if result.timed_out:
        out.error_line(timed_out_line(result.cert.name, namespace, timeout or ""))
        return 5
    return 0 if result.cert.status.phase == "Succeeded" else 1


def timed_out_line(name: str, namespace: str, timeout: str) -> str:
    """What a ``--timeout`` leaves behind and how to go on: the run is not cancelled."""
    ns = "" if namespace == "default" else f" -n {namespace}"
    return (
        f"error: certification {name} did not complete within {timeout}; it stays in the cluster with its workloads: "
        f"continue it with `nvcrectl certification run --resume {name}{ns}` (or let `nvcrectl controller` take it "
        f"over), or remove it with `nvcrectl certification delete {name}{ns}`"
    )


def _emit(cert: Any, chosen: out.Format) -> None:
    """A Certification's report: its data for json/yaml, the laid-out report for table/wide."""
    from shared.certify import report

    out.emit(report.data(cert), chosen, table=report.text(cert), wide=report.text(cert, wide=True))


def report_cmd(
    name: Name,
    namespace: opt.Namespace = None,
    fmt: opt.Output = "table",
    results_file: Annotated[
        Path | None, typer.Option("--results-file", help="Also write the JSON report here.", show_default=False)
    ] = None,
    html: Annotated[Path | None, opt.html_report("the report (charts per node, message size, GPU and round)")] = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Per category: status, runtime, measurements, failing nodes with reasons, isolation trail."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import report, service
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.TABLE_FORMATS, flag="--output")
    out.check_destination(results_file)
    out.check_destination(html)
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        cert = service.get(api, namespace=namespace, name=name)
        if html is not None:
            service.html_report(api, html, cert)
    if results_file is not None:
        service.results_file(results_file, report.data(cert))
    _emit(cert, chosen)
    return 1 if cert.status.phase == "Failed" else 0


def list_cmd(
    namespace: opt.Namespace = None,
    all_namespaces: opt.AllNamespaces = False,
    fmt: opt.Output = "table",
    strict: opt.Strict = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Certifications with their phase; one that cannot be read is skipped with a warning naming it."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import report, service
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.TABLE_FORMATS, flag="--output")
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        listed = service.list_certifications(api, namespace=None if all_namespaces else namespace)
    for skipped in listed.skipped:
        out.warning(f"skipping {skipped.what}: {skipped.reason}")
    out.emit(list(map(report.data, listed.items)), chosen, table=out.Table(listed.items, LIST_COLUMNS))
    return 1 if strict and listed.skipped else 0


def get_cmd(
    name: Name,
    namespace: opt.Namespace = None,
    fmt: opt.DataOutput = "yaml",
    watch: opt.Watch = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """The whole object; with --watch, its row (phase, round, message) until it has finished."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import service
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.DATA_FORMATS, flag="--output")
    if watch:
        _watch(namespace, name, kubeconfig, context)
        return
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        cert = service.get(api, namespace=namespace, name=name)
    out.emit(cert, chosen, exclude_none=True)


def _round(cert: Any) -> str:
    """The round of the category running now (or last), as ``CATEGORY ROUND (STAGE)``."""
    running = [c for c in cert.status.categoryStatuses if c.rounds]
    if not running:
        return "-"
    last = next((c for c in running if c.status.value == "Running"), running[-1])
    return f"{last.variant} {last.rounds[-1].round} ({last.rounds[-1].stage})"


WATCH_COLUMNS = (*LIST_COLUMNS[:3], out.Column("round", _round), LIST_COLUMNS[4])


def _watch(namespace: str, name: str, kubeconfig: Path | None, context: str | None) -> None:
    """``kubectl get -w`` for one Certification: a row per change, ending when it has finished."""
    from shared import watchview
    from shared.certify import service
    from shared.kube.client import LazyClient

    with (
        LazyClient(kubeconfig=kubeconfig, context=context) as api,
        watchview.WatchView([c.header for c in WATCH_COLUMNS]) as view,
        contextlib.suppress(KeyboardInterrupt),
    ):
        for cert in service.watch(api, namespace=namespace, name=name):
            view.show({name: [c.cell(cert) for c in WATCH_COLUMNS]})


def delete_cmd(
    name: Name, namespace: opt.Namespace = None, kubeconfig: opt.Kubeconfig = None, context: opt.Context = None
) -> None:
    """Delete the Certification and (through owner references) its Jobs."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared.certify import service
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        service.delete(api, namespace=namespace, name=name)
    out.write_data(f"certification.nvcre.nvidia.com/{name} deleted\n")


def render_cmd(
    cert_file: Annotated[Path, typer.Option("--cert-file", "-f", help="Certification YAML.")],
    strategy: Strategy = None,
    backend: Backend = None,
    platform: Platform = None,
    fmt: opt.RenderOutput = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """The plan without running: groups, the first round's workloads as run creates them on this
    cluster (TrainJobs, MPIJobs or Jobs, with the platform's overrides), and what isolating one
    faulty node would cost.

    Examples:

      nvcrectl certification render -f cert.yaml

      nvcrectl certification render -f cert.yaml -o yaml --backend mpijob --platform none
    """
    from shared.certify import report
    from shared.certify.workloads import plan
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.TABLE_FORMATS, flag="--output")
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        auto = None if backend in (None, "auto") else backend
        plans = plan.render_plan(api, cert_file=cert_file, strategy=strategy, backend=auto, platform=platform)
    out.emit(report.jobs(plans), chosen, table=out.Table(plans, PLAN_COLUMNS))


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Certification runs.", no_args_is_help=True)
    group.command("run")(run)
    group.command(
        "report",
        epilog=cli.examples(
            "nvcrectl certification report rack-7",
            "nvcrectl certification report rack-7 -n nvcre -o json --results-file rack-7.json",
            "# one self-contained page with the charts, to open in a browser",
            "nvcrectl certification report rack-7 --html rack-7.html",
        ),
    )(report_cmd)
    group.command("list")(list_cmd)
    group.command(
        "get",
        epilog=cli.examples(
            "nvcrectl certification get rack-7 -o json",
            "# follow a run until it has finished (Ctrl-C stops)",
            "nvcrectl certification get rack-7 --watch",
        ),
    )(get_cmd)
    group.command("delete")(delete_cmd)
    group.command("render")(render_cmd)
    app.add_typer(group, name="certification")
