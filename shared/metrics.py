"""Prometheus metrics: declarations the controllers and monitors record into, and their HTTP endpoint.

Built on ``prometheus_client`` (the text format 0.0.4 and OpenMetrics by ``Accept`` negotiation,
gzip, the ``process_*``/``python_*`` collectors), which is imported only when a metric is first
recorded or served: a module declares its metrics at import (``counter``, ``gauge``,
``histogram``), and that costs nothing, so ``aicr`` commands and ``--help`` never load the library.

One registry per process (``registry()``, not prometheus_client's global default): every metric is
declared once, by name, however many controllers a process (or a test session) starts; the
controllers of one process add into the same series, and tests compare values before and after.
``serve(address, prefixes)`` exposes the metrics whose names start with one of ``prefixes`` (a
program shows its own) plus the process collectors, on ``GET``/``HEAD /metrics``; ``/healthz``
answers ``ok``. The endpoint binds 127.0.0.1 unless told otherwise: ``--metrics-addr :9090``
still means loopback; every interface takes an explicit ``0.0.0.0:9090`` (what the chart passes).

Names follow Prometheus' conventions, checked at declaration: counters end in ``_total``,
histograms measure base units and say which (``_seconds``), gauges carry no ``_total``. Every name
is listed in docs/metrics.md; ``declared()`` is what the dashboard and alert tests check against.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from shared import errors

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

DEFAULT_HOST = "127.0.0.1"
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
"""Seconds, from a single API call to an hour-long certification run."""
BASE_UNITS = ("_seconds", "_bytes", "_ratio")
"""What a histogram's name ends in: the unit it observes."""


class Declared:
    """A metric by name, help and label names; its prometheus_client object is made on first use
    (a record, or the first scrape of an endpoint)."""

    kind = ""

    def __init__(self, name: str, help_text: str, labels: Sequence[str]) -> None:
        _check_name(self.kind, name, labels)
        self.name = name
        self.help = help_text
        self.labels = tuple(labels)
        self._made: Any = None
        self._lock = threading.Lock()

    def _new(self, reg: CollectorRegistry) -> Any:
        raise NotImplementedError

    def make(self) -> None:
        """Create the prometheus_client metric in the process registry (once)."""
        if self._made is None:
            with self._lock:
                if self._made is None:
                    self._made = self._new(registry())

    def _metric(self, labels: dict[str, str]) -> Any:
        self.make()
        if set(labels) != set(self.labels):
            raise ValueError(f"{self.name} takes labels {list(self.labels)}, got {sorted(labels)}")
        return self._made.labels(**{k: str(v) for k, v in labels.items()}) if self.labels else self._made

    def value(self, **labels: str) -> float:
        """The current value (a counter's ``_total``, a gauge's value); 0 before the first record."""
        sample = self.name if self.kind != "histogram" else f"{self.name}_count"
        self._metric(labels)  # made, so an unrecorded unlabelled metric reads 0
        found = registry().get_sample_value(sample, {k: str(v) for k, v in labels.items()})
        return 0.0 if found is None else found


class Counter(Declared):
    """A value that only goes up; the name ends in ``_total``."""

    kind = "counter"

    def _new(self, reg: CollectorRegistry) -> Any:
        from prometheus_client import Counter as PromCounter

        return PromCounter(self.name, self.help, self.labels, registry=reg)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        self._metric(labels).inc(amount)


class Gauge(Declared):
    """A value that goes up and down."""

    kind = "gauge"

    def _new(self, reg: CollectorRegistry) -> Any:
        from prometheus_client import Gauge as PromGauge

        return PromGauge(self.name, self.help, self.labels, registry=reg)

    def set(self, value: float, **labels: str) -> None:
        self._metric(labels).set(value)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        self._metric(labels).inc(amount)

    def dec(self, amount: float = 1.0, **labels: str) -> None:
        self._metric(labels).dec(amount)


class Histogram(Declared):
    """Observations in cumulative buckets, with their sum and count; the name says the unit."""

    kind = "histogram"

    def __init__(
        self, name: str, help_text: str, labels: Sequence[str] = (), buckets: Sequence[float] = DEFAULT_BUCKETS
    ) -> None:
        super().__init__(name, help_text, labels)
        if "le" in self.labels:
            raise ValueError("a histogram cannot have a label named 'le'")
        self.buckets = tuple(sorted(float(b) for b in buckets if b != float("inf")))

    def _new(self, reg: CollectorRegistry) -> Any:
        from prometheus_client import Histogram as PromHistogram

        return PromHistogram(self.name, self.help, self.labels, registry=reg, buckets=self.buckets)

    def observe(self, value: float, **labels: str) -> None:
        self._metric(labels).observe(value)

    def count(self, **labels: str) -> float:
        """How many observations were made (the ``_count`` series)."""
        return self.value(**labels)


def _valid(name: str) -> bool:
    return bool(name) and name.isascii() and not name[0].isdigit() and all(c.isalnum() or c in "_:" for c in name)


def _check_name(kind: str, name: str, labels: Sequence[str]) -> None:
    """Prometheus' naming rules, so a bad name fails when its module is imported, not at a scrape."""
    if not _valid(name) or not all(_valid(n) and ":" not in n and not n.startswith("__") for n in labels):
        raise ValueError(f"invalid metric or label name: {name} {list(labels)}")
    if kind == "counter" and not name.endswith("_total"):
        raise ValueError(f"counter {name} must end in _total")
    if kind != "counter" and name.endswith("_total"):
        raise ValueError(f"{kind} {name} must not end in _total (only counters do)")
    if kind == "histogram" and not name.endswith(BASE_UNITS):
        raise ValueError(f"histogram {name} must name its base unit ({', '.join(BASE_UNITS)})")


_DECLARED: dict[str, Declared] = {}
_DECLARED_LOCK = threading.Lock()


def _declare(metric: Declared) -> Any:
    with _DECLARED_LOCK:
        found = _DECLARED.get(metric.name)
        if found is None:
            _DECLARED[metric.name] = metric
            return metric
    if type(found) is not type(metric) or found.labels != metric.labels:
        raise ValueError(f"metric {metric.name} is already registered differently")
    return found


def counter(name: str, help_text: str, labels: Sequence[str] = ()) -> Counter:
    """The process's counter ``name`` (declared here the first time; the same object after)."""
    made: Counter = _declare(Counter(name, help_text, labels))
    return made


def gauge(name: str, help_text: str, labels: Sequence[str] = ()) -> Gauge:
    made: Gauge = _declare(Gauge(name, help_text, labels))
    return made


def histogram(
    name: str, help_text: str, labels: Sequence[str] = (), buckets: Sequence[float] = DEFAULT_BUCKETS
) -> Histogram:
    made: Histogram = _declare(Histogram(name, help_text, labels, buckets))
    return made


def declared() -> dict[str, Declared]:
    """Every metric declared so far in this process, by name."""
    with _DECLARED_LOCK:
        return dict(_DECLARED)


def watch_restarts(program: str) -> Counter:
    """``<program>_watch_restarts_total{resource, reason}``: a watch that ended and was started again.

    ``program`` is ``nvsentinel`` or ``nvcrectl`` (the prefix its endpoint serves); ``resource`` is
    the watched collection (``healthevents``), ``reason`` why it was started again: ``dropped``
    (cut mid-stream, resumed from its last resourceVersion) or ``expired`` (410, listed again)."""
    return counter(
        f"{program}_watch_restarts_total",
        "Watches of the API server that ended and were started again, by resource and reason.",
        ["resource", "reason"],
    )


WATCH_RESTARTS = (watch_restarts("nvsentinel"), watch_restarts("nvcrectl"))
"""Declared up front, so the dashboard and alerts may use them before the watch loop records one."""

_REGISTRY: list[CollectorRegistry] = []
"""The process's registry once made (a list, so making it needs no ``global``)."""
_REGISTRY_LOCK = threading.Lock()


def registry() -> CollectorRegistry:
    """The process's registry of declared metrics (created, and prometheus_client imported, on first use).

    ``*_created`` series are turned off: they double every counter and histogram and no query of
    ours reads them."""
    with _REGISTRY_LOCK:
        if not _REGISTRY:
            import prometheus_client

            prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
            _REGISTRY.append(prometheus_client.CollectorRegistry(auto_describe=True))
        return _REGISTRY[0]


class _Only:
    """The families of ``source`` whose names start with one of ``prefixes`` (all when none).

    A counter's family is named without its ``_total`` (prometheus_client's model); the prefix is
    matched against the name it was declared with."""

    def __init__(self, source: CollectorRegistry, prefixes: tuple[str, ...]) -> None:
        self.source = source
        self.prefixes = prefixes

    def collect(self) -> Iterator[Metric]:
        # every declared metric is shown from the first scrape: an unlabelled counter reads 0
        # rather than being absent, so increase() and absent() in alerts see it
        for declared_metric in declared().values():
            declared_metric.make()
        for family in self.source.collect():
            name = f"{family.name}_total" if family.type == "counter" else family.name
            if not self.prefixes or name.startswith(self.prefixes):
                yield family


def exposed(prefixes: Iterable[str] = (), *, process: bool = True) -> CollectorRegistry:
    """What an endpoint serves: the declared metrics under ``prefixes``, and the process collectors."""
    from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector

    served = CollectorRegistry(auto_describe=False)
    served.register(_Only(registry(), tuple(prefixes)))
    if process:
        ProcessCollector(registry=served)
        PlatformCollector(registry=served)
        GCCollector(registry=served)
    return served


def exposition(prefixes: Iterable[str] = ()) -> str:
    """The text format 0.0.4 of the declared metrics under ``prefixes`` (no process collectors)."""
    from prometheus_client import generate_latest

    return generate_latest(exposed(prefixes, process=False)).decode()


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (loopback) or ``PORT`` (loopback); ``[::1]:PORT`` for IPv6."""
    text = address.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise errors.InvalidInput(
            f"invalid metrics address {address!r} (want HOST:PORT)", where="--metrics-addr"
        ) from None
    if not 0 <= number <= 65535:
        raise errors.InvalidInput(f"invalid port in {address!r}", where="--metrics-addr")
    return host, number


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _routes(metrics_app: WsgiApp) -> WsgiApp:
    """``/metrics`` (GET, and HEAD: the same headers, no body), ``/healthz``, 404 elsewhere."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "GET")
        if path == "/metrics" and method in ("GET", "HEAD"):
            answer: list[tuple[str, list[tuple[str, str]]]] = []
            body = b"".join(metrics_app({**environ, "REQUEST_METHOD": "GET"}, lambda *a: answer.append(a[:2])))
            code, headers = answer[0]
            start_response(code, [*headers, ("Content-Length", str(len(body)))])
            return [] if method == "HEAD" else [body]
        if method not in ("GET", "HEAD"):
            code, body = "405 Method Not Allowed", b"use GET or HEAD\n"
        elif path == "/healthz":
            code, body = "200 OK", b"ok\n"
        else:
            code, body = "404 Not Found", b"not found\n"
        start_response(code, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
        return [] if method == "HEAD" else [body]

    return app


class MetricsServer:
    """``/metrics`` on a background thread; ``stop()`` closes the socket and joins the thread."""

    def __init__(self, address: str = f"{DEFAULT_HOST}:0", prefixes: Iterable[str] = ()) -> None:
        import socket
        from wsgiref.simple_server import WSGIRequestHandler

        from prometheus_client import make_wsgi_app
        from prometheus_client.exposition import ThreadingWSGIServer

        host, port = parse_address(address)

        class Quiet(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
                return

        class Server(ThreadingWSGIServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        try:
            self._server = Server((host, port), Quiet)
        except OSError as exc:
            raise errors.Unavailable(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}", where="--metrics-addr"
            ) from None
        self._server.set_app(_routes(make_wsgi_app(exposed(prefixes))))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="metrics-http", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> MetricsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(address: str | None, prefixes: Iterable[str] = ()) -> MetricsServer | None:
    """Start the endpoint on ``address``; ``None`` or empty starts nothing (metrics are optional)."""
    if not address:
        return None
    return MetricsServer(address, prefixes).start()
