"""The runtime's settings, read from a :class:`~hivewire.config.Config` through the declared keys."""

from __future__ import annotations

from dataclasses import dataclass

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._kafka import consumer_settings
from hivewire.runtime._options import RetryPolicy


@dataclass(frozen=True)
class RuntimeSettings:
    """What :meth:`hivewire.App.run` and ``hivewire run`` need (docs/configuration.md, "Listener runtime").
    Times are in seconds."""

    bootstrap_servers: str
    topic: str
    instance_name: str
    endpoint_port: int
    endpoint_address: str
    consumer_config: dict[str, str]
    dead_letter_topic: str
    retry_max_attempts: int
    retry_initial_delay: float
    retry_multiplier: float
    retry_max_delay: float
    listener_timeout: float
    listener_concurrency: int
    max_abandoned_threads: int
    queue_size: int
    queue_bytes: int
    reread: bool
    batch_size: int
    commit_interval: float
    shutdown_timeout: float
    tune_gc: bool
    listener_list: tuple[str, ...]
    producer_config: dict[str, str]
    startup_timeout: float

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of a listener that names none of its own."""
        return RetryPolicy(
            self.retry_max_attempts, self.retry_initial_delay, self.retry_multiplier, self.retry_max_delay
        )

    @classmethod
    def from_config(cls, config: Config, *, need_kafka: bool = True) -> RuntimeSettings:
        """Validate and read the runtime's keys; without ``need_kafka`` (a source given in code) the Kafka keys
        may be missing. Raises :class:`~hivewire.errors.ConfigError` naming the key."""
        config.check_keys()
        if need_kafka:
            bootstrap_servers, topic = config.read(keys.BOOTSTRAP_SERVERS), config.read(keys.TOPIC)
        else:
            bootstrap_servers = config.optional(keys.BOOTSTRAP_SERVERS) or ""
            topic = config.optional(keys.TOPIC) or ""
        raw_consumer = config.with_prefix(keys.CONSUMER_PREFIX.name)
        consumer = consumer_settings(raw_consumer)  # KafkaSource translates them; validated here, at start
        batch_size = config.read(keys.BATCH_SIZE)
        if consumer.max_poll_records is not None and config.find(keys.BATCH_SIZE) is None:
            batch_size = consumer.max_poll_records
        return cls(
            bootstrap_servers=bootstrap_servers,
            topic=topic,
            instance_name=config.read(keys.INSTANCE_NAME),
            endpoint_port=config.read(keys.ENDPOINT_PORT),
            endpoint_address=config.read(keys.ENDPOINT_ADDRESS),
            consumer_config=raw_consumer,
            dead_letter_topic=config.optional(keys.DEAD_LETTER_TOPIC) or f"{topic}.dlq",
            retry_max_attempts=config.read(keys.RETRY_MAX_ATTEMPTS),
            retry_initial_delay=config.read(keys.RETRY_INITIAL_DELAY),
            retry_multiplier=config.read(keys.RETRY_MULTIPLIER),
            retry_max_delay=config.read(keys.RETRY_MAX_DELAY),
            listener_timeout=config.read(keys.LISTENER_TIMEOUT),
            listener_concurrency=config.read(keys.LISTENER_CONCURRENCY),
            max_abandoned_threads=config.read(keys.MAX_ABANDONED_THREADS),
            queue_size=config.read(keys.QUEUE_SIZE),
            queue_bytes=config.read(keys.QUEUE_BYTES),
            reread=config.read(keys.OVERFLOW) == "reread",
            batch_size=batch_size,
            commit_interval=config.read(keys.COMMIT_INTERVAL),
            shutdown_timeout=config.read(keys.SHUTDOWN_TIMEOUT),
            tune_gc=config.read(keys.GC_TUNING),
            listener_list=config.optional(keys.LISTENER_LIST) or (),
            producer_config=config.with_prefix(keys.DEAD_LETTER_PRODUCER_PREFIX.name),
            startup_timeout=config.read(keys.STARTUP_TIMEOUT),
        )
