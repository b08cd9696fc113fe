"""Notification sinks against real HTTP receivers on localhost, and wired into the controller.

Covers: a quarantine on the simulated cluster reaches a CloudEvents sink as one structured-mode
CloudEvent 1.0 (content type, specversion, id, source, type, subject = node, time, data), and a
Slack-style sink as ``{"text": ...}``, each sink only for the outcomes it lists (a release, here);
a tripped breaker is announced once per trip, not once per refused node; CONTACT_SUPPORT reaches
the ``contactSupport`` outcome and exhausted attempts ``remediationFailed``; a receiver answering
500 and then 200 gets the notification after the retries; a receiver that is down (connection
refused) gets it once it listens; a 404 is not retried; a garbled answer is; a URL the HTTP client refuses
fails each notice without killing the sender; a full queue drops its oldest
notification and counts it; ``urlFrom: {env}`` reads the URL from the environment and an unset
variable is an error naming the field, and ``nvsentinel run`` exit 2 before touching the cluster;
the values reject a sink with both or neither URL; the chart hands the controller a Secret as its
environment; a receiver that accepts connections and never answers does not slow quarantine:
every event of the pass is processed while nothing was delivered. Property: any notice becomes a
CloudEvent that survives JSON and names its outcome's type.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import errors
from shared.health import config, notify, resource
from shared.health import settings as hsettings
from tests.health.test_drain_remediation_sim import event, make, publish

OFF = "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n"


class Receiver:
    """A real HTTP server on localhost that records requests and answers from a script."""

    def __init__(self, answers: list[int] | None = None, *, port: int = 0) -> None:
        self.got: list[tuple[dict[str, str], Any]] = []
        self.answers = list(answers or [])
        self.gate: threading.Event | None = None
        self.arrived = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.arrived.set()
                if receiver.gate is not None:
                    receiver.gate.wait(30)
                status = receiver.answers.pop(0) if receiver.answers else 200
                if status < 300:
                    receiver.got.append((dict(self.headers), json.loads(body)))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.gate is not None:
            self.gate.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.01)


def sinks_yaml(*sinks: str) -> str:
    return "nvsentinel:\n  notifications:\n    source: /clusters/test\n    sinks:\n" + "".join(sinks)


def sink(name: str, url: str, *, kind: str = "cloudevents", outcomes: str = "", extra: str = "") -> str:
    text = f"      - name: {name}\n        type: {kind}\n        url: {url}\n"
    text += f"        outcomes: [{outcomes}]\n" if outcomes else ""
    return text + extra


def notifications(**values: Any) -> hsettings.Notifications:
    return hsettings.Notifications.model_validate(values)


def notice(subject: str = "node-1", message: str = "m") -> notify.Notice:
    return notify.Notice(notify.QUARANTINED, subject, message, datetime(2026, 1, 1, tzinfo=UTC))


FAST = {"backoffBase": "10ms", "backoffMax": "50ms"}


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    from shared.health import controller

    names = gpu_sim.add_gpu_nodes(6)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    yield gpu_sim, api_client, names


def test_a_quarantine_reaches_a_cloudevents_sink_as_one_structured_cloudevent(
    cluster: Any, tmp_path: Path, receiver: Receiver
) -> None:
    _, api, names = cluster
    publish(api, event(names[0]))
    ctl = make(api, tmp_path, OFF + sinks_yaml(sink("bus", receiver.url)))
    try:
        assert ctl.reconcile_once().phases == {"Quarantined": 1}
        wait_for(lambda: len(receiver.got) == 1, "one CloudEvent")
    finally:
        ctl.notifier.close()
    headers, doc = receiver.got[0]
    assert headers["Content-Type"] == "application/cloudevents+json"
    assert doc["specversion"] == "1.0"
    assert doc["type"] == "com.nvidia.nvsentinel.node.quarantined"
    assert doc["source"] == "/clusters/test"
    assert doc["subject"] == names[0]
    assert uuid.UUID(doc["id"])
    assert datetime.fromisoformat(doc["time"].replace("Z", "+00:00")).tzinfo is not None
    assert doc["data"]["checkName"] == "GpuXidError"
    assert doc["data"]["enforced"] is True
    assert doc["data"]["ruleSets"] and doc["data"]["message"].startswith("GpuXidError (error 79, GPU_UUID GPU-1)")


def test_each_sink_gets_only_its_outcomes_and_slack_gets_text(cluster: Any, tmp_path: Path, receiver: Receiver) -> None:
    _, api, names = cluster
    chat = Receiver()
    values = OFF + sinks_yaml(
        sink("bus", receiver.url, outcomes="quarantined"),
        sink("chat", chat.url, kind="slack", outcomes="released"),
    )
    publish(api, event(names[1]))
    ctl = make(api, tmp_path, values)
    try:
        ctl.reconcile_once()
        publish(api, event(names[1], healthy=True, stamp="2026-01-01T00:10:00Z"))
        assert ctl.reconcile_once().phases == {"UnQuarantined": 1}
        wait_for(lambda: len(chat.got) == 1 and len(receiver.got) == 1, "one notification each")
    finally:
        ctl.notifier.close()
        chat.close()
    headers, doc = chat.got[0]
    assert headers["Content-Type"] == "application/json"
    assert doc == {
        "text": f"nvsentinel released: {names[1]}: healthy GpuXidError (error 79, GPU_UUID GPU-1) "
        "from gpu-health-monitor cleared the last cause: released"
    }
    assert receiver.got[0][1]["type"] == "com.nvidia.nvsentinel.node.quarantined"


def test_a_tripped_breaker_is_announced_once_per_trip(cluster: Any, tmp_path: Path, receiver: Receiver) -> None:
    _, api, names = cluster  # six nodes at 50 %: three quarantines, three refused
    publish(api, *(event(n, stamp=f"2026-01-01T00:00:0{i}Z") for i, n in enumerate(names)))
    ctl = make(api, tmp_path, OFF + sinks_yaml(sink("bus", receiver.url, outcomes="breakerTripped")))
    try:
        assert ctl.reconcile_once().phases == {"Quarantined": 3, "Blocked": 3}
        publish(api, event(names[5], uuid="GPU-2", stamp="2026-01-01T00:01:00Z"))
        assert ctl.reconcile_once().phases == {"Blocked": 1}
        wait_for(lambda: ctl.notifier.pending() == 0, "the queue sent")
    finally:
        ctl.notifier.close()
    assert [doc["type"] for _, doc in receiver.got] == ["com.nvidia.nvsentinel.breaker.tripped"]
    assert receiver.got[0][1]["data"]["refused"] == 3


def test_contact_support_reaches_its_outcome(cluster: Any, tmp_path: Path, receiver: Receiver) -> None:
    _, api, names = cluster
    publish(api, event(names[2], action="CONTACT_SUPPORT"))
    ctl = make(api, tmp_path, sinks_yaml(sink("pager", receiver.url, outcomes="contactSupport")))
    try:
        ctl.reconcile_once()
        wait_for(lambda: len(receiver.got) == 1, "the contact-support notification")
    finally:
        ctl.notifier.close()
    doc = receiver.got[0][1]
    assert (doc["type"], doc["subject"]) == ("com.nvidia.nvsentinel.node.contactsupport", names[2])
    assert doc["data"]["recommendedAction"] == "CONTACT_SUPPORT"


def test_exhausted_remediation_attempts_reach_remediation_failed(
    cluster: Any, tmp_path: Path, receiver: Receiver
) -> None:
    sim, api, names = cluster
    publish(api, event(names[3]))
    values = "fault-remediation: {maxRemediationAttempts: 1}\n"
    ctl = make(
        api, tmp_path, values + sinks_yaml(sink("chat", receiver.url, kind="slack", outcomes="remediationFailed"))
    )
    try:
        ctl.reconcile_once()
        sim.advance(300)  # the reboot completes; the fault comes back on another GPU
        ctl.reconcile_once()
        publish(api, event(names[3], uuid="GPU-2", stamp="2026-01-01T00:20:00Z"))
        ctl.reconcile_once()
        wait_for(lambda: len(receiver.got) == 1, "the remediation-failed notification")
    finally:
        ctl.notifier.close()
    assert receiver.got[0][1] == {
        "text": f"nvsentinel remediationFailed: {names[3]}: GpuXidError (error 79, GPU_UUID GPU-2): "
        "1 remediation attempt(s) of group restart did not clear the fault"
    }


def test_a_receiver_answering_500_gets_the_notification_once_it_recovers() -> None:
    flaky = Receiver([500, 503])
    notifier = notify.Notifier(notifications(sinks=[{"name": "bus", "url": flaky.url, **FAST}]))
    try:
        notifier.notify(notify.QUARANTINED, "node-1", "quarantined")
        sender = notifier.senders[0]
        wait_for(lambda: sender.delivered == 1, "delivered after two 5xx")
    finally:
        notifier.close()
        flaky.close()
    assert (sender.tries, sender.failed, len(flaky.got)) == (3, 0, 1)


def test_a_receiver_that_is_down_gets_the_notification_once_it_listens() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/hook"
    notifier = notify.Notifier(notifications(sinks=[{"name": "bus", "url": url, "attempts": 100, **FAST}]))
    sender = notifier.senders[0]
    late: Receiver | None = None
    try:
        notifier.notify(notify.RELEASED, "node-1", "released")
        wait_for(lambda: sender.tries >= 2, "two refused tries")
        assert sender.delivered == 0
        late = Receiver(port=port)
        wait_for(lambda: sender.delivered == 1, "delivered once the receiver listens")
    finally:
        notifier.close()
        if late is not None:
            late.close()
    assert late.got[0][1]["type"] == "com.nvidia.nvsentinel.node.released"


def test_a_404_is_not_retried() -> None:
    wrong = Receiver([404, 404, 404])
    notifier = notify.Notifier(notifications(sinks=[{"name": "bus", "url": wrong.url, **FAST}]))
    sender = notifier.senders[0]
    try:
        notifier.notify(notify.QUARANTINED, "node-1", "quarantined")
        wait_for(lambda: sender.failed == 1, "given up")
    finally:
        notifier.close()
        wrong.close()
    assert sender.tries == 1


def test_a_url_the_http_client_refuses_fails_each_notice_and_the_sender_lives_on() -> None:
    notifier = notify.Notifier(notifications(sinks=[{"name": "bus", "url": "http://[bad/", **FAST}]))
    sender = notifier.senders[0]
    try:
        notifier.notify(notify.QUARANTINED, "node-1", "quarantined")
        wait_for(lambda: sender.failed == 1, "the first given up")
        notifier.notify(notify.QUARANTINED, "node-2", "quarantined")
        wait_for(lambda: sender.failed == 2, "the second given up by the same thread")
    finally:
        notifier.close()
    assert sender.tries == 2


def garbling_server() -> tuple[socket.socket, threading.Thread, list[int]]:
    """Answers its first connection with bytes that are no HTTP, then proper 200s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    served: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                answer = b"not http at all\r\n\r\n" if not served else b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
                served.append(len(served))
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread, served


def test_a_garbled_answer_is_retried() -> None:
    listener, thread, served = garbling_server()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    notifier = notify.Notifier(notifications(sinks=[{"name": "bus", "url": url, **FAST}]))
    sender = notifier.senders[0]
    try:
        notifier.notify(notify.QUARANTINED, "node-1", "quarantined")
        wait_for(lambda: sender.delivered == 1, "delivered after a garbled answer")
    finally:
        notifier.close()
        listener.close()
        thread.join(10)
    assert (sender.tries, len(served)) == (2, 2)


def test_a_full_queue_drops_its_oldest_notification(caplog: pytest.LogCaptureFixture) -> None:
    slow = Receiver()
    slow.gate = threading.Event()
    notifier = notify.Notifier(notifications(queueSize=3, sinks=[{"name": "bus", "url": slow.url, **FAST}]))
    sender = notifier.senders[0]
    try:
        notifier.notify(notify.QUARANTINED, "node-1", "quarantined")
        assert slow.arrived.wait(30)  # the first one is in flight, held by the receiver
        for i in range(2, 11):
            notifier.notify(notify.QUARANTINED, f"node-{i}", "quarantined")
        assert (sender.dropped, sender.pending()) == (6, 4)
        warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert warned == [
            "notification queue of sink bus full (3): dropped quarantined about node-2 (1 dropped so far)"
        ]
        slow.gate.set()
        wait_for(lambda: sender.delivered == 4, "the four kept delivered")
    finally:
        notifier.close()
        slow.close()
    assert [doc["subject"] for _, doc in slow.got] == ["node-1", "node-8", "node-9", "node-10"]


def test_a_url_from_the_environment_and_an_unset_variable() -> None:
    hook = Receiver()
    chosen = notifications(sinks=[{"name": "bus", "urlFrom": {"env": "ONCALL_URL"}, **FAST}])
    try:
        notifier = notify.Notifier(chosen, env={"ONCALL_URL": hook.url})
        notifier.notify(notify.QUARANTINED, "node-1", "quarantined")
        wait_for(lambda: len(hook.got) == 1, "delivered to the URL from the environment")
        notifier.close()
    finally:
        hook.close()
    with pytest.raises(errors.InvalidInput) as raised:
        notify.Notifier(chosen, env={})
    assert raised.value.line() == (
        "error: nvsentinel.notifications.sinks[0].urlFrom.env: environment variable ONCALL_URL is not set"
    )


@pytest.mark.parametrize(
    ("sink_text", "message"),
    [
        ("      - {name: a}\n", "set exactly one of url and urlFrom"),
        ("      - {name: a, url: 'http://x', urlFrom: {env: X}}\n", "set exactly one of url and urlFrom"),
        ("      - {name: a, url: 'ftp://x'}\n", "url must start with http:// or https://"),
        ("      - {name: a, url: 'http://x', outcomes: [paged]}\n", "outcomes.0"),
    ],
)
def test_the_values_reject_a_bad_sink(tmp_path: Path, sink_text: str, message: str) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("nvsentinel:\n  notifications:\n    sinks:\n" + sink_text)
    with pytest.raises(errors.InvalidInput) as raised:
        config.load(path)
    assert message in raised.value.line() and "nvsentinel.notifications.sinks" in raised.value.line()


def test_a_receiver_that_never_answers_does_not_slow_quarantine(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    silent = socket.socket()  # accepts connections into its backlog, never reads or answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/hook"
    values = OFF + "fault-quarantine: {circuitBreaker: {enabled: false}}\n"
    values += "nvsentinel:\n  notifications:\n    queueSize: 2\n    sinks:\n"
    values += sink("bus", url, extra="        timeoutSeconds: 120\n        attempts: 1\n")
    publish(api, *(event(n, stamp=f"2026-01-01T00:00:0{i}Z") for i, n in enumerate(names)))
    ctl = make(api, tmp_path, values, seed=False)  # the default rule sets, without the seed's breaker
    sender = ctl.notifier.senders[0]
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(ctl.reconcile_once()))
    worker.start()
    try:
        # every event gets its outcome while the receiver holds the first notification unanswered:
        # a send on the quarantine path would hold the pass for timeoutSeconds (120 s) per event
        wait_for(
            lambda: all(s.phase for s in resource.list_events(api)) and len(resource.list_events(api)) == len(names),
            "every event processed",
            seconds=60,
        )
        assert sender.delivered == 0 and sender.tries <= 1
        worker.join(60)
        assert results and results[0].phases == {"Quarantined": len(names)}
        wait_for(lambda: sender.tries == 1, "the first notification in flight")
        # at most two queued and one in flight: the rest dropped, oldest first
        assert sender.dropped >= len(names) - 3 and sender.dropped + sender.pending() == len(names)
    finally:
        silent.close()  # the connection waiting in the backlog is reset: the sender gives up
        worker.join(60)
        ctl.notifier.close()
    assert sender.delivered == 0


@given(
    subject=st.text(max_size=80),
    message=st.text(max_size=300),
    outcome=st.sampled_from(sorted(notify.TYPES)),
    seconds=st.integers(min_value=0, max_value=4_000_000_000),
    data=st.dictionaries(
        st.text(min_size=1, max_size=10).filter(lambda k: k not in ("outcome", "message")), st.integers()
    ),
)
def test_any_notice_is_a_cloudevent_that_survives_json(
    subject: str, message: str, outcome: str, seconds: int, data: dict[str, int]
) -> None:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    doc = json.loads(
        notify.body_for(
            hsettings.Sink(name="s", url="http://x"),
            notify.Notice(outcome, subject, message, moment, data),
            source="/s",
        )[0]
    )
    assert {k for k in doc if k not in ("datacontenttype",)} == {
        "specversion",
        "id",
        "source",
        "type",
        "subject",
        "time",
        "data",
    }
    assert doc["type"] == notify.TYPES[outcome] and doc["subject"] == subject
    assert datetime.fromisoformat(doc["time"].replace("Z", "+00:00")) == moment
    assert doc["data"] == {"outcome": outcome, "message": message, **data}


def test_the_chart_hands_the_controller_its_sink_urls_from_a_secret(tmp_path: Path) -> None:
    from shared.chart import manifests

    values = tmp_path / "values.yaml"
    values.write_text(
        "nvsentinel-controller:\n  envFrom: [{secretRef: {name: nvsentinel-notify}}]\n"
        "nvsentinel:\n  notifications:\n    sinks:\n"
        "      - {name: oncall, type: slack, urlFrom: {env: ONCALL_URL}, outcomes: [quarantined]}\n"
    )
    objects = manifests.render(manifests.Request(values_files=(values,), set_values=(), namespace="nvsentinel"))
    [deployment] = [
        o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "nvsentinel-controller"
    ]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["envFrom"] == [{"secretRef": {"name": "nvsentinel-notify"}}]
    [cm] = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "nvsentinel-values"]
    path = tmp_path / "controller.yaml"
    path.write_text(cm["data"]["values.yaml"])
    [sink] = config.load(path).settings.nvsentinel.notifications.sinks
    assert (sink.name, sink.urlFrom and sink.urlFrom.env) == ("oncall", "ONCALL_URL")
    default = manifests.render(manifests.Request(values_files=(), set_values=(), namespace="nvsentinel"))
    [plain] = [o for o in default if o["kind"] == "Deployment" and o["metadata"]["name"] == "nvsentinel-controller"]
    assert "envFrom" not in plain["spec"]["template"]["spec"]["containers"][0]


def test_run_with_an_unset_url_variable_is_exit_2_before_touching_the_cluster(
    run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ONCALL_URL", raising=False)
    values = tmp_path / "values.yaml"
    values.write_text(sinks_yaml("      - {name: oncall, type: slack, urlFrom: {env: ONCALL_URL}}\n"))
    result = run_cli("nvsentinel", "run", "-f", str(values), "--kubeconfig", str(tmp_path / "none"))
    assert result.code == 2
    assert result.stderr == (
        "error: nvsentinel.notifications.sinks[0].urlFrom.env: environment variable ONCALL_URL is not set\n"
    )
