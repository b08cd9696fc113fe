"""What happens after a quarantine, when enforcement is on: drain, then remediation.

Run once per controller pass after the quarantine step. Each quarantining event moves through
``status.drain`` and then ``status.remediation``, one step per pass, each node's events in order
and nodes in parallel on ``nvsentinel.workers`` threads (a drain is several API calls: done one
node after another, 750 fresh quarantines would hold the next quarantine pass for many seconds);
steps wait in cluster time (backoff, deadlines, a reboot), so a pass never blocks and a restarted
controller resumes from the statuses. In monitor mode nothing here runs:
monitor mode promises conditions and annotations only.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
from concurrent.futures import ThreadPoolExecutor

from shared import clock, errors, nodes
from shared.health import config, drain, notify, remediation, resource
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)


class FollowUp:
    def __init__(
        self, api: KubeApi, cfg: config.Config, *, clk: clock.Clock, notifier: notify.Notifier = notify.NONE
    ) -> None:
        self.api = api
        self.cfg = cfg
        self.drainer = drain.Drainer(api, cfg.settings.node_drainer, now=clk.now)
        self.remediator = remediation.Remediator(api, cfg.settings.fault_remediation, now=clk.now, notifier=notifier)

    def active(self) -> bool:
        v = self.cfg.settings
        return not self.cfg.dry_run and (v.node_drainer.enabled or v.fault_remediation.enabled)

    def run_once(self) -> dict[str, int]:
        """One step for every event still draining or remediating; counts of the states reached."""
        counts: dict[str, int] = {}
        if not self.active():
            return counts
        by_node: dict[str, list[resource.Stored]] = collections.defaultdict(list)
        for stored in resource.list_events(self.api):
            by_node[stored.event.nodeName].append(stored)
        open_nodes = [(name, events) for name, events in by_node.items() if any(self._open(s) for s in events)]
        if not open_nodes:
            return counts

        def one(item: tuple[str, list[resource.Stored]]) -> dict[str, int]:
            name, events = item
            mine: dict[str, int] = {}
            try:
                self._node(name, events, mine)
            except errors.ToolError as exc:
                logger.warning("follow-up not done: %s", exc.line(), extra={"subject": name})
            return mine

        workers = max(1, min(self.cfg.settings.nvsentinel.workers, len(open_nodes)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nvsentinel-followup") as pool:
            for mine in pool.map(one, open_nodes):
                for key, value in mine.items():
                    counts[key] = counts.get(key, 0) + value
        return counts

    def _open(self, stored: resource.Stored) -> bool:
        if stored.phase not in drain.QUARANTINING:
            return False
        d, r = stored.status.drain, stored.status.remediation
        return (
            d is None
            or d.state not in drain.TERMINAL
            or (d.state in drain.DONE and (r is None or r.state not in remediation.TERMINAL))
        )

    def _node(self, name: str, events: list[resource.Stored], counts: dict[str, int]) -> None:
        for i, stored in enumerate(events):
            if not self._open(stored):
                continue
            node = nodes.get(self.api, name)
            status = stored.status
            # a step's Events are written once its status is: a failed status write redoes the step
            with self.drainer.events.held():
                if self.cfg.settings.node_drainer.enabled:
                    new_drain = self.drainer.step(stored, node, events)
                else:
                    new_drain = resource.DrainStatus(state="AlreadyDrained", message="drain disabled")
                if new_drain != status.drain:
                    resource.update_status(self.api, stored.name, drain=new_drain)
            if new_drain != status.drain:
                counts[f"drain:{new_drain.state}"] = counts.get(f"drain:{new_drain.state}", 0) + 1
            status = status.model_copy(update={"drain": new_drain})
            stored = events[i] = dataclasses.replace(stored, status=status)
            if new_drain.state not in drain.DONE or not self.cfg.settings.fault_remediation.enabled:
                continue
            with self.remediator.events.held():
                new_rem = self.remediator.step(stored, nodes.get(self.api, name))
                if new_rem != status.remediation:
                    resource.update_status(self.api, stored.name, remediation=new_rem)
            if new_rem != status.remediation:
                counts[f"remediation:{new_rem.state}"] = counts.get(f"remediation:{new_rem.state}", 0) + 1
            events[i] = dataclasses.replace(stored, status=status.model_copy(update={"remediation": new_rem}))
