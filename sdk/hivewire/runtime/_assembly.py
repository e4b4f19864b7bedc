"""How one run of an app is put together: :class:`RunnerBuilder` assembles the source's runner (its lanes,
tracker and metrics are the runner's own), the app's membership of its coordination group, and the singleton
listeners, each with a runner of its own over a tail of the source.

Order, and why: the membership first (without coordination there is none, and nothing of it is imported),
then the runner that follows it, then the singletons, whose fatal errors stop that runner, and last the
membership is told to stand for them. Every piece is made before any thread starts: ``Runner.run`` starts
them all. One builder per run: it holds the run's settings and the factory of metastore clients.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.metastore import MetastoreClient
from hivewire.runtime._listener import Listener
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._runner import Runner
from hivewire.runtime._settings import RuntimeSettings
from hivewire.runtime._source import Source

if TYPE_CHECKING:  # imported only when coordination is configured
    from hivewire.runtime._membership import Membership
    from hivewire.runtime._singleton import Singleton


class RunnerBuilder:
    """Builds the runners of one run of app ``app_name``, with ``settings`` (read from ``config``)."""

    def __init__(self, app_name: str, config: Config, settings: RuntimeSettings, metrics: Metrics) -> None:
        self.app_name = app_name
        self.config = config
        self.settings = settings
        self.metrics = metrics
        self.metastore = metastore_factory(config)

    def build(self, listeners: Sequence[Listener], source: Source) -> Runner:
        """The run's runner over ``source``, for the listeners that are not singletons; with coordination, its
        membership, standing for a :class:`~hivewire.runtime._singleton.Singleton` per singleton listener."""
        membership = self.membership(listeners)
        plain = [listener for listener in listeners if not listener.singleton]
        runner = Runner(self.app_name, plain, source, self.settings, self.metrics, self.metastore, membership)
        singletons = self.singletons(listeners, source, runner.fatal)
        if membership is not None:
            membership.stand_for(singletons)
        return runner

    def singleton_runner(self, listener: Listener, tail: Source) -> Runner:
        """The runner of singleton ``listener`` over ``tail`` while this instance leads (metrics of its own for
        what it reads and commits, see :meth:`~hivewire.runtime._metrics.Metrics.for_singleton`); the
        collector is the main runner's to tune."""
        settings = dataclasses.replace(self.settings, tune_gc=False)
        return Runner(self.app_name, [listener], tail, settings, self.metrics.for_singleton(), self.metastore)

    def membership(self, listeners: Sequence[Listener]) -> Membership | None:
        """This instance's membership of the app (named as its consumer group is), when coordination is
        configured; without ``hivewire.coordination.zookeeper`` nothing of coordination (or kazoo) is imported."""
        config = self.config
        if not config.optional(keys.COORDINATION_ZOOKEEPER):
            return None
        from hivewire.coordination._settings import CoordinationSettings
        from hivewire.runtime._membership import Membership

        coordination = CoordinationSettings.from_config(config)
        where = coordination.zookeeper.quorum if coordination.zookeeper else "ZooKeeper"
        return Membership(
            coordination.connect,
            self.settings.instance_name,
            [listener.name for listener in listeners],
            where=where,
            metrics=self.metrics,
        )

    def singletons(
        self, listeners: Sequence[Listener], source: Source, fatal: Callable[[BaseException], None]
    ) -> list[Singleton]:
        """One :class:`~hivewire.runtime._singleton.Singleton` per singleton listener, each running it with a
        runner of its own; ``fatal`` is told the error that ends one."""
        singles = [listener for listener in listeners if listener.singleton]
        if not singles:
            return []
        from hivewire.runtime._singleton import Singleton

        return [
            Singleton(listener, source, functools.partial(self.singleton_runner, listener), self.metrics, fatal)
            for listener in singles
        ]


def metastore_factory(config: Config) -> Callable[[], MetastoreClient | None]:
    """The virtual metastore context: a client per listener thread, on the configured (or discovered) URIs."""
    if config.find(keys.METASTORE_URIS) is None and config.find(keys.DISCOVERY_MODE) is None:
        return _no_metastore
    from hivewire.metastore import _discovery as discovery
    from hivewire.metastore._client_options import ClientOptions

    uris = discovery.metastore_uris_from_conf(config, shared=True)
    return functools.partial(MetastoreClient, uris, **ClientOptions.from_config(config).keywords())


def _no_metastore() -> MetastoreClient | None:
    """No metastore configured: listeners' events have no metastore client."""
    return None
