"""What :class:`~hivewire.metastore.MetastoreClient` knows of the metastore's methods beyond the generated
client: which ones change something (and so are never sent twice), the exceptions they declare mapped to
:mod:`hivewire.errors`, a hint where Hive's message says too little, and each method's argument class.

Invariants: a method not known to change anything is a read (retried once after reconnecting); every
exception the IDL declares maps to a :class:`~hivewire.errors.MetastoreServerError` (the base class
when no more specific one fits); a call with a wrong name or argument count fails before anything is
written to the connection.
"""

from __future__ import annotations

from typing import Any

from thrift.Thrift import TException

from hivewire.errors import (
    AlreadyExistsError,
    InvalidObjectError,
    InvalidOperationError,
    MetastoreServerError,
    NoSuchObjectError,
)
from hivewire_thrift.fb303 import FacebookService
from hivewire_thrift.hive_metastore import ThriftHiveMetastore
from hivewire_thrift.hive_metastore import ttypes as hms

# Methods (by name prefix) that change the metastore or a session's state (locks, transactions, privileges,
# notifications): a call to one of these that failed in transit may have been carried out already, so
# call() does not send it again after reconnecting. Every other method is a read, retried once.
_NO_RETRY_PREFIXES = (
    "create_",
    "drop_",
    "alter_",
    "add_",
    "append_",
    "rename_",
    "exchange_",
    "truncate_",
    "fire_",
    "set",
    "lock",
    "unlock",
    "grant_",
    "revoke_",
    "update_",
    "delete_",
    "cm_",
    "commit_",
    "abort_",
    "open_",
    "allocate_",
    "compact",
    "heartbeat",
    "partition_name_has",
)


def _declared_exceptions() -> dict[type, type[MetastoreServerError]]:
    """Every exception the IDL declares, each mapped to one of ours.

    The generated client raises these only after reading the whole reply, so the connection is in step
    and stays open. Anything else a call raises (a transport or protocol failure, a reply or request that
    cannot be (de)coded) leaves it out of step and closes it.
    """
    specific: dict[str, type[MetastoreServerError]] = {
        "NoSuchObjectException": NoSuchObjectError,
        "UnknownDBException": NoSuchObjectError,
        "UnknownTableException": NoSuchObjectError,
        "UnknownPartitionException": NoSuchObjectError,
        "NoSuchTxnException": NoSuchObjectError,
        "NoSuchLockException": NoSuchObjectError,
        "NoSuchCompactionException": NoSuchObjectError,
        "AlreadyExistsException": AlreadyExistsError,
        "InvalidObjectException": InvalidObjectError,
        "InvalidPartitionException": InvalidObjectError,
        "InvalidInputException": InvalidObjectError,
        "InvalidOperationException": InvalidOperationError,
        "TxnAbortedException": InvalidOperationError,
        "TxnOpenException": InvalidOperationError,
        "CompactionAbortedException": InvalidOperationError,
        # MetaException, ConfigValSecurityException and any exception a newer IDL adds: the base class.
    }
    return {
        cls: specific.get(name, MetastoreServerError)
        for name, cls in vars(hms).items()
        if isinstance(cls, type) and issubclass(cls, TException) and cls.__module__ == hms.__name__
    }


_ERROR_TYPES: dict[type, type[MetastoreServerError]] = _declared_exceptions()


def _hint(cls: type[MetastoreServerError], method: str, args: tuple[Any, ...], message: str) -> str:
    """What to do, where Hive's message alone does not say: creating a table in a database that does not exist
    gets an InvalidObjectException whose message is only the database's name (Hive 2.3, 3.1)."""
    db = getattr(args[0], "dbName", None) if args else None
    if cls is InvalidObjectError and method.startswith("create_table") and db and message.strip() == db:
        return (
            f": the database {db} does not exist; create it first (client.create_database(Database(name={db!r}, ...)))"
        )
    return ""


_ARGUMENTS: dict[str, tuple[type, tuple[str, ...]]] = {}


def _arguments(method: str, args: tuple[object, ...]) -> type:
    """The generated ``<method>_args`` class, after checking that ``args`` fit it: a wrong method name or
    argument count fails here, before anything is written to the connection."""
    known = _ARGUMENTS.get(method)
    if known is None:
        cls = (
            None
            if method.startswith("_")
            else (
                getattr(ThriftHiveMetastore, f"{method}_args", None) or getattr(FacebookService, f"{method}_args", None)
            )
        )
        if cls is None:
            raise AttributeError(f"the Hive Metastore interface has no method {method!r}")
        known = _ARGUMENTS[method] = (cls, tuple(spec[2] for spec in cls.thrift_spec if spec is not None))
    cls, names = known
    if len(args) != len(names):
        raise TypeError(f"{method}() takes {len(names)} argument(s) ({', '.join(names)}), {len(args)} given")
    return cls
