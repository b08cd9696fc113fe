"""``nvsentinel monitor xid|dcgm|nic|csp``: node agents turning host signals into HealthEvents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nvsentinel import _options as opt

app = typer.Typer(help="Node agents (one-shot over files).", no_args_is_help=True)


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
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the events instead of publishing.")] = False,
    follow: Annotated[
        bool,
        typer.Option("--follow", help="Keep reading the lines appended to the log (survives truncation and rotation)."),
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
    output: opt.Output = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Xid lines → HealthEvents (syslog-health-monitor, SysLogsXIDError); -o json prints NDJSON."""

    from shared import errors
    from shared.health import service

    if input_format not in ("text", "journal-json", "journal-export"):
        raise errors.InvalidInput(
            f"unknown input format {input_format!r} (text, journal-json, journal-export)", where="--format"
        )
    if journal or input_format != "text":
        events = _journal_events(
            file=file,
            node=node,
            node_root=node_root,
            boot_time=boot_time,
            follow=follow,
            input_format=None if input_format == "text" else input_format,
        )
        from shared.health.monitors import agent

        agent.publisher(opt.cluster(kubeconfig, context), dry_run)(events)
        _print_xid(events, output)
        return
    if follow:
        from datetime import datetime

        from shared import clock
        from shared.health import values
        from shared.health.monitors import tail

        every = values.parse_duration(interval or "1s").total_seconds()
        bound = None if duration is None else values.parse_duration(duration).total_seconds()
        boot = datetime.fromisoformat(boot_time.replace("Z", "+00:00")) if boot_time else None
        followed = tail.follow_xid(
            file=file,
            node=node,
            node_root=node_root,
            boot_time=boot,
            interval=every,
            duration=bound,
            dry_run=dry_run,
            cluster=opt.cluster(kubeconfig, context),
            emit=_emitter(output),
            now=clock.WALL.now,
        )
        _print(followed, output)
        return
    if interval is not None or duration is not None:
        raise errors.InvalidInput("--interval and --for need --follow", where="--follow")
    events = service.monitor_xid(
        file=file,
        node=node,
        node_root=node_root,
        boot_time=boot_time,
        dry_run=dry_run,
        cluster=opt.cluster(kubeconfig, context),
    )
    _print_xid(events, output)


def _journal_events(
    *,
    file: str | None,
    node: str | None,
    node_root: Path | None,
    boot_time: str | None,
    follow: bool,
    input_format: str | None,
) -> list[Any]:
    """``--journal``: the dump from --file, stdin (-) or this host's journalctl, parsed to Xid events."""
    import sys
    from datetime import datetime

    from shared import clock, errors
    from shared.health.monitors import journal

    if follow:
        raise errors.InvalidInput(
            "--follow reads a growing kernel log; for the journal, run the command "
            "again (events already published are duplicates)",
            where="--follow",
        )
    if node_root is not None:
        raise errors.InvalidInput("--journal reads --file or stdin, not --node-root", where="--node-root")
    if file == "-":
        stream = sys.stdin
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8")
        source = "<stdin>"
    elif file is not None:
        try:
            data = Path(file).read_bytes()
        except FileNotFoundError:
            raise errors.NotFound("file not found", where=file) from None
        source = file
    else:
        data, source = journal.read_host(), "journalctl"
    boot = datetime.fromisoformat(boot_time.replace("Z", "+00:00")) if boot_time else None
    fmt: Any = input_format
    return journal.events(journal.parse(data, fmt, source=source), node=node, now=clock.WALL.now(), boot_time=boot)


def _print_xid(events: list[Any], output: str) -> None:
    import json

    from shared import output as out

    if output == "json":
        out.write_data("".join(json.dumps(e.wire(), sort_keys=True) + "\n" for e in events))
    else:
        opt.emit(
            [e.wire() for e in events],
            output,
            headers=["NODE", "XID", "ACTION", "MESSAGE"],
            rows=[[e.nodeName, e.errorCode[0], e.recommendedAction.name, e.message[:60]] for e in events],
        )


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
_HEADERS = ["NODE", "CHECK", "ENTITY", "FATAL", "HEALTHY", "ACTION", "MESSAGE"]


def _emitter(output: str) -> Any:
    """NDJSON is printed batch by batch (a poll loop streams); tables and YAML once at the end."""
    import json

    from shared import output as out

    def emit(events: list[Any]) -> None:
        if output == "json":
            out.write_data("".join(json.dumps(e.wire(), sort_keys=True) + "\n" for e in events))

    return emit


def _print(events: list[Any], output: str) -> None:
    if output != "json":
        opt.emit(
            [e.wire() for e in events],
            output,
            headers=_HEADERS,
            rows=[
                [
                    e.nodeName,
                    e.checkName,
                    e.entitiesImpacted[-1].entityValue if e.entitiesImpacted else "",
                    e.isFatal,
                    e.isHealthy,
                    e.recommendedAction.name,
                    e.message[:60],
                ]
                for e in events
            ],
        )


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
    output: opt.Output = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """DCGM health/diag JSON → HealthEvents per GPU and check (gpu-health-monitor, Gpu<Watch>Watch)."""
    from shared.health.monitors import agent

    events = agent.run(
        "dcgm",
        node=node,
        path=file,
        node_root=node_root,
        state=state,
        interval=interval,
        duration=duration,
        dry_run=dry_run,
        cluster=opt.cluster(kubeconfig, context),
        emit=_emitter(output),
    )
    _print(events, output)


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
    output: opt.Output = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """InfiniBand/RoCE port state and error counters → HealthEvents (nic-health-monitor)."""
    from shared.health.monitors import agent

    events = agent.run(
        "nic",
        node=node,
        path=sysfs,
        node_root=node_root,
        state=state,
        interval=interval,
        duration=duration,
        dry_run=dry_run,
        cluster=opt.cluster(kubeconfig, context),
        emit=_emitter(output),
    )
    _print(events, output)


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
    output: opt.Output = "json",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Cloud scheduled maintenance → CSPMaintenance HealthEvents (csp-health-monitor): fatal, then healthy."""
    from shared.health.monitors import agent

    events = agent.run(
        "csp",
        node=node,
        path=None,
        node_root=None,
        state=state,
        interval=interval,
        duration=duration,
        dry_run=dry_run,
        cluster=opt.cluster(kubeconfig, context),
        emit=_emitter(output),
        url=url,
        ready_timeout=ready_timeout,
    )
    _print(events, output)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="monitor")
