"""``App``'s per-type decorators (``@app.on_create_table``), usable bare or with options; typed per event class.

The decorators themselves, one per event type, are generated into :mod:`hivewire.runtime._handlers`. They
reach their app through :class:`Registers` (what they need of :class:`~hivewire.runtime.App`), so that this
module, below the app, does not import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from hivewire.events._event import ListenerEvent
from hivewire.events._event_type import EventType
from hivewire.runtime._options import ListenerOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

E = TypeVar("E", bound=ListenerEvent)
F = TypeVar("F", bound=Callable[..., object])


class Registers(Protocol):
    """What a decorator needs of its app: :meth:`hivewire.runtime.App.on`."""

    def on(self, *types: EventType | str, **options: Unpack[ListenerOptions]) -> Callable[[F], F]: ...


class On(Generic[E]):
    """A per-type decorator of :class:`~hivewire.runtime.App` (``app.on_create_table``)."""

    def __init__(self, event_type: EventType) -> None:
        self.event_type = event_type

    def __set_name__(self, owner: type, name: str) -> None:
        self.__doc__ = f"Register a function for {self.event_type.value} events (bare, or with filter options)."

    def __get__(self, app: Registers | None, owner: type) -> BoundOn[E]:
        if app is None:
            raise AttributeError("use the decorator on an App instance")
        return BoundOn(app, self.event_type)


class BoundOn(Generic[E]):
    """The decorator of one app: ``@app.on_create_table`` or ``@app.on_create_table(db="sales")``."""

    def __init__(self, app: Registers, event_type: EventType) -> None:
        self._app = app
        self._type = event_type

    @overload
    def __call__(self, fn: Callable[[E], object], /) -> Callable[[E], object]: ...

    @overload
    def __call__(
        self, /, **options: Unpack[ListenerOptions]
    ) -> Callable[[Callable[[E], object]], Callable[[E], object]]: ...

    def __call__(self, fn: Callable[[E], object] | None = None, /, **options: Any) -> Any:
        decorator = self._app.on(self._type, **options)
        return decorator(fn) if fn is not None else decorator
