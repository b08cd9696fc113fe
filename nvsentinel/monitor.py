"""``nvsentinel monitor xid|dcgm|nic|csp``: node agents turning host signals into HealthEvents.

Each command checks its ``-o``, gathers its flags into a request and hands it to
``shared.health.monitors.commands``, which runs the monitor and streams the events: NDJSON as they
are found with ``-o json``, a table or document at the end otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvsentinel import _options as opt

app = typer.Typer(help="Node agents (one-shot over files).", no_args_is_help=True)

State = Annotated[
    Path | None,
    typer.Option(
        "--state",
        help="Remember what was reported across runs (JSON file), "
        "so a failure is published once and its recovery is seen.",
        show_default=False,
    ),
]
Interval = Annotated[
    str | None, typer.Option("--interval", help="Poll every D (30s, 1m); default: read once.", show_default=False)
]
For = Annotated[str | None, typer.Option("--for", help="Stop polling after D.", show_default=False)]
NodeRoot = Annotated[Path | None, typer.Option("--node-root", help="Read every node under DIR.", show_default=False)]
Node = Annotated[str | None, typer.Option("--node", help="Node the input belongs to.", show_default=False)]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the events instead of publishing.")]


@app.command("xid")
def xid(
    file: Annotated[
        str | None,
        typer.Option("--file", help="Kernel log (dmesg, syslog, journal export); - for stdin.", show_default=False),
    ] = None,
    node: Annotated[str | None, typer.Option("--node", help="Node the log belongs to.", show_default=False)] = None,
    node_root: Annotated[
        Path | None, typer.Option("--node-root", help="Read every DIR/<node>/kern.log.", show_default=False)
    ] = None,
    boot_time: Annotated[
        str | None, typer.Option("--boot-time", help="RFC 3339 boot time for uptime stamps.", show_default=False)
    ] = None,
    dry_run: DryRun = False,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Keep reading the lines appended to the log, or with --journal the journal's new records "
            "(a growing journalctl -o json file, else journalctl -k -f); survives truncation and rotation.",
        ),
    ] = False,
    interval: Annotated[
        str | None,
        typer.Option("--interval", help="With --follow: look for new lines every D (default 1s).", show_default=False),
    ] = None,
    duration: Annotated[
        str | None, typer.Option("--for", help="With --follow: stop after D.", show_default=False)
    ] = None,
    journal: Annotated[
        bool,
        typer.Option(
            "--journal",
            help="Read the systemd journal: `journalctl -k -o json` "
            "or `-o export` output from --file/stdin; without --file, run "
            "journalctl -k on this host.",
        ),
    ] = False,
    input_format: Annotated[
        str,
        typer.Option(
            "--format", help="Input: text (a kernel log), journal-json or journal-export (implies --journal)."
        ),
    ] = "text",
    output: opt.MonitorOutput = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """Kernel log → HealthEvents (syslog-health-monitor: SysLogsXIDError, SysLogsSXIDError, SysLogsGPUFallenOff).

    -o json prints NDJSON."""
    from shared.health.monitors import commands, syslog

    fmt = opt.chosen_format(output)
    request = syslog.XidRequest(
        file=file,
        node=node,
        node_root=node_root,
        boot_time=boot_time,
        dry_run=dry_run,
        follow=follow,
        interval=interval,
        duration=duration,
        journal=journal,
        input_format=input_format,
    )
    with commands.serving_metrics(metrics_addr):
        commands.xid(request, fmt=fmt, cluster=opt.cluster(kubeconfig, context))


@app.command("dcgm")
def dcgm(
    file: Annotated[
        Path | None, typer.Option("--file", help="`dcgmi health -c -j` or `dcgmi diag -j` output.", show_default=False)
    ] = None,
    node: Node = None,
    node_root: NodeRoot = None,
    state: State = None,
    interval: Interval = None,
    duration: For = None,
    dry_run: DryRun = False,
    output: opt.MonitorOutput = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """DCGM health/diag JSON → HealthEvents per GPU and check (gpu-health-monitor, Gpu<Watch>Watch)."""
    from shared.health.monitors import agent, commands

    fmt = opt.chosen_format(output)
    request = agent.PollRequest(
        node=node, path=file, node_root=node_root, state=state, interval=interval, duration=duration, dry_run=dry_run
    )
    with commands.serving_metrics(metrics_addr):
        commands.poll("dcgm", request, fmt=fmt, cluster=opt.cluster(kubeconfig, context))


@app.command("nic")
def nic(
    sysfs: Annotated[
        Path | None, typer.Option("--sysfs", help="sysfs root of one node (/sys on a host).", show_default=False)
    ] = None,
    node: Node = None,
    node_root: NodeRoot = None,
    state: State = None,
    interval: Interval = None,
    duration: For = None,
    dry_run: DryRun = False,
    output: opt.MonitorOutput = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """InfiniBand/RoCE port state and error counters → HealthEvents (nic-health-monitor)."""
    from shared.health.monitors import agent, commands

    fmt = opt.chosen_format(output)
    request = agent.PollRequest(
        node=node, path=sysfs, node_root=node_root, state=state, interval=interval, duration=duration, dry_run=dry_run
    )
    with commands.serving_metrics(metrics_addr):
        commands.poll("nic", request, fmt=fmt, cluster=opt.cluster(kubeconfig, context))


@app.command("csp")
def csp(
    url: Annotated[
        str, typer.Option("--url", help="Metadata endpoint serving the node's scheduled maintenance events as JSON.")
    ],
    node: Node = None,
    state: State = None,
    interval: Interval = None,
    duration: For = None,
    ready_timeout: Annotated[
        str,
        typer.Option(
            "--node-ready-timeout",
            help="After a maintenance, send the "
            "healthy event only once the Node is Ready, waiting at most D "
            "(then none is sent); 0: do not wait.",
        ),
    ] = "60m",
    dry_run: DryRun = False,
    output: opt.MonitorOutput = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """Cloud scheduled maintenance → CSPMaintenance HealthEvents (csp-health-monitor): fatal, then healthy."""
    from shared.health.monitors import agent, commands

    fmt = opt.chosen_format(output)
    request = agent.PollRequest(
        node=node,
        url=url,
        ready_timeout=ready_timeout,
        state=state,
        interval=interval,
        duration=duration,
        dry_run=dry_run,
    )
    with commands.serving_metrics(metrics_addr):
        commands.poll("csp", request, fmt=fmt, cluster=opt.cluster(kubeconfig, context))


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="monitor")
