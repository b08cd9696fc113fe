"""``nvsentinel monitor xid``: node agents turning host signals into HealthEvents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvsentinel import _options as opt

app = typer.Typer(help="Node agents (one-shot over files).", no_args_is_help=True)


@app.command("xid")
def xid(file: Annotated[str | None, typer.Option("--file", help="Kernel log (dmesg, syslog, journal export); - "
                                                 "for stdin.", show_default=False)] = None,
        node: Annotated[str | None, typer.Option("--node", help="Node the log belongs to.",
                                                 show_default=False)] = None,
        node_root: Annotated[Path | None, typer.Option("--node-root", help="Read every DIR/<node>/kern.log.",
                                                       show_default=False)] = None,
        boot_time: Annotated[str | None, typer.Option("--boot-time", help="RFC 3339 boot time for uptime stamps.",
                                                      show_default=False)] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the events instead of publishing.")] = False,
        output: opt.Output = "json", kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Xid lines → HealthEvents (syslog-health-monitor, SysLogsXIDError); -o json prints NDJSON."""
    import json

    from shared import output as out
    from shared.health import service

    events = service.monitor_xid(file=file, node=node, node_root=node_root, boot_time=boot_time, dry_run=dry_run,
                                 cluster=opt.cluster(kubeconfig, context))
    if output == "json":
        out.write_data("".join(json.dumps(e.wire(), sort_keys=True) + "\n" for e in events))
    else:
        opt.emit([e.wire() for e in events], output, headers=["NODE", "XID", "ACTION", "MESSAGE"],
                 rows=[[e.nodeName, e.errorCode[0], e.recommendedAction.name, e.message[:60]] for e in events])


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="monitor")
