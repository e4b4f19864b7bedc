"""Key-ordered scheduling: up to N events of one listener in flight at once, never two of one table.

A listener with ``concurrency`` above 1, or an ``async def`` one, has a :class:`Scheduler` as its lane's
executor instead of a :class:`~hivewire.runtime._worker.Worker`. It takes from the lane's
:class:`~hivewire.runtime._intake.Intake` (the same queue, bounds, spills and re-reads); its intake thread moves
events into a per-table scheduler on the runtime's event loop
(:class:`~hivewire.runtime._event_loop.EventLoop`), at most ``window`` of them at a time, so spilled events
are read again only when the scheduler gets near them. ``concurrency`` worker tasks take the next table that
has an event and no event in flight, handle that one event, and put the table back at the end of the line if
it has more: events of one table queue behind each other (their order holds), events of different tables
overlap. This is the model of Confluent's parallel consumer (ordering by key, not by partition).

A coroutine listener is awaited on the loop; a plain function runs on the lane's
:class:`~hivewire.runtime._pool.Pool` of threads, awaited from the loop. Retries
(:meth:`~hivewire.runtime._delivery.Delivery.retry_async`), timeouts, dead letters and metrics are the same
for both: a coroutine that overruns the timeout is cancelled, a thread that does is abandoned (Python cannot
kill it) and replaced, and either way the call is a failed attempt.

A share of a batch is done (:meth:`~hivewire.runtime._share.Share.done`) when its last event is handled or
dead-lettered, whichever order they finish in, so the commit guarantee is the lane's: an offset is committed
only when every earlier event is done with by every listener. One stuck table holds back the commits of its
own partition only; the other tables (and partitions) keep flowing and committing until the stuck table's
queued events fill the window.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import cast

from hivewire.events._model import ListenerEvent
from hivewire.metastore import MetastoreClient
from hivewire.runtime._delivery import Delivery, ListenerTimeout, _Revoked, _Stopping
from hivewire.runtime._event_loop import EventLoop
from hivewire.runtime._intake import Intake, Spill
from hivewire.runtime._item import Item
from hivewire.runtime._listener import Handler, Listener
from hivewire.runtime._metrics import ListenerMetrics
from hivewire.runtime._pool import Pool
from hivewire.runtime._services import LaneServices
from hivewire.runtime._share import Share
from hivewire.runtime._tracker import Batch

log = logging.getLogger("hivewire.runtime.scheduler")


def _expire(task: asyncio.Task[None], expired: list[bool]) -> None:
    expired.append(True)
    task.cancel()


_Call = Callable[[Handler, ListenerEvent], Awaitable[None]]


def _always() -> bool:
    return True


class Scheduler:
    """A lane's executor with ``concurrency`` events in flight (tasks on the loop; threads for sync calls)."""

    def __init__(
        self,
        listener: Listener,
        services: LaneServices,
        intake: Intake,
        delivery: Delivery,
        metrics: ListenerMetrics,
        timeout: float,
        loop: EventLoop,
        concurrency: int,
    ) -> None:
        self.listener = listener
        self.name = listener.name
        self.services = services
        self.delivery = delivery
        self.metrics = metrics
        self.timeout = timeout
        self.timeouts = 0
        self._intake = intake
        self._intake_thread: threading.Thread | None = None
        self.concurrency = concurrency
        self._loop = loop
        # Events moved from the intake into the scheduler and not yet done: bounds what spills are loaded for.
        # At most half the lane's bounds in the scheduler (the rest waits in the intake, or spills).
        self.window = max(concurrency, min(services.queue_events // 2, max(1000, 16 * concurrency)))
        self.window_bytes = max(1, services.queue_bytes // 2)
        self._scheduled = 0  # events in the scheduler (queued per table or in flight) and their bytes
        self._scheduled_bytes = 0
        self._space = threading.Condition(threading.Lock())
        self._tables: dict[str, deque[tuple[Share, Item]]] = {}  # loop thread only
        self._ready: asyncio.Queue[str | None] | None = None
        self._stop: asyncio.Event | None = None
        self._running: asyncio.Event | None = None  # cleared while paused: workers start no new event
        self._workers: list[asyncio.Task[None]] = []
        self._done = threading.Event()
        self._inflight: dict[int, float] = {}  # id of the task -> when its call started
        self._done_early = 0  # events done in shares not yet finished (for `outstanding`)
        self._pool: Pool | None = None
        # A metastore client per slot (one connection is for one call at a time; each opens on first use).
        self._clients: list[MetastoreClient | None] = []
        self._async_types = listener.async_types

    # -- threads and tasks ----------------------------------------------------------------------------
    def start(self) -> None:
        self._clients = [self.services.metastore() for _ in range(self.concurrency)]
        if len(self._async_types) < len(self.listener.handlers):
            self._pool = Pool(self.name, self.concurrency, self._loop.loop)
            self._pool.start()
        self._loop.call(self._start_workers)
        thread = threading.Thread(target=self._run, daemon=True, name=f"hivewire-{self.name}-1")
        self._intake_thread = thread
        thread.start()  # the intake thread

    def _start_workers(self) -> None:
        self._ready = asyncio.Queue()
        self._stop = asyncio.Event()
        self._running = asyncio.Event()
        if not self._intake.paused:
            self._running.set()
        self._workers = [asyncio.ensure_future(self._work(slot)) for slot in range(self.concurrency)]
        if self.services.stopping.is_set():
            self._stop_workers()

    def wake(self) -> None:
        self._intake.wake()
        if self.services.stopping.is_set():
            try:
                self._loop.call(self._stop_workers)
            except RuntimeError:
                pass  # the loop is already closed

    def _stop_workers(self) -> None:
        if self._stop is None or self._ready is None:
            return
        self._stop.set()
        if self._running is not None:
            self._running.set()
        for _ in self._workers:
            self._ready.put_nowait(None)

    def follow_pause(self) -> None:
        """The intake was paused or resumed: the workers start no new event while it is paused."""
        self._loop.call(self._set_running)

    def _set_running(self) -> None:
        """Follow the intake's ``paused`` (loop thread)."""
        running = self._running
        if running is not None:
            if self._intake.paused:
                running.clear()
            else:
                running.set()

    def join(self, timeout: float) -> bool:
        """Wait for the intake thread and for the calls in flight to finish."""
        deadline = time.monotonic() + timeout
        thread = self._intake_thread
        if thread is not None:
            thread.join(timeout)
        intake = thread is None or not thread.is_alive()
        done = self._done.wait(max(0.0, deadline - time.monotonic()))
        if self._pool is not None:
            self._pool.stop()
        if done:
            for client in self._clients:
                if client is not None:
                    client.close()
        return intake and done

    # -- intake: the lane's queue into the scheduler, within the window -------------------------------
    def _run(self) -> None:
        intake = self._intake
        try:
            while True:
                work = intake.next(_always)
                if work is None:
                    return
                if isinstance(work, Spill):
                    # Read it again only when the scheduler is down to what is in flight: what it reads is
                    # then handled soon, instead of sitting in memory beside what was kept there.
                    if not self._wait_for_space(self.concurrency, self.window_bytes):
                        return
                    intake.load(work)
                    continue
                share, items = work, work.items
                start = 0
                while start < len(items):
                    taken = self._take_room(items, start)
                    if not taken:
                        return  # stopping: the share stays unfinished and is not committed
                    self._loop.call(self._enqueue, share, items[start : start + taken])
                    start += taken
        except BaseException as e:
            log.critical("listener %s's intake stopped by %r; stopping the app", self.name, e, exc_info=True)
            self.services.fatal(e)

    def _wait_for_space(self, events: int, size: int) -> bool:
        """Wait until the scheduler holds fewer than ``events`` events and ``size`` bytes; False if stopping."""
        stopping = self.services.stopping
        with self._space:
            while self._scheduled >= events or self._scheduled_bytes >= size:
                if stopping.is_set():
                    return False
                self._space.wait(0.5)
        return not stopping.is_set()

    def _take_room(self, items: list[Item], start: int) -> int:
        """Room in the scheduler for ``items[start:]``: waits for some, takes what fits (at least one); 0 if
        stopping."""
        if not self._wait_for_space(self.window, self.window_bytes):
            return 0
        with self._space:
            end = start
            while end < len(items) and self._scheduled < self.window and self._scheduled_bytes < self.window_bytes:
                self._scheduled += 1
                self._scheduled_bytes += len(items[end].value() or b"")
                end += 1
        return end - start

    def _done_with(self, item: Item) -> None:
        """An event left the scheduler (loop thread)."""
        with self._space:
            self._scheduled -= 1
            self._scheduled_bytes -= len(item.value() or b"")
            self._space.notify()

    # -- the scheduler (loop thread) ------------------------------------------------------------------
    def _enqueue(self, share: Share, items: list[Item]) -> None:
        tables, ready = self._tables, self._ready
        assert ready is not None
        for item in items:
            key = item.decoded.qualified_name
            waiting = tables.get(key)
            if waiting is None:
                tables[key] = deque([(share, item)])
                ready.put_nowait(key)
            else:
                waiting.append((share, item))  # behind the table's event in flight or queued

    async def _work(self, slot: int) -> None:
        ready, stop, tables, running = self._ready, self._stop, self._tables, self._running
        assert ready is not None and stop is not None and running is not None
        try:
            while not stop.is_set():
                key = await ready.get()
                if key is not None and not running.is_set():
                    await running.wait()  # paused: the table waits its turn (stopping sets it too)
                if key is None or stop.is_set():
                    break
                waiting = tables[key]
                share, item = waiting.popleft()
                try:
                    await self._handle(share.batch, item, slot)
                except _Stopping:
                    break
                if waiting:
                    ready.put_nowait(key)  # the table's next event, after those of the tables waiting now
                else:
                    del tables[key]
                self._done_with(item)
                share.remaining -= 1
                if share.remaining == 0:
                    self._done_early -= len(share.items) - 1
                    self._finish(share)
                else:
                    self._done_early += 1
        except asyncio.CancelledError:
            pass
        except BaseException as e:
            log.critical("listener %s stopped by %r; stopping the app", self.name, e, exc_info=True)
            self.services.fatal(e)
        finally:
            self._workers_left()

    def _workers_left(self) -> None:
        if all(task.done() or task is asyncio.current_task() for task in self._workers):
            self._done.set()

    def _finish(self, share: Share) -> None:
        backlog = self._intake.backlog
        backlog.add(-len(share.items), -share.size)
        share.done()
        room = self.services.room
        if not room.is_set() and backlog.depth < self.services.pace_bound:
            room.set()

    # -- one event ------------------------------------------------------------------------------------
    async def _handle(self, batch: Batch, item: Item, slot: int) -> None:
        """Handle one event in worker ``slot``: call, retry, dead-letter; return when it is done (or revoked)."""
        if not self.services.tracker.is_current(batch):
            return  # revoked: its new owner reads it again
        view = item.event(self._clients[slot])
        event_type = item.decoded.event_type
        handler = self.listener.handlers[event_type]
        call = self._call_async if event_type in self._async_types else self._call_sync
        try:
            await self._call_once(call, handler, view)  # the common case: one call, no retry machinery
        except _Stopping:
            raise
        except Exception as error:
            if not await self._retry_event(batch, item, slot, call, handler, view, error):
                return
        self._intake.failing = False
        self.metrics.handled.inc()
        self.metrics.latency.observe(time.monotonic() - batch.started)

    @property
    def done_in_hand(self) -> int:
        """Events of shares in the scheduler already handled (their shares not finished yet)."""
        return self._done_early

    async def _call_once(self, call: _Call, handler: Handler, view: ListenerEvent) -> None:
        task_id = id(asyncio.current_task())
        self._inflight[task_id] = time.monotonic()
        try:
            await call(handler, view)
        except ListenerTimeout:
            self.timeouts += 1
            self.metrics.timeouts.inc()
            self.metrics.failed.inc()
            raise
        except Exception:
            self.metrics.failed.inc()
            raise
        finally:
            del self._inflight[task_id]

    async def _retry_event(
        self,
        batch: Batch,
        item: Item,
        slot: int,
        call: _Call,
        handler: Handler,
        view: ListenerEvent,
        error: Exception,
    ) -> bool:
        """Retry after a failed first call (on the listener's policy); False if given up or revoked."""
        tracker, delivery = self.services.tracker, self.delivery
        self._intake.failing = True
        last = error

        async def attempt() -> None:
            nonlocal view, last
            if isinstance(last, ListenerTimeout) and call == self._call_sync:
                # The abandoned thread may still be using the slot's client: the slot gets a new one.
                self._clients[slot] = self.services.metastore()
                view = item.event(self._clients[slot])
            if not tracker.is_current(batch):
                raise _Revoked
            try:
                await self._call_once(call, handler, view)
            except Exception as e:
                last = e
                raise

        try:
            attempts, failure = await delivery.retry_async(attempt, 1, error, self._backoff, item)
        except _Revoked:
            delivery.revoked(item)
            return False
        if failure is not None:
            delivery.give_up(batch, item, failure, attempts, handler)
            return False
        return True

    async def _call_async(self, handler: Handler, view: ListenerEvent) -> None:
        # The coroutine runs in the worker's own task (no task per event); a timer cancels it when it overruns.
        task = asyncio.current_task()
        assert task is not None
        expired: list[bool] = []
        timer = self._loop.loop.call_later(self.timeout, _expire, task, expired)
        try:
            await cast("Awaitable[object]", handler(view))
        except asyncio.CancelledError:
            if not expired:
                raise  # the app is stopping
            uncancel = getattr(task, "uncancel", None)  # Python 3.11+: the cancellation was ours, not the loop's
            if uncancel is not None:
                uncancel()
            raise ListenerTimeout(f"{self.name} did not return within {self.timeout:g} s") from None
        finally:
            timer.cancel()

    async def _call_sync(self, handler: Handler, view: ListenerEvent) -> None:
        assert self._pool is not None
        await self._pool.call(handler, view, self.timeout)

    async def _backoff(self, seconds: float) -> None:
        stop = self._stop
        assert stop is not None
        try:
            await asyncio.wait_for(stop.wait(), seconds)
        except asyncio.TimeoutError:
            return
        raise _Stopping

    # -- what the runner and watchdog read ------------------------------------------------------------
    @property
    def busy_since(self) -> float | None:
        starts = list(self._inflight.values())
        return min(starts) if starts else None

    @property
    def abandoned_threads(self) -> int:
        return self._pool.abandoned if self._pool is not None else 0

    @property
    def current(self) -> str | None:
        """Not said: several events are in flight at once."""
        return None

    def prune_abandoned(self) -> int:
        return self.abandoned_threads
