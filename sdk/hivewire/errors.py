"""hivewire's exception hierarchy.

Every error hivewire raises on purpose derives from :class:`HivewireError`, and its message says what
went wrong and, where there is one, what to do about it. Thrift, socket and Kafka exceptions are
wrapped, with the original kept as ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "CoordinationError",
    "DecodeError",
    "DiscoveryError",
    "HivewireError",
    "InvalidObjectError",
    "InvalidOperationError",
    "ListenerError",
    "MetastoreAuthError",
    "MetastoreConnectionError",
    "MetastoreError",
    "MetastoreServerError",
    "NoSuchObjectError",
    "PrerequisiteError",
    "RecordsGoneError",
    "SourceError",
    "UnsupportedMethodError",
    "VersionConflictError",
]


class HivewireError(Exception):
    """Base class of every error hivewire raises on purpose."""


class ConfigError(HivewireError, ValueError):
    """Invalid configuration. The message names the offending key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


class PrerequisiteError(HivewireError):
    """Something hivewire needs on this machine is missing (Java, pyspark, a compiler)."""


class DecodeError(HivewireError, ValueError):
    """A wire message could not be decoded. ``reason`` says why, in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DiscoveryError(HivewireError):
    """No metastore could be found through ZooKeeper."""


class MetastoreError(HivewireError):
    """A metastore call failed. ``uri`` is the metastore, ``method`` the Thrift method."""

    def __init__(self, message: str, *, uri: str | None = None, method: str | None = None) -> None:
        super().__init__(message)
        self.uri = uri
        self.method = method


class MetastoreServerError(MetastoreError):
    """The metastore answered with an exception its interface declares (``MetaException``,
    ``ConfigValSecurityException``, ...). The call failed but the connection is fine and stays open.

    The subclasses below name the common cases; the Thrift exception is ``__cause__``.
    """


class NoSuchObjectError(MetastoreServerError):
    """The database, table, partition or function does not exist."""


class AlreadyExistsError(MetastoreServerError):
    """The object being created already exists."""


class InvalidObjectError(MetastoreServerError):
    """The metastore rejected the object (or the input) as invalid."""


class InvalidOperationError(MetastoreServerError):
    """The metastore refused the operation (for example dropping a non-empty database)."""


class UnsupportedMethodError(MetastoreError):
    """The metastore does not know the Thrift method (older or newer Hive version)."""


class MetastoreConnectionError(MetastoreError):
    """No metastore could be reached, or the connection broke during a call.

    ``tried`` lists ``(uri, reason)`` for every URI attempted.
    """

    def __init__(
        self,
        message: str,
        *,
        tried: Sequence[tuple[str, str]] = (),
        uri: str | None = None,
        method: str | None = None,
    ) -> None:
        super().__init__(message, uri=uri, method=method)
        self.tried = list(tried)


class MetastoreAuthError(MetastoreConnectionError):
    """SASL authentication to the metastore failed: refused (wrong credentials, a mechanism it does not offer),
    or not answered (a metastore without SASL). The message says what to check."""


class ListenerError(HivewireError):
    """One or more listeners raised while :meth:`hivewire.App.dispatch` ran them.

    Every matching listener was called; ``errors`` maps each failing listener's name to its exception.
    """

    def __init__(self, errors: dict[str, BaseException]) -> None:
        detail = "; ".join(f"{name}: {type(e).__name__}: {e}" for name, e in errors.items())
        super().__init__(f"{len(errors)} listener(s) failed: {detail}")
        self.errors = errors


class SourceError(HivewireError):
    """The source could not read records a listener fell behind on (the runtime tries again)."""


class RecordsGoneError(SourceError):
    """Records a listener fell behind on are no longer in the topic (retention deleted them): nobody can read them."""


class CoordinationError(HivewireError):
    """The coordination backend (ZooKeeper) could not be reached, or refused an operation."""


class VersionConflictError(CoordinationError):
    """A compare-and-set lost: the key changed (or appeared, or went away) since it was read. Read it again and
    retry the change on what is there now."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
