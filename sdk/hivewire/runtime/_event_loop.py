"""The runtime's event loop (:class:`EventLoop`), in a thread of its own: async listeners and the schedulers
of the lanes that run several events at once (:mod:`hivewire.runtime._scheduler`) run on it.

Invariant: one per runner, made for the first lane that needs it; when it stops, the tasks still on it are
cancelled and awaited before the loop is closed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable


class EventLoop:
    """The runtime's event loop, in a thread of its own: async listeners run here, and the schedulers."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="hivewire-loop", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            tasks = asyncio.all_tasks(self.loop)
            for task in tasks:
                task.cancel()
            if tasks:
                self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self.loop.close()

    def call(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the loop (from any thread)."""
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self, timeout: float) -> None:
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
