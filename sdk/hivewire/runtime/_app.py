"""``App``: a named set of metastore event listeners, and the way to run them.

::

    app = hw.App("orders-sync")

    @app.on_create_table
    def created(event: hw.CreateTableEvent) -> None: ...

    @app.on(hw.EventType.ADD_PARTITION, db="sales", table="orders_*")
    def added(event: hw.AddPartitionEvent) -> None: ...

    app.add_listener(Audit)                 # a MetaStoreEventListener class, an instance, or a function
    app.run(hw.KafkaSource(bootstrap_servers="host:9092", topic="apiary"))   # blocks; SIGTERM stops it
    app.dispatch(event)                     # call the matching listeners now (tests, notebooks)
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import logging
import signal
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from difflib import get_close_matches
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._files import SettingMap
from hivewire.errors import ConfigError, ListenerError
from hivewire.events._model import EventType, ListenerEvent
from hivewire.runtime._assembly import RunnerBuilder
from hivewire.runtime._derived import PLAIN_TYPES, operations, routed
from hivewire.runtime._handlers import AppDecorators
from hivewire.runtime._kafka import KafkaSource
from hivewire.runtime._listener import (
    EventFilter,
    Listener,
    ListenerOptions,
    ListenerTarget,
    MetaStoreEventListener,
    check_signature,
    load_object,
    overridden_types,
)
from hivewire.runtime._metrics import HealthServer, Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._settings import RuntimeSettings
from hivewire.runtime._source import Source, SupportsTail

if TYPE_CHECKING:
    from typing_extensions import Unpack


log = logging.getLogger("hivewire.app")

F = TypeVar("F", bound=Callable[..., object])


class App(AppDecorators):
    """A named set of listeners. See the module docstring for the registration API.

    ``config`` holds the app's own settings (any key of :mod:`hivewire.config`); a configuration file,
    environment variables and CLI flags override them when the app runs. The per-type decorators
    (``app.on_create_table``, ...) come from :class:`~hivewire.runtime._handlers.AppDecorators`.
    """

    def __init__(self, name: str = "hivewire", *, config: SettingMap | None = None) -> None:
        self.name = name
        self.config = Config(config)
        self._listeners: list[Listener] = []
        self._runner: Runner | None = None
        self._failures: list[tuple[str, BaseException]] = []  # of the last run: (listener, exception)
        #: The signal that stopped the last run at once (a second SIGINT/SIGTERM) while listener calls were
        #: unfinished, their events left uncommitted; None otherwise. ``hivewire run`` exits 128 + it.
        self.abandoned_by: int | None = None
        self._lock = threading.Lock()
        self.metrics: Metrics | None = None

    def __repr__(self) -> str:
        return f"App({self.name!r}, listeners={[listener.name for listener in self._listeners]})"

    @property
    def listeners(self) -> list[Listener]:
        return list(self._listeners)

    # -- registration ---------------------------------------------------------------------------------
    def on(self, *types: EventType | str, **options: Unpack[ListenerOptions]) -> Callable[[F], F]:
        """Register the decorated function for ``types`` (all types when none is given), with glob filters
        and the other :class:`~hivewire.runtime._listener.ListenerOptions`."""

        def decorator(fn: F) -> F:
            self.add_listener(fn, types=types or None, **options)
            return fn

        return decorator

    def add_listener(
        self,
        target: ListenerTarget,
        *,
        types: Iterable[EventType | str] | None = None,
        **options: Unpack[ListenerOptions],
    ) -> Listener:
        """Register a function, a :class:`MetaStoreEventListener` class or instance, or an import path.

        A class is constructed with the configuration when the app starts. Types default to the ``on_*``
        methods a class overrides, or to every type for a function.
        """
        if isinstance(target, str):
            target = load_object(target)
        if inspect.isclass(target):
            default_types = overridden_types(target)
            default_name = target.__qualname__
        elif callable(target) and not isinstance(target, MetaStoreEventListener):
            default_types = PLAIN_TYPES  # derived types (ICEBERG_COMMIT) only when named
            default_name = (getattr(target, "__qualname__", None) or repr(target)).replace("<locals>.", "")
        else:
            default_types = overridden_types(type(target))
            default_name = type(target).__qualname__
        chosen = frozenset(EventType(t) for t in types) if types else default_types
        unknown = set(options) - set(ListenerOptions.__annotations__)
        if unknown:
            known = sorted(ListenerOptions.__annotations__)
            hints = [
                f" (did you mean {m[0]!r}?)" for u in sorted(unknown) for m in [get_close_matches(u, known, 1)] if m
            ]
            raise TypeError(f"unknown listener option(s) {sorted(unknown)}{''.join(hints)}; the options are {known}")
        check_signature(target, chosen)  # issue 33: a wrong signature is refused here, not per event
        name = options.get("name") or default_name
        listener = Listener(
            name=name,
            target=target,
            types=chosen,
            filter=EventFilter(
                types=routed(chosen),
                db=_tuple(options.get("db")),
                table=_tuple(options.get("table")),
                status=options.get("status", True),
            ),
            retry=options.get("retry"),
            timeout=options.get("timeout"),
            concurrency=options.get("concurrency"),
            singleton=_singleton(target, options.get("singleton")),
            operations=operations(name, options.get("operation"), chosen),
        )
        with self._lock:
            if any(existing.name == listener.name for existing in self._listeners):
                raise ConfigError(listener.name, "a listener with this name is already registered; pass name=...")
            self._listeners.append(listener)
        return listener

    # -- running --------------------------------------------------------------------------------------
    def dispatch(self, event: ListenerEvent) -> list[str]:
        """Call every matching listener with ``event`` now, in registration order; return their names.

        Each listener gets its own copy of the event. If any raise, the others still run, then
        :class:`~hivewire.errors.ListenerError` is raised with every failure. No retries, no dead letters.
        """
        called: list[str] = []
        errors: dict[str, BaseException] = {}
        for listener in self._listeners:
            if not listener.accepts(event):
                continue
            listener.bind(self.config)
            called.append(listener.name)
            try:
                result = listener.handlers[event.event_type](event.copy())
                if event.event_type in listener.async_types:
                    _run_coroutine(listener.name, result)
            except Exception as e:
                errors[listener.name] = e
        if errors:
            # Chained to the (first) listener's own exception, so a test's traceback ends in the listener.
            raise ListenerError(errors) from next(iter(errors.values()))
        return called

    def run(
        self, source: Source | KafkaSource | None = None, *, config: Config | None = None, handle_signals: bool = True
    ) -> None:
        """Consume ``source`` (by default the Kafka topic in the configuration) until stopped.

        Blocks. SIGTERM or SIGINT stop it cleanly (a second signal stops it without waiting for the listeners'
        calls in progress, whose events are delivered again on restart; a third, at once). Returns when a finite
        source (such as :class:`~hivewire.runtime.MemorySource`) is exhausted. ``config`` (from the CLI)
        replaces the app's settings, falling back to them.
        """
        config = config or Config.load(base=self.config)
        if config.find(keys.INSTANCE_NAME) is None:
            config = config.merged({keys.INSTANCE_NAME.name: self.name}, source="code")
        settings = RuntimeSettings.from_config(config, need_kafka=source is None)
        if source is None:
            source = KafkaSource(
                settings.bootstrap_servers,
                settings.topic,
                consumer_config=settings.consumer_config,
                dead_letter_topic=settings.dead_letter_topic,
                producer_config=settings.producer_config,
                instance_name=settings.instance_name,
                startup_timeout=settings.startup_timeout,
            )
        for path in settings.listener_list:
            if not any(listener.target is load_object(path) for listener in self._listeners):
                self.add_listener(path)
        if not self._listeners:
            raise ConfigError(
                "apiary.listener.list",
                f"app {self.name!r} has no listeners: register some with "
                "decorators or list them in apiary.listener.list",
            )
        _check_singletons(config, source, self._listeners)
        self.config = config
        self.metrics = metrics = Metrics()
        server: HealthServer | None = None
        restore: Callable[[], None] | None = None
        try:
            # Fresh class-listener instances for every run: the last run closed its own, and instances made
            # by dispatch() before the run were made with the app's settings, not the run's.
            for listener in self._listeners:
                listener.bind(config)

            runner = RunnerBuilder(self.name, config, settings, metrics).build(self._listeners, source)
            if settings.endpoint_port:
                server = _health_server(metrics, runner, settings.endpoint_port, settings.endpoint_address)
                log.info(
                    "metrics and health on http://%s:%d/metrics and /health", settings.endpoint_address, server.port
                )
            self._runner = runner
            self._failures = runner.failures
            restore = _install_signal_handlers(runner) if handle_signals else None
            log.info("app %s running %d listener(s) on %r", self.name, len(self._listeners), source)
            self.abandoned_by = None
            runner.run()
            if runner.abandoned:
                self.abandoned_by = runner.forced_by
        finally:
            if restore:
                restore()
            if server:
                server.stop()
            for listener in self._listeners:
                try:
                    listener.close()
                except Exception:
                    log.exception("listener %s failed to close", listener.name)
            self._runner = None

    def stop(self) -> None:
        """Stop a running :meth:`run` from another thread (as SIGTERM does)."""
        runner = self._runner
        if runner is not None:
            runner.stop()


def _run_coroutine(name: str, result: object) -> None:
    """Run an async listener's coroutine to completion for :meth:`App.dispatch`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_awaited(result))
        return
    if inspect.iscoroutine(result):
        result.close()
    raise ListenerError(
        {name: RuntimeError("app.dispatch() cannot run an async listener inside a running event loop; await it")}
    )


async def _awaited(result: object) -> None:
    await cast("Awaitable[object]", result)


def _tuple(value: str | Iterable[str] | None) -> str | tuple[str, ...] | None:
    return value if value is None or isinstance(value, str) else tuple(value)


def _singleton(target: object, option: bool | None) -> bool:
    """A listener's ``singleton`` option, else its class's ``singleton`` attribute."""
    if option is not None:
        return option
    cls = target if inspect.isclass(target) else type(target)
    return bool(issubclass(cls, MetaStoreEventListener) and cls.singleton)


def _check_singletons(config: Config, source: Source | KafkaSource, listeners: Sequence[Listener]) -> None:
    """Singleton listeners need coordination, and a source they can read every partition of."""
    names = [listener.name for listener in listeners if listener.singleton]
    if not names:
        return
    if not config.optional(keys.COORDINATION_ZOOKEEPER):
        raise ConfigError(
            keys.COORDINATION_ZOOKEEPER.name,
            f"listener(s) {', '.join(names)} are singletons (run on exactly one instance of the app), which needs "
            "coordination: set hivewire.coordination.zookeeper (--zookeeper zk1:2181), or drop singleton=True",
        )
    if not isinstance(source, SupportsTail):
        raise ConfigError(
            names[0], f"is a singleton listener, which {source!r} cannot serve (it has no tail()): use a KafkaSource"
        )


def _health_server(metrics: Metrics, runner: Runner, port: int, address: str) -> HealthServer:
    try:
        return HealthServer(metrics, runner.health, port, address).start()
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise ConfigError(
                "endpoint.port",
                f"port {port} is already in use (another hivewire app on this "
                "host?); set endpoint.port to a free port, or 0 to turn the "
                "/metrics and /health endpoint off",
            ) from e
        raise ConfigError(
            "endpoint.port",
            f"cannot serve /metrics and /health on {address}:{port}: {e}; set "
            "endpoint.port to another port (endpoint.address to an address of this host), or 0 to turn the "
            "endpoint off",
        ) from e


def _install_signal_handlers(runner: Runner) -> Callable[[], None] | None:
    if threading.current_thread() is not threading.main_thread():
        return None
    previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def handle(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if runner.forced.is_set():
            # Third signal: stop now, with the default behaviour.
            signal.signal(signum, previous[signum] if callable(previous[signum]) else signal.SIG_DFL)
            signal.raise_signal(signum)
            return
        if runner.stopping.is_set():
            # Second signal: no more waiting for listeners' calls; their events are not committed.
            log.warning("received %s again: stopping without waiting for the listeners' calls", name)
            runner.forced_by = signum
            runner.force()
            return
        log.info(
            "received %s: finishing current events and stopping (%s again stops at once; the events being "
            "handled are then delivered again on restart)",
            name,
            "Ctrl-C" if signum == signal.SIGINT else name,
        )
        runner.stop()

    for sig in previous:
        signal.signal(sig, handle)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
