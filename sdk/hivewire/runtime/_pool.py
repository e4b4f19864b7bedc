"""The threads that run a scheduled lane's sync listener calls (:class:`Pool`), awaited from the event loop.

Invariant: a call that overruns its timeout fails with :class:`~hivewire.runtime._delivery.ListenerTimeout`
on the loop at once; its thread is abandoned (Python cannot kill it: it exits when its call returns, if ever)
and a fresh one takes its place, so the pool always has ``size`` threads taking calls.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading

from hivewire.events._model import ListenerEvent
from hivewire.runtime._delivery import ListenerTimeout
from hivewire.runtime._listener import Handler

log = logging.getLogger("hivewire.runtime.scheduler")


class _Job:
    """One call of a sync listener, handed to a pool thread."""

    __slots__ = ("arg", "cancelled", "fn", "future", "thread")

    def __init__(self, fn: Handler, arg: ListenerEvent, future: asyncio.Future[None]) -> None:
        self.fn, self.arg, self.future = fn, arg, future
        self.thread: threading.Thread | None = None
        self.cancelled = False


class Pool:
    """``size`` threads that run a sync listener's calls for the scheduler; a thread stuck past the timeout is
    abandoned (it exits when its call returns, if ever) and a fresh one takes its place."""

    def __init__(self, name: str, size: int, loop: asyncio.AbstractEventLoop) -> None:
        self.name = name
        self.size = size
        self._loop = loop
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._abandoned: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._spawned = 0

    def start(self) -> None:
        for _ in range(self.size):
            self._spawn()

    def _spawn(self) -> None:
        with self._lock:
            self._spawned += 1
            thread = threading.Thread(target=self._work, name=f"hivewire-{self.name}-{self._spawned}", daemon=True)
            self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.thread = me
            if job.cancelled:
                continue
            error: BaseException | None = None
            try:
                job.fn(job.arg)
            except BaseException as e:  # handed to the awaiting task, which decides what it means
                error = e
            try:
                self._loop.call_soon_threadsafe(_settle, job.future, error)
            except RuntimeError:
                return  # the loop is closed: the app has stopped
            with self._lock:
                if me in self._abandoned:
                    return  # given up after a timeout: a replacement took this thread's place

    async def call(self, fn: Handler, arg: ListenerEvent, timeout: float) -> None:
        """Run ``fn(arg)`` on a pool thread; raise what it raised, or :class:`ListenerTimeout` after ``timeout``."""
        future: asyncio.Future[None] = self._loop.create_future()
        job = _Job(fn, arg, future)
        self._jobs.put(job)
        timer = self._loop.call_later(timeout, _time_out, future, self.name, timeout)
        try:
            await future
        except ListenerTimeout:
            self._give_up(job)
            raise
        except asyncio.CancelledError:
            self._give_up(job)
            raise
        finally:
            timer.cancel()

    def _give_up(self, job: _Job) -> None:
        job.cancelled = True
        thread = job.thread
        if thread is None:
            return  # never started: skipped when taken
        with self._lock:
            self._abandoned.add(thread)
        log.error("listener %s: a call did not return in time; abandoning its thread and starting a new one", self.name)
        self._spawn()

    @property
    def abandoned(self) -> int:
        """Threads given up after a timeout whose call still has not returned."""
        with self._lock:
            self._abandoned = {thread for thread in self._abandoned if thread.is_alive()}
            return len(self._abandoned)

    def stop(self) -> None:
        with self._lock:
            live = len(self._threads)
            self._threads = []
        for _ in range(live):
            self._jobs.put(None)


def _time_out(future: asyncio.Future[None], name: str, timeout: float) -> None:
    _settle(future, ListenerTimeout(f"{name} did not return within {timeout:g} s"))


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
