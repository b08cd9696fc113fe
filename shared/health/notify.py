"""Notification sinks: outcomes announced to webhooks, besides the Kubernetes Events.

Operators do not watch ``kubectl get events``; they watch a pager, a chat channel or an event bus.
So each outcome that needs a person (a node quarantined or released, the circuit breaker tripped,
a remediation that failed, a fault that needs support, a failed validation) can be sent to sinks
listed in ``nvsentinel.notifications.sinks`` of the values:

- ``cloudevents``: a CloudEvents 1.0 JSON document in structured mode (``Content-Type:
  application/cloudevents+json``) with ``specversion``, ``id``, ``source``, ``type``
  (``com.nvidia.nvsentinel.node.quarantined`` ...), ``subject`` (the node), ``time`` and ``data``;
- ``slack``: a Slack-style incoming webhook, ``{"text": "..."}``.

Sending never holds up quarantine: ``Notifier.notify`` only appends to each sink's bounded queue
and returns; one sender thread per sink posts, retrying a refused connection, a timeout or a 5xx
with doubling backoff, and gives a notification up after ``attempts`` tries. A full queue drops its
oldest notification (counted, logged): the newest news matters most when a receiver has been down
for long. One dead receiver delays neither the controller nor the other sinks. A URL can be read
from an environment variable at start (``urlFrom: {env: NAME}``, the pod's env set from a Secret),
so tokens stay out of the values file; an unset variable is an error at start, not a silent sink.
"""

from __future__ import annotations

import collections
import http.client
import json
import logging
import os
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shared import clock, errors, metrics
from shared.health import settings as hsettings

logger = logging.getLogger(__name__)

QUARANTINED = "quarantined"
RELEASED = "released"
BREAKER_TRIPPED = "breakerTripped"
REMEDIATION_FAILED = "remediationFailed"
CONTACT_SUPPORT = "contactSupport"
VALIDATION_FAILED = "validationFailed"

TYPES: dict[str, str] = {
    QUARANTINED: "com.nvidia.nvsentinel.node.quarantined",
    RELEASED: "com.nvidia.nvsentinel.node.released",
    BREAKER_TRIPPED: "com.nvidia.nvsentinel.breaker.tripped",
    REMEDIATION_FAILED: "com.nvidia.nvsentinel.node.remediation.failed",
    CONTACT_SUPPORT: "com.nvidia.nvsentinel.node.contactsupport",
    VALIDATION_FAILED: "com.nvidia.nvsentinel.node.validation.failed",
}
"""The CloudEvents ``type`` of each outcome (reverse-DNS, as the specification recommends)."""
assert set(TYPES) == set(hsettings.OUTCOMES)

CLOUDEVENTS_JSON = "application/cloudevents+json"
DROP_LOG_EVERY = 100
"""A full queue's drops are logged at warning level on the first and then every this many."""
_PERMANENT = frozenset(range(400, 500)) - {408, 425, 429}
"""Answers a retry cannot change (a wrong URL, a revoked token); 408/425/429 are worth another try."""


@dataclass(frozen=True)
class Notice:
    """One outcome to announce."""

    outcome: str
    subject: str
    message: str
    time: datetime
    data: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: str(uuid.uuid4()))


def cloudevent(notice: Notice, *, source: str) -> dict[str, Any]:
    """The CloudEvents 1.0 structured-mode document for ``notice``."""
    return {
        "specversion": "1.0",
        "id": notice.id,
        "source": source,
        "type": TYPES[notice.outcome],
        "subject": notice.subject,
        "time": notice.time.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "datacontenttype": "application/json",
        "data": {"outcome": notice.outcome, "message": notice.message, **notice.data},
    }


def slack_text(notice: Notice) -> dict[str, str]:
    """The incoming-webhook body: one line a person reads in a channel."""
    return {"text": f"nvsentinel {notice.outcome}: {notice.subject}: {notice.message}"}


def body_for(sink: hsettings.Sink, notice: Notice, *, source: str) -> tuple[bytes, str]:
    """(bytes, content type) posted to ``sink``."""
    if sink.type == "slack":
        return json.dumps(slack_text(notice)).encode(), "application/json"
    return json.dumps(cloudevent(notice, source=source)).encode(), CLOUDEVENTS_JSON


def resolve_url(sink: hsettings.Sink, index: int, env: Mapping[str, str]) -> str:
    """The sink's URL, from the values or the environment; InvalidInput naming the field."""
    if sink.urlFrom is None:
        return sink.url
    where = f"nvsentinel.notifications.sinks[{index}].urlFrom.env"
    value = env.get(sink.urlFrom.env, "").strip()
    if not value:
        raise errors.InvalidInput(f"environment variable {sink.urlFrom.env} is not set", where=where)
    if not value.startswith(("http://", "https://")):
        raise errors.InvalidInput(f"{sink.urlFrom.env} must hold an http:// or https:// URL", where=where)
    return value


def resolve_urls(settings: hsettings.Notifications, env: Mapping[str, str] | None = None) -> list[str]:
    """Every sink's URL, in order; InvalidInput for the first unset or wrong variable. ``nvsentinel run``
    calls it before it writes anything, so a missing Secret is exit 2 with nothing changed."""
    environment = os.environ if env is None else env
    return [resolve_url(sink, i, environment) for i, sink in enumerate(settings.sinks)]


NOTIFICATIONS = metrics.counter(
    "nvsentinel_notifications_total",
    "Notifications by sink and result: delivered, failed (given up after its retries), dropped (queue full).",
    ["sink", "result"],
)


def counted(sink: str, result: str, amount: int = 1) -> None:
    """A delivery result (``delivered``, ``failed``, ``dropped``) for one sink."""
    NOTIFICATIONS.inc(amount, sink=sink, result=result)
    logger.debug("notification %s to %s (%d)", result, sink, amount)


class Sender:
    """One sink: a bounded queue and the thread that posts from it, retrying with backoff."""

    def __init__(
        self,
        sink: hsettings.Sink,
        url: str,
        *,
        queue_size: int,
        source: str,
    ) -> None:
        self.sink = sink
        self.url = url
        self.queue_size = queue_size
        self.source = source
        self.base = hsettings.parse_duration(sink.backoffBase).total_seconds()
        self.most = hsettings.parse_duration(sink.backoffMax).total_seconds()
        self.delivered = self.failed = self.dropped = self.tries = 0
        self._queue: collections.deque[Notice] = collections.deque()
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._busy = False
        self._thread: threading.Thread | None = None

    def wants(self, outcome: str) -> bool:
        return outcome in self.sink.outcomes

    def offer(self, notice: Notice) -> None:
        """Queue ``notice`` and return at once; the oldest one goes when the queue is full."""
        with self._wake:
            if len(self._queue) >= self.queue_size:
                lost = self._queue.popleft()
                self.dropped += 1
                counted(self.sink.name, "dropped")
                # a receiver down during a storm drops thousands: say so on the first and every 100th
                logger.log(
                    logging.WARNING if self.dropped % DROP_LOG_EVERY == 1 else logging.DEBUG,
                    "notification queue of sink %s full (%d): dropped %s about %s (%d dropped so far)",
                    self.sink.name,
                    self.queue_size,
                    lost.outcome,
                    lost.subject,
                    self.dropped,
                    extra={"subject": lost.subject},
                )
            self._queue.append(notice)
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name=f"nvsentinel-notify-{self.sink.name}", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def pending(self) -> int:
        """Notifications queued or being sent."""
        with self._wake:
            return len(self._queue) + (1 if self._busy else 0)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (after the request in flight, at most its timeout); queued notices are lost."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout + self.sink.timeoutSeconds)

    # ------------------------------------------------------------ the thread
    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._stop.is_set():
                    self._wake.wait()
                if self._stop.is_set():
                    return
                notice = self._queue.popleft()
                self._busy = True
            try:
                self._deliver(notice)
            finally:
                with self._wake:
                    self._busy = False

    def _deliver(self, notice: Notice) -> None:
        body, content_type = body_for(self.sink, notice, source=self.source)
        problem = ""
        for attempt in range(1, self.sink.attempts + 1):
            self.tries += 1
            try:
                status = http_post(self.url, body, content_type, self.sink.timeoutSeconds)
            except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out, DNS, a garbled answer
                status, problem = 0, f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # a URL the HTTP client refuses: no retry helps, the thread lives on
                problem = f"{type(exc).__name__}: {exc}"
                break
            if 200 <= status < 300:
                self.delivered += 1
                counted(self.sink.name, "delivered")
                return
            if status:
                problem = f"HTTP {status}"
            if status in _PERMANENT:
                break
            if attempt < self.sink.attempts and self._stop.wait(min(self.most, self.base * 2 ** (attempt - 1))):
                return  # closing: the notice is abandoned with the queue
        self.failed += 1
        counted(self.sink.name, "failed")
        logger.warning(
            "notification %s about %s not delivered to sink %s: %s",
            notice.outcome,
            notice.subject,
            self.sink.name,
            problem,
            extra={"subject": notice.subject},
        )


_MAX_ANSWER = 64 * 1024
"""Bytes of a receiver's answer read at most: a hostile or broken receiver cannot fill memory."""


def http_post(url: str, body: bytes, content_type: str, timeout: float) -> int:
    """POST ``body``; the HTTP status (an error status is returned, not raised). OSError without an answer."""
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # http(s): checked at load
            response.read(_MAX_ANSWER)  # the answer's body means nothing here; read a bounded part
            return int(response.status)
    except urllib.error.HTTPError as exc:
        exc.read(_MAX_ANSWER)
        return int(exc.code)
    except urllib.error.URLError as exc:
        reason = exc.reason
        raise reason if isinstance(reason, OSError) else OSError(str(reason)) from exc


class Notifier:
    """Every configured sink; ``notify`` never blocks. ``close`` when the controller stops."""

    def __init__(
        self,
        settings: hsettings.Notifications,
        *,
        now: Callable[[], datetime] = clock.WALL.now,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.now = now
        self.senders = [
            Sender(sink, url, queue_size=settings.queueSize, source=settings.source)
            for sink, url in zip(settings.sinks, resolve_urls(settings, env), strict=True)
        ]

    def notify(self, outcome: str, subject: str, message: str, **data: Any) -> None:
        """Queue one outcome for every sink that wants it."""
        if outcome not in TYPES:
            raise ValueError(f"unknown outcome {outcome!r}")
        wanting = [s for s in self.senders if s.wants(outcome)]
        if not wanting:
            return
        notice = Notice(outcome, subject, message, self.now(), data)
        for sender in wanting:
            sender.offer(notice)

    def pending(self) -> int:
        return sum(s.pending() for s in self.senders)

    def close(self) -> None:
        for sender in self.senders:
            sender.close()


NONE = Notifier(hsettings.Notifications())
"""No sinks: what a component built without a configuration announces to."""
