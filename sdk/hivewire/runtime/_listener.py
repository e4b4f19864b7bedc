"""Listeners: the class-style base, event filters, and the registration record the runtime runs (their options
and retry policy are declared in :mod:`hivewire.runtime._options`).

A listener is a function, a :class:`MetaStoreEventListener` subclass (constructed with the configuration,
like Hive's ``MetaStoreEventListener(Configuration)``) or an instance of one. However it was registered,
the runtime sees a :class:`Listener`: a name, a handler per event type, a filter and how to run it.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError
from hivewire.events._apiary import Decoded
from hivewire.events._model import EventType, ListenerEvent
from hivewire.runtime._derived import routed, with_derived
from hivewire.runtime._frames import user_place, user_traceback
from hivewire.runtime._handlers import ListenerMethods
from hivewire.runtime._options import ListenerOptions as ListenerOptions  # re-exported: declared there
from hivewire.runtime._options import RetryPolicy as RetryPolicy

Handler = Callable[[Any], object]

#: The method a class-style listener overrides for each event type.
HANDLER_NAMES: Mapping[EventType, str] = {t: f"on_{t.value.lower()}" for t in EventType}


class MetaStoreEventListener(ListenerMethods):
    """Base class for class-style listeners, the Python counterpart of Hive's Java ``MetaStoreEventListener``.

    Override the ``on_*`` methods you need (one per event type, each typed with its event class); only those
    event types are delivered to the listener. hivewire constructs the class with the app's
    :class:`~hivewire.config.Config` (as Hive passes its ``Configuration``) and calls :meth:`close` when the
    app stops. Set ``singleton = True`` on the class to run it on exactly one live instance of the app (as
    ``singleton=True`` does for a function; see :class:`ListenerOptions`).
    """

    #: Run on exactly one live instance of the app (needs ``hivewire.coordination.zookeeper``).
    singleton: ClassVar[bool] = False

    def __init__(self, config: Config) -> None:
        self.config = config

    def close(self) -> None:
        """Called once when the app stops."""


#: What :meth:`hivewire.App.add_listener` registers: a function (or any callable) of one event, a
#: :class:`MetaStoreEventListener` class (constructed with the configuration) or instance, or the import path
#: of one of those (``"pkg.module:Name"``).
ListenerTarget = Callable[..., object] | type[MetaStoreEventListener] | MetaStoreEventListener | str


def _glob(patterns: str | Iterable[str] | None) -> re.Pattern[str] | None:
    if patterns is None:
        return None
    items = [patterns] if isinstance(patterns, str) else list(patterns)
    if not items:
        return None
    # Hive lower-cases database and table names, so matching ignores case.
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in items), re.IGNORECASE)


@dataclass(frozen=True)
class EventFilter:
    """Which events a listener receives: event types, database and table glob patterns, and status.

    ``status=True`` (the default) delivers only changes that succeeded, ``False`` only failed ones, ``None``
    both. A ``table`` pattern never matches database events, which have no table.
    """

    types: frozenset[EventType] | None = None
    db: str | tuple[str, ...] | None = None
    table: str | tuple[str, ...] | None = None
    status: bool | None = True
    _db_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _table_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_db_re", _glob(self.db))
        object.__setattr__(self, "_table_re", _glob(self.table))

    @property
    def accepts_everything(self) -> bool:
        return self.types is None and self._db_re is None and self._table_re is None and self.status is None

    def matches(self, event: ListenerEvent | Decoded) -> bool:
        if self.types is not None and event.event_type not in self.types:
            return False
        if self.status is not None and event.status is not self.status:
            return False
        if self._db_re is not None and not self._db_re.match(event.db_name or ""):
            return False
        if self._table_re is not None:
            name = event.table_name
            if name is None or not self._table_re.match(name):
                return False
        return True


@dataclass
class Listener:
    """A registered listener as the runtime sees it.

    ``target`` is what was registered (function, class, or instance); classes are constructed with the
    configuration by :meth:`bind`, afresh for every run of the app (a run ends with :meth:`close`).
    ``retry``/``timeout``/``concurrency`` of None mean the app's defaults. ``concurrency`` is how many of its
    events may be in flight at once, never two of one table, so order is kept per table. A ``singleton`` runs
    on one live instance of the app only (:mod:`hivewire.runtime._singleton`).
    """

    name: str
    target: ListenerTarget
    types: frozenset[EventType]
    filter: EventFilter
    retry: RetryPolicy | None = None
    timeout: float | None = None
    concurrency: int | None = None
    singleton: bool = False
    operations: frozenset[str] | None = None  # an ICEBERG_COMMIT listener's operation filter (None: all)
    handlers: dict[EventType, Handler] = field(default_factory=dict, repr=False)
    instance: Any = field(default=None, repr=False)
    async_types: frozenset[EventType] = field(default=frozenset(), init=False, repr=False, compare=False)
    _bound_to: Config | None = field(default=None, init=False, repr=False, compare=False)
    routes: frozenset[EventType] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.routes = routed(self.types)  # its types and, for a derived type (ICEBERG_COMMIT), its carriers'
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"{self.name}: concurrency", "must be at least 1")
        if not self.types:
            raise ConfigError(self.name, "listens to no event type: override an on_* method or name a type")

    @property
    def bound(self) -> bool:
        return bool(self.handlers)

    def bind(self, config: Config) -> None:
        """Create the handlers (constructing a listener class with ``config``).

        Nothing to do when already bound to an equal configuration; bound to another one, the old instance is
        closed and a new one constructed, so a listener never runs with settings other than the run's.
        """
        if self.handlers and (self._bound_to is config or self._bound_to == config):  # `is`: dispatch's fast path
            return
        if self.handlers:
            self.close()
        target: Any = self.target
        if inspect.isclass(target):
            factory: Any = target
            try:
                target = factory(config)
            except Exception as e:
                raise ConfigError(self.name, f"could not construct the listener with the configuration: {e}") from e
        self.instance = target
        self._bound_to = config
        if isinstance(target, MetaStoreEventListener) or not callable(target):
            self.handlers = {t: getattr(target, HANDLER_NAMES[t]) for t in self.types}
        else:
            self.handlers = dict.fromkeys(self.types, target)
        # Derived types (ICEBERG_COMMIT): each carrier's handler also makes and handles the derived event.
        self.async_types = frozenset(t for t, handler in self.handlers.items() if is_coroutine_function(handler))
        iceberg_io = config.with_prefix(keys.ICEBERG_IO_PREFIX.name)
        self.handlers = with_derived(self.handlers, self.async_types, iceberg_io, self.operations, self.name)
        self.async_types = frozenset(t for t, handler in self.handlers.items() if is_coroutine_function(handler))

    def close(self) -> None:
        """Close the instance (class-style listeners) and unbind, so the next :meth:`bind` starts afresh."""
        instance = self.instance
        self.handlers, self.instance, self._bound_to = {}, None, None
        self.async_types = frozenset()
        close = getattr(instance, "close", None)
        if isinstance(instance, MetaStoreEventListener) and callable(close):
            close()

    def accepts(self, event: ListenerEvent | Decoded) -> bool:
        """Whether this listener wants ``event`` (or the decoded message the runtime routes before making one)."""
        return event.event_type in self.routes and self.filter.matches(event)


def is_coroutine_function(handler: Handler) -> bool:
    """Whether calling ``handler`` gives a coroutine: an ``async def`` function or method, or an object whose
    ``__call__`` is one."""
    call = type(handler).__call__ if not inspect.isroutine(handler) else None
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


def overridden_types(cls: type) -> frozenset[EventType]:
    """The event types a listener class (or instance's class) handles: its ``on_*`` methods not inherited
    from :class:`MetaStoreEventListener`."""
    found = set()
    for event_type, method in HANDLER_NAMES.items():
        impl = getattr(cls, method, None)
        if impl is not None and impl is not getattr(MetaStoreEventListener, method, None):
            found.add(event_type)
    return frozenset(found)


def load_object(path: str) -> Any:
    """Import ``pkg.module:Name`` (or ``pkg.module.Name``, Java-list style) and return the object."""
    text = path.strip()
    module_name, sep, attr = text.partition(":")
    if not sep:
        module_name, _, attr = text.rpartition(".")
    if not module_name or not attr:
        raise ConfigError("apiary.listener.list", f"{path!r} is not 'package.module:Name'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name and not module_name.startswith(f"{e.name}."):
            raise ConfigError(
                "apiary.listener.list",
                f"cannot import {module_name!r} for {path!r}:\n{user_traceback(e, header=False)}",
            ) from e
        raise ConfigError("apiary.listener.list", f"cannot import {module_name!r} for {path!r}: {e}") from e
    except Exception as e:  # an error in the user's module: its own lines, not importlib's
        raise ConfigError(
            "apiary.listener.list",
            f"cannot import {module_name!r} for {path!r}: {type(e).__name__} at {user_place(e)}\n"
            f"{user_traceback(e, header=False)}",
        ) from e
    obj: Any = module
    done: list[str] = []
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            names = [n for n in dir(obj) if not n.startswith("_") and not inspect.ismodule(getattr(obj, n, None))]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {module_name}{sep or '.'}{'.'.join([*done, close[0]])}?" if close else ""
            raise ConfigError("apiary.listener.list", f"{module_name!r} has no {attr!r}{hint} (from {path!r})") from e
        done.append(part)
    return obj


# -- issue 33: a listener's signature is checked at registration ------------------------------------------
def check_signature(target: object, types: Iterable[EventType]) -> None:
    """Refuse a listener that cannot be called with one event: a function (or callable object) must take
    ``(event)``, a class's or instance's ``on_*`` methods ``(self, event)``. The message names the function
    and its ``file:line``; signatures Python cannot read (builtins) are let through."""
    if inspect.isclass(target) or isinstance(target, MetaStoreEventListener):
        cls = target if inspect.isclass(target) else type(target)
        for t in types:
            method = getattr(cls, HANDLER_NAMES[t], None)
            if method is not None and inspect.isfunction(method):
                _check_call(method, (None, None), "(self, event)")
        return
    if not inspect.isfunction(target) and not inspect.ismethod(target) and callable(target):
        call = type(target).__call__
        if inspect.isfunction(call):  # an instance of a class of the user's: its __call__(self, event)
            _check_call(call, (None, None), "(self, event)")
            return
    if callable(target):
        _check_call(target, (None,), "(event)")


def _check_call(function: Callable[..., object], args: tuple[None, ...], expected: str) -> None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*args)
    except TypeError as e:
        code = getattr(inspect.unwrap(function), "__code__", None)
        place = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "?"
        name = getattr(function, "__qualname__", repr(function)).replace("<locals>.", "")
        signature = signature.replace(
            parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
            return_annotation=signature.empty,
        )
        raise TypeError(
            f"listener {name}{signature} at {place} cannot be called with one event ({e}): a listener takes {expected}"
        ) from None
