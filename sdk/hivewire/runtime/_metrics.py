"""Operations: Prometheus metrics and the HTTP endpoint (``/metrics``, ``/health``) on ``endpoint.port``.

Metric names (all prefixed ``hivewire_``): ``events_consumed_total``, ``events_undecodable_total``,
``listener_events_handled_total{listener}``, ``listener_attempts_failed_total{listener}``,
``listener_events_retried_total{listener}``, ``listener_events_dead_lettered_total{listener}``,
``listener_timeouts_total{listener}``, ``listener_abandoned_threads{listener}``,
``listener_queue_depth{listener}``, ``listener_queue_bytes{listener}``, ``listener_spilled_events{listener}``,
``listener_paused{listener}`` (1 while switched off, with coordination), ``sidelines{state}`` (unfinished
sidelines of the listeners run here), ``sideline_events_replayed_total{listener,sideline}``,
``sideline_replay_remaining_offsets{listener,sideline}``,
``listener_latency_seconds{listener}`` (from a record being polled to the listener being done with it: one
observation per event), ``listener_events_behind{listener}`` (from the end of the log to what the listener
has handled: events not yet read plus those read and not yet done with by it),
``events_by_type_total{event_type}``, ``build_info{version,python}``,
``consumer_lag{topic,partition}`` (not yet read), ``consumer_committed_lag{topic,partition}`` (from the end
of the log to the group's committed offset), ``kafka_records_missing_total{topic,partition}`` (records the broker
deleted before the group read them: runtime/_retention.py), ``commits_total``, ``commit_failures_total``,
``commit_pending_age_seconds``, ``dead_letter_failures_total``. With coordination configured:
``coordination_instances{app}`` (live instances of the app, as this one sees them),
``singleton_leadership_changes_total{listener,change}`` (``gained``/``lost``), ``singleton_leading{listener}``
(1 while this instance runs the singleton) and ``singleton_lag{listener}`` (events from the end of the log to
what the singleton has handled, on the instance that runs it). Each App has its own registry, so several
apps (or tests) in one process do not collide.

Drone Fly's Spring Actuator paths are served too (``/actuator/prometheus``, ``/actuator/health``,
``/actuator/health/liveness``, ``/actuator/health/readiness``), so existing probes keep working.
"""

from __future__ import annotations

import bisect
import json
import logging
import platform
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, make_wsgi_app

from hivewire._version import __version__

log = logging.getLogger("hivewire.metrics")

Health = Callable[[], dict[str, Any]]
StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class Metrics:
    """The runtime's Prometheus metrics, in a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.consumed = Counter("hivewire_events_consumed", "Records read from the source.", registry=r)
        self.undecodable = Counter(
            "hivewire_events_undecodable",
            "Records that could not be decoded (dead-lettered with the reason).",
            registry=r,
        )
        self.handled = Counter(
            "hivewire_listener_events_handled", "Events a listener handled successfully.", ["listener"], registry=r
        )
        self.failed = Counter(
            "hivewire_listener_attempts_failed", "Listener calls that raised or timed out.", ["listener"], registry=r
        )
        self.retried = Counter(
            "hivewire_listener_events_retried", "Retries scheduled after a failed call.", ["listener"], registry=r
        )
        self.dead_lettered = Counter(
            "hivewire_listener_events_dead_lettered",
            "Events sent to the dead-letter topic after the last attempt failed.",
            ["listener"],
            registry=r,
        )
        self.timeouts = Counter(
            "hivewire_listener_timeouts", "Listener calls that exceeded the timeout.", ["listener"], registry=r
        )
        self.abandoned = Gauge(
            "hivewire_listener_abandoned_threads",
            "Threads given up after a timeout whose listener call has not returned yet.",
            ["listener"],
            registry=r,
        )
        self.queue_depth = Gauge(
            "hivewire_listener_queue_depth",
            "Events waiting for a listener in memory, and its dead letters not yet acknowledged.",
            ["listener"],
            registry=r,
        )
        self.queue_bytes = Gauge(
            "hivewire_listener_queue_bytes",
            "Bytes of the record values waiting for a listener.",
            ["listener"],
            registry=r,
        )
        self.spilled = Gauge(
            "hivewire_listener_spilled_events",
            "Events waiting for a listener that fell too far "
            "behind to keep them in memory: it reads them again from the topic.",
            ["listener"],
            registry=r,
        )
        self.paused = Gauge(
            "hivewire_listener_paused",
            "1 while the listener is switched off (hivewire listener pause), else 0.",
            ["listener"],
            registry=r,
        )
        self.sidelines = Gauge(
            "hivewire_sidelines",
            "Unfinished sidelines of the listeners this instance runs, by state (started, resumed, resolved).",
            ["state"],
            registry=r,
        )
        self.replayed = Counter(
            "hivewire_sideline_events_replayed",
            "Events a sideline's replay read again and handed to its listener here.",
            ["listener", "sideline"],
            registry=r,
        )
        self.replay_remaining = Gauge(
            "hivewire_sideline_replay_remaining_offsets",
            "Offsets of the partitions held here that a sideline's replay has queued and not yet read again "
            "(records of other tables and listeners included: an upper bound of its events).",
            ["listener", "sideline"],
            registry=r,
        )
        self.latency = Histogram(
            "hivewire_listener_latency_seconds",
            "From a record being polled to the listener being done with it (one observation per event).",
            ["listener"],
            registry=r,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300),
        )
        self.lag = Gauge(
            "hivewire_consumer_lag",
            "Records behind the end of the partition not yet read by this consumer.",
            ["topic", "partition"],
            registry=r,
        )
        self.committed_lag = Gauge(
            "hivewire_consumer_committed_lag",
            "Records between the end of the partition and the group's committed offset: what a restart reads.",
            ["topic", "partition"],
            registry=r,
        )
        self.behind = Gauge(
            "hivewire_listener_events_behind",
            "Events from the end of the log to what the listener has handled: not yet read, or read and not "
            "yet handled or dead-lettered by this listener.",
            ["listener"],
            registry=r,
        )
        self.by_type = Counter(
            "hivewire_events_by_type", "Records read from the source, by event type.", ["event_type"], registry=r
        )
        self.build = Info("hivewire_build", "The hivewire version and Python of this process.", registry=r)
        self.build.info({"version": __version__, "python": platform.python_version()})
        self.commits = Counter("hivewire_commits", "Offset commits sent to the source.", registry=r)
        self.records_missing = Counter(
            "hivewire_kafka_records_missing",
            "Records the broker deleted (retention) before this group read them; their events were never handled.",
            ["topic", "partition"],
            registry=r,
        )
        self.commit_failures = Counter(
            "hivewire_commit_failures",
            "Offset commits the broker refused (the offsets go with a later commit).",
            registry=r,
        )
        self.pending_age = Gauge(
            "hivewire_commit_pending_age_seconds",
            "Age of the oldest polled batch not yet handled or dead-lettered by every "
            "listener: nothing after it can be committed.",
            registry=r,
        )
        self.dead_letter_failures = Counter(
            "hivewire_dead_letter_failures",
            "Dead letters the broker did not acknowledge (each is sent again).",
            registry=r,
        )

        # -- singleton listeners and the app's instances (coordination) ----------------------------------------
        self.instances = Gauge(
            "hivewire_coordination_instances",
            "Live instances of the app in its coordination group, as this instance last saw them.",
            ["app"],
            registry=r,
        )
        self.leadership_changes = Counter(
            "hivewire_singleton_leadership_changes",
            "Times this instance gained or lost the right to run a singleton listener.",
            ["listener", "change"],
            registry=r,
        )
        self.singleton_leading = Gauge(
            "hivewire_singleton_leading", "1 while this instance runs the singleton listener.", ["listener"], registry=r
        )
        self.singleton_lag = Gauge(
            "hivewire_singleton_lag",
            "Events from the end of the log to what the singleton listener has handled (0 where it does not run).",
            ["listener"],
            registry=r,
        )

    def for_listener(self, name: str) -> ListenerMetrics:
        return ListenerMetrics(self, name)

    def for_singleton(self) -> Metrics:
        """Metrics for a singleton listener's own runner: its listener's metrics are this app's; what counts
        records read, commits and consumer lag is its own (not exposed), so the app's are not counted twice."""
        own = Metrics()
        for name in _LISTENER_FAMILIES:
            setattr(own, name, getattr(self, name))
        return own


#: The per-listener metric families, shared by a singleton's runner.
_LISTENER_FAMILIES = (
    "handled",
    "failed",
    "retried",
    "dead_lettered",
    "timeouts",
    "abandoned",
    "queue_depth",
    "queue_bytes",
    "spilled",
    "latency",
    "behind",
)


class ListenerMetrics:
    """One listener's children of the labelled metrics (resolving labels once, not per event)."""

    def __init__(self, metrics: Metrics, name: str) -> None:
        self.handled = metrics.handled.labels(name)
        self.failed = metrics.failed.labels(name)
        self.retried = metrics.retried.labels(name)
        self.dead_lettered = metrics.dead_lettered.labels(name)
        self.timeouts = metrics.timeouts.labels(name)
        self.abandoned = metrics.abandoned.labels(name)
        self.queue_depth = metrics.queue_depth.labels(name)
        self.queue_bytes = metrics.queue_bytes.labels(name)
        self.spilled = metrics.spilled.labels(name)
        self.paused = metrics.paused.labels(name)
        self.latency = metrics.latency.labels(name)
        self.behind = metrics.behind.labels(name)
        # prometheus_client's own bucket counters, to observe a share's events in one pass (observe_latencies)
        self._bounds: list[float] | None = getattr(self.latency, "_upper_bounds", None)
        self._buckets: list[Any] | None = getattr(self.latency, "_buckets", None)
        self._sum: Any = getattr(self.latency, "_sum", None)

    def observe_latencies(self, start: float, ends: list[float]) -> None:
        """Observe ``end - start`` for every ``end``: one observation per event, applied per bucket at once
        (a listener doing nothing handles an event in microseconds; an ``observe`` each would cost a tenth)."""
        bounds, buckets, total = self._bounds, self._buckets, self._sum
        if bounds is None or buckets is None or total is None or len(bounds) != len(buckets):
            for end in ends:
                self.latency.observe(end - start)
            return
        counts = [0] * len(bounds)
        amount = 0.0
        for end in ends:
            value = end - start
            amount += value
            counts[bisect.bisect_left(bounds, value)] += 1  # the first bucket whose bound is >= value
        for i, count in enumerate(counts):
            if count:
                buckets[i].inc(count)
        total.inc(amount)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)


class HealthServer:
    """Serves ``/metrics`` and ``/health`` (plus Drone Fly's ``/actuator/...`` paths) on a port, in a thread.

    ``health()`` returns a dict with at least ``"status"``: ``"UP"`` gives HTTP 200, anything else 503.
    """

    def __init__(self, metrics: Metrics, health: Health, port: int, host: str = "0.0.0.0") -> None:
        self._metrics_app = make_wsgi_app(metrics.registry)
        self._health = health
        self._server = make_server(host, port, self._app, server_class=_Server, handler_class=_QuietHandler)
        self.port = int(self._server.server_port)
        self._thread = threading.Thread(target=self._server.serve_forever, name="hivewire-http", daemon=True)

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _app(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/").rstrip("/") or "/"
        if path in ("/metrics", "/actuator/prometheus"):
            return self._metrics_app(environ, start_response)  # type: ignore[no-any-return]
        if path in (
            "/health",
            "/actuator/health",
            "/health/liveness",
            "/health/readiness",
            "/actuator/health/liveness",
            "/actuator/health/readiness",
        ):
            try:
                body = self._health()
            except Exception as e:  # a broken health check is itself unhealthy, not a crash
                body = {"status": "DOWN", "error": repr(e)}
            if path.endswith("liveness"):
                # Liveness only asks whether the process is working at all; readiness and /health say more.
                body = {"status": "UP" if body.get("alive", body.get("status") == "UP") else "DOWN"}
            status = "200 OK" if body.get("status") == "UP" else "503 Service Unavailable"
            data = json.dumps(body, default=str).encode()
            start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
            return [data]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found: try /metrics or /health\n"]
