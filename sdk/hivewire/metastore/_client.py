"""``MetastoreClient``: the generated Hive Metastore Thrift client with failover, timeouts and portable calls.

The generated ``ThriftHiveMetastore.Client`` knows every method of our IDL but nothing about failover,
timeouts, which Hive version it talks to, or useful errors. :class:`MetastoreClient` adds those:

* it takes several URIs (or a resolver such as ZooKeeper discovery) and connects to the first that
  answers; a dead host costs one connect timeout (a deadline per URI, however many addresses its name
  resolves to); when all fail the error names every URI and reason;
* the portable methods (:meth:`~MetastoreClient.get_table`, ...) use the request-object call that new
  servers prefer and fall back to the legacy call once a server answers "Invalid method name" (learnt
  once per connection, since failover may land on another Hive version);
* every other generated method is available under its Thrift name, with Thrift exceptions turned into
  :mod:`hivewire.errors` exceptions that name the metastore and the object; an exception the server
  declares leaves the connection (and what it learnt) in place, while a broken transport, a reply that
  cannot be read or a request that cannot be encoded closes it;
* reads are retried once on a broken connection (after reconnecting, possibly to another URI); writes are
  not, because the first attempt may have been applied.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TSocket, TTransport

from hivewire.errors import (
    ConfigError,
    MetastoreAuthError,
    MetastoreConnectionError,
    MetastoreError,
    MetastoreServerError,
    NoSuchObjectError,
    UnsupportedMethodError,
)
from hivewire.metastore._addresses import parse_uri, parse_uris
from hivewire.metastore._client_options import (
    ClientKeywords,
    ConfSource,
    ProtocolName,
    Selection,
    Transport,
    hive_client_options,
    in_catalog,
    load_conf,
    max_parts_arg,
    parse_ugi,
)
from hivewire.metastore._describe import _describe, _reason, _unencodable_message
from hivewire.metastore._methods import _ERROR_TYPES, _NO_RETRY_PREFIXES, _arguments, _hint
from hivewire.metastore._resolver import FixedUris, UriResolver
from hivewire.metastore._sasl import SaslAuth
from hivewire.metastore._transport import open_connection
from hivewire_thrift.hive_metastore import ThriftHiveMetastore
from hivewire_thrift.hive_metastore import ttypes as hms

if TYPE_CHECKING:  # for annotations only: typing_extensions is not a dependency, _discovery a higher module
    from typing_extensions import Unpack

    from hivewire.metastore._zookeeper import DiscoveryConfig

_T = TypeVar("_T")

log = logging.getLogger("hivewire.metastore")

try:
    from thrift.protocol import fastbinary  # noqa: F401

    ACCELERATED = True
    """True when thrift's C extension is importable, so (de)serialisation runs in C."""
except ImportError:  # pragma: no cover - depends on how thrift was installed
    ACCELERATED = False


class MetastoreClient:
    """A connection to a Hive Metastore, with failover across URIs.

    ``uris`` is ``"thrift://h1:9083,thrift://h2:9083"``, a list of such URIs, or a :class:`UriResolver`.
    ``timeout`` bounds each call (seconds), ``connect_timeout`` each connection attempt. ``transport`` and
    ``protocol`` must match the server's ``metastore.thrift.framed.transport.enabled`` and
    ``...compact.protocol.enabled`` (the defaults match Hive's defaults). ``ugi`` (``"user:group1,group2"``
    or ``(user, [groups])``) is sent with ``set_ugi`` after every connect, as Hive's Java client does.
    ``selection="random"`` shuffles the URIs like Hive's default ``metastore.thrift.uri.selection``.
    ``sasl`` authenticates with SASL (PLAIN, DIGEST-MD5 or Kerberos, see :class:`SaslAuth`), as Hive's
    ``hive.metastore.sasl.enabled`` asks; ``transport`` is then unused (SASL frames every message).

    The connection opens lazily on the first call, or explicitly with :meth:`open` / ``with``.

    Thread safety: an instance holds one connection and must be used by one thread at a time. Share a
    :class:`MetastoreClientPool` between threads instead.
    """

    #: Connect with TLS through this context (set on an instance before it connects; the shim does so).
    ssl_context: ssl.SSLContext | None = None

    def __init__(
        self,
        uris: str | Sequence[str] | UriResolver,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        transport: Transport = "buffered",
        protocol: ProtocolName = "binary",
        ugi: str | tuple[str, Sequence[str]] | None = None,
        selection: Selection = "sequential",
        sasl: SaslAuth | None = None,
    ) -> None:
        self._resolver: UriResolver = (
            uris if isinstance(uris, UriResolver) else FixedUris(parse_uris(uris), shuffle=selection == "random")
        )
        if transport not in ("buffered", "framed"):
            raise ConfigError("transport", f"{transport!r} is not 'buffered' or 'framed'")
        if protocol not in ("binary", "compact"):
            raise ConfigError("protocol", f"{protocol!r} is not 'binary' or 'compact'")
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.transport = transport
        self.protocol = protocol
        self.ugi = parse_ugi(ugi)
        self.sasl = sasl
        self._trans: TTransport.TTransportBase | None = None
        self._client: ThriftHiveMetastore.Client | None = None
        self._uri: str | None = None
        self._unsupported: set[str] = set()
        self._answered = False  # the current connection has answered a call

    @classmethod
    def from_zookeeper(
        cls, quorum: str | DiscoveryConfig, namespace: str | None = None, **client_kwargs: Unpack[ClientKeywords]
    ) -> MetastoreClient:
        """A client on the metastores registered in ZooKeeper under ``/<namespace>`` (HIVE-20794).

        ``quorum`` is ``"zk1:2181,zk2:2181"`` or a :class:`~hivewire.metastore.DiscoveryConfig` (which carries
        digest auth, TLS and timeouts); ``namespace`` defaults to the config's, else ``hive_metastore``.
        ``client_kwargs`` go to the constructor. The URIs come from a watching
        :class:`~hivewire.metastore.ZooKeeperResolver` shared by every client of that ZooKeeper configuration:
        each connection picks a live metastore at random, and ZooKeeper is re-read when every known metastore
        fails. Raises :class:`~hivewire.errors.DiscoveryError` when none is registered.
        """
        # Discovery (kazoo) is a higher layer, imported only when asked for: an allowed exception listed in
        # docs/architecture.md and tests/unit/test_layering.py.
        from hivewire.metastore import _discovery as discovery
        from hivewire.metastore import _zookeeper as zookeeper

        resolver = discovery.shared_resolver(zookeeper.discovery_config(quorum, namespace))
        resolver.require()
        return cls(resolver, **client_kwargs)

    @classmethod
    def from_hive_conf(
        cls, conf_or_hive_site_path: ConfSource, **client_kwargs: Unpack[ClientKeywords]
    ) -> MetastoreClient:
        """A client configured the way Hive's is, from a mapping of Hive keys or a ``hive-site.xml`` path.

        Reads ``metastore.thrift.uris`` / ``hive.metastore.uris``, ``metastore.service.discovery.mode``
        (``zookeeper``: the URIs hold the ZooKeeper quorum, see :mod:`hivewire.metastore._discovery`), the
        ``metastore.zookeeper.*`` keys with their aliases, and the transport, protocol, URI selection and
        socket timeout keys. ``client_kwargs`` override what the configuration implies.
        """
        from hivewire.metastore import _discovery as discovery  # see from_zookeeper

        conf = load_conf(conf_or_hive_site_path)
        uris = discovery.metastore_uris_from_conf(conf, shared=True)
        if isinstance(uris, discovery.ZooKeeperResolver):
            uris.require()
        options = hive_client_options(conf)
        options.update(client_kwargs)
        return cls(uris, **options)

    # -- connection -----------------------------------------------------------------------------------
    @property
    def uri(self) -> str | None:
        """The URI of the metastore this client is connected to, or None."""
        return self._uri

    @property
    def is_open(self) -> bool:
        return self._client is not None

    @property
    def unsupported_methods(self) -> frozenset[str]:
        """Request-object methods the connected server lacks (learnt from "Invalid method name")."""
        return frozenset(self._unsupported)

    @property
    def raw(self) -> ThriftHiveMetastore.Client:
        """The generated ``ThriftHiveMetastore.Client`` (opens the connection); no error translation."""
        return self._ensure_open()

    def open(self) -> MetastoreClient:
        """Connect to the first URI that answers. Raises :class:`MetastoreConnectionError` naming each URI."""
        if self._client is not None:
            return self
        tried: list[tuple[str, str]] = []
        refused: list[MetastoreAuthError] = []
        candidates = self._resolver.uris()
        for attempt in range(2):
            for uri in candidates:
                try:
                    self._connect(uri)
                    return self
                except MetastoreAuthError as e:
                    refused.append(e)
                    tried.append((uri, str(e)))
                    log.debug("metastore %s: SASL failed: %s", uri, e)
                except (TException, OSError) as e:
                    tried.append((uri, _reason(e)))
                    log.debug("metastore %s: connect failed: %s", uri, e)
            if attempt == 0:
                # Every known URI failed: let the resolver look again (ZooKeeper may know new ones).
                candidates = self._resolver.refresh()
                if not candidates:
                    break
        if refused and len(refused) == len(tried):
            # Every metastore that answered refused us: say what to check, not "could not connect".
            raise MetastoreAuthError("; ".join(dict.fromkeys(str(e) for e in refused)), tried=tried, uri=refused[0].uri)
        detail = "; ".join(f"{u}: {r}" for u, r in tried) or "no URI to try"
        raise MetastoreConnectionError(
            f"could not connect to any metastore ({detail}); check that the metastore runs and that host and port "
            f"are right, or raise connect_timeout (now {self.connect_timeout:g} s) for a slow network",
            tried=tried,
        )

    def _connect(self, uri: str) -> None:
        handle, authenticated = open_connection(
            uri, connect_timeout=self.connect_timeout, ssl_context=self.ssl_context, sasl=self.sasl
        )
        trans: TTransport.TTransportBase
        if authenticated is not None:
            # SASL frames every message itself (Hive's client ignores the framed setting with SASL too).
            authenticated.transport.setTimeout(int(self.timeout * 1000))
            trans = authenticated
        else:
            host, port = parse_uri(uri)
            sock = TSocket.TSocket(host, port)
            sock.setHandle(handle)
            sock.setTimeout(int(self.timeout * 1000))
            trans = (
                TTransport.TFramedTransport(sock) if self.transport == "framed" else TTransport.TBufferedTransport(sock)
            )
        proto = (
            TCompactProtocol.TCompactProtocolAccelerated(trans)
            if self.protocol == "compact"
            else TBinaryProtocol.TBinaryProtocolAccelerated(trans)
        )
        client = ThriftHiveMetastore.Client(proto)
        if self.ugi is not None:
            try:
                client.set_ugi(self.ugi[0], list(self.ugi[1]))
            except TApplicationException as e:
                # Hive's Java client tolerates this too ("new client talking to old server").
                log.warning("metastore %s: set_ugi failed (%s); continuing without it", uri, e)
            except BaseException:
                with contextlib.suppress(Exception):
                    trans.close()
                raise
        self._trans, self._client, self._uri = trans, client, uri
        self._unsupported = set()
        self._answered = False

    def close(self) -> None:
        """Close the connection. The client can be opened again."""
        trans, self._trans, self._client, self._uri = self._trans, None, None, None
        if trans is not None:
            with contextlib.suppress(Exception):
                trans.close()

    def __enter__(self) -> MetastoreClient:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_open(self) -> ThriftHiveMetastore.Client:
        if self._client is None:
            self.open()
        assert self._client is not None  # open() connected or raised
        return self._client

    # -- calls ------------------------------------------------------------------------------------------
    def call(self, method: str, *args: object) -> object:
        """Call a Thrift method by name, translating errors; reads are retried once after reconnecting.

        An exception the server declares (``MetaException``, ``NoSuchObjectException``, ...) becomes a
        :class:`~hivewire.errors.MetastoreServerError` subclass and leaves the connection as it is. A broken
        transport, a reply that cannot be read and a request that cannot be encoded close it, since what is
        left in its buffers would be out of step; the next call reconnects.

        The result is what the generated client returns (see the stubs of
        ``hivewire_thrift.hive_metastore.ThriftHiveMetastore``); :attr:`raw` is the typed generated client.
        """
        return self._call(method, *args)

    def _call(self, method: str, *args: object) -> Any:
        """:meth:`call`; the result is Any: the method is chosen by name."""
        arguments = _arguments(method, args)  # a wrong name or argument count fails here, before sending
        retries = 0 if method.startswith(_NO_RETRY_PREFIXES) else 1
        while True:
            client = self._ensure_open()
            uri = self._uri
            try:
                try:
                    getattr(client, f"send_{method}")(*args)
                except (TTransport.TTransportException, OSError, EOFError):
                    raise
                except BaseException as e:
                    # Encoding failed part way: the message header (and perhaps more) is in the write buffer,
                    # and anything sent after it would be garbage to the server.
                    self.close()
                    if not isinstance(e, Exception):
                        raise
                    raise MetastoreError(
                        _unencodable_message(uri, method, args, arguments, e), uri=uri, method=method
                    ) from e
                recv = getattr(client, f"recv_{method}", None)
                result = None if recv is None else recv()  # oneway methods (fb303 shutdown) have no reply
                self._answered = True
                return result
            except MetastoreError:
                raise
            except TApplicationException as e:
                # The server answered with an error message, read whole: the connection is in step.
                self._answered = True
                if e.type == TApplicationException.PROTOCOL_ERROR:
                    # The server could not read the request (Hive 2.3 and the 3.x InsertEventRequestData layout):
                    # it stopped part way, read the rest as a new message and closed the connection.
                    self.close()
                if e.type == TApplicationException.UNKNOWN_METHOD:
                    raise UnsupportedMethodError(
                        f"{uri}: the metastore does not know {method}() ({e.message})", uri=uri, method=method
                    ) from e
                raise MetastoreError(
                    f"{uri} {method}({_describe(args)}): {e.message or e}", uri=uri, method=method
                ) from e
            except (TTransport.TTransportException, OSError, EOFError) as e:
                fresh = not self._answered
                self.close()
                if retries > 0:
                    retries -= 1
                    log.info("metastore %s: %s failed (%s); reconnecting", uri, method, _reason(e))
                    continue
                hint = (
                    "; if the metastore uses SASL (hive.metastore.sasl.enabled=true), give the client sasl= "
                    "(hivewire.metastore.sasl.mechanism)"
                    if fresh and self.sasl is None
                    else ""
                )
                raise MetastoreConnectionError(
                    f"{uri} {method}({_describe(args)}): connection failed: {_reason(e)}{hint}",
                    tried=[(uri or "?", _reason(e))],
                    uri=uri,
                    method=method,
                ) from e
            except TException as e:
                cls = _ERROR_TYPES.get(type(e))
                if cls is None:
                    # Not an exception the server declared (those arrive whole): a TProtocolException while
                    # reading, which leaves the connection out of step.
                    self.close()
                    raise MetastoreError(
                        f"{uri} {method}({_describe(args)}): the reply could not be read ({type(e).__name__}: "
                        f"{_reason(e)}); the connection was closed and the next call reconnects; check that "
                        f"transport={self.transport!r} and protocol={self.protocol!r} match the metastore",
                        uri=uri,
                        method=method,
                    ) from e
                self._answered = True
                message = getattr(e, "message", None) or type(e).__name__
                if cls is MetastoreServerError:
                    message = f"{type(e).__name__}: {message}"
                message += _hint(cls, method, args, message)
                raise cls(f"{uri} {method}({_describe(args)}): {message}", uri=uri, method=method) from e
            except Exception as e:
                # The reply did not decode (a string that is not UTF-8, a bad SkewedInfo map): out of step too.
                self.close()
                raise MetastoreError(
                    f"{uri} {method}({_describe(args)}): the reply could not be decoded ({type(e).__name__}: "
                    f"{_reason(e)}); the connection was closed and the next call reconnects",
                    uri=uri,
                    method=method,
                ) from e
            except BaseException:
                # Interrupted (KeyboardInterrupt) part way through a request or a reply.
                self.close()
                raise

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or not hasattr(ThriftHiveMetastore.Iface, name):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return lambda *args: self._call(name, *args)

    def _portable(self, preferred: str, call_new: Callable[[], _T], legacy: str, call_old: Callable[[], _T]) -> _T:
        """Try ``preferred``; on "Invalid method name", remember that and use ``legacy`` on this connection."""
        self._ensure_open()
        if preferred not in self._unsupported:
            try:
                return call_new()
            except UnsupportedMethodError:
                log.info("metastore %s has no %s(); using %s() on this connection", self._uri, preferred, legacy)
                self._unsupported.add(preferred)
        return call_old()

    # -- portable methods -----------------------------------------------------------------------------
    def get_table(self, db_name: str, table_name: str, *, catalog: str | None = None) -> hms.Table:
        """The table ``db_name.table_name`` (``get_table_req``, or ``get_table`` on servers without it)."""
        request = hms.GetTableRequest(dbName=db_name, tblName=table_name, catName=catalog)
        table: hms.Table | None = self._portable(
            "get_table_req",
            lambda: self._call("get_table_req", request).table,
            "get_table",
            lambda: self._call("get_table", in_catalog(db_name, catalog), table_name),
        )
        if table is None:  # Hive 4 answers a catalog that does not exist with an empty result, not an error
            where = f"{catalog}.{db_name}.{table_name}" if catalog else f"{db_name}.{table_name}"
            raise NoSuchObjectError(
                f"{self._uri} get_table_req({where}): the metastore returned no table",
                uri=self._uri,
                method="get_table_req",
            )
        return table

    def get_tables(self, db_name: str, pattern: str, *, catalog: str | None = None) -> list[str]:
        """The names of the tables of ``db_name`` matching ``pattern``, as Hive's ``get_tables`` does.

        ``pattern`` is Hive's: ``*`` matches anything and ``|`` separates alternatives (``"orders_*|items"``).
        For the table objects themselves use :meth:`get_table_objects`.
        """
        if not isinstance(pattern, str):
            raise TypeError(
                f"get_tables(db_name, pattern) takes a pattern such as '*', not {type(pattern).__name__}; "
                "to fetch tables by name use get_table_objects(db_name, names)"
            )
        return list(self._call("get_tables", in_catalog(db_name, catalog), pattern))

    def get_table_objects(
        self, db_name: str, table_names: Sequence[str], *, catalog: str | None = None
    ) -> list[hms.Table]:
        """Several tables of one database in one call (Hive's ``get_table_objects_by_name``, or its ``_req``
        form); names that do not exist are left out. ``table_names`` is a list of names, not a pattern."""
        if isinstance(table_names, (str, bytes)):
            raise TypeError(
                f"get_table_objects() takes a list of table names, not the string {table_names!r}; "
                f"write [{table_names!r}], or use get_tables(db_name, pattern) for names matching a "
                "pattern"
            )
        names = list(table_names)
        tables: list[hms.Table] = self._portable(
            "get_table_objects_by_name_req",
            lambda: list(
                self._call(
                    "get_table_objects_by_name_req",
                    hms.GetTablesRequest(dbName=db_name, tblNames=names, catName=catalog),
                ).tables
            ),
            "get_table_objects_by_name",
            lambda: list(self._call("get_table_objects_by_name", in_catalog(db_name, catalog), names)),
        )
        return tables

    def get_partitions_by_names(
        self, db_name: str, table_name: str, names: Sequence[str], *, catalog: str | None = None
    ) -> list[hms.Partition]:
        """Partitions by name (``"dt=2024-01-01/hr=00"``); missing names are left out."""
        wanted = list(names)
        db_name = in_catalog(db_name, catalog)  # the request has no catalog field: Hive's client does this too
        partitions: list[hms.Partition] = self._portable(
            "get_partitions_by_names_req",
            lambda: list(
                self._call(
                    "get_partitions_by_names_req",
                    hms.GetPartitionsByNamesRequest(db_name=db_name, tbl_name=table_name, names=wanted),
                ).partitions
            ),
            "get_partitions_by_names",
            lambda: list(self._call("get_partitions_by_names", db_name, table_name, wanted)),
        )
        return partitions

    def alter_table(
        self,
        db_name: str,
        table_name: str,
        new_table: hms.Table,
        environment_context: hms.EnvironmentContext | None = None,
        *,
        catalog: str | None = None,
    ) -> None:
        """Alter (or rename) a table (``alter_table_req`` on 3.x+, ``alter_table_with_environment_context`` before)."""
        self._portable(
            "alter_table_req",
            lambda: self._call(
                "alter_table_req",
                hms.AlterTableRequest(
                    catName=catalog,
                    dbName=db_name,
                    tableName=table_name,
                    table=new_table,
                    environmentContext=environment_context,
                ),
            ),
            "alter_table_with_environment_context",
            lambda: self._call(
                "alter_table_with_environment_context",
                in_catalog(db_name, catalog),
                table_name,
                new_table,
                environment_context,
            ),
        )

    def get_partitions(
        self, db_name: str, table_name: str, max_parts: int = -1, *, catalog: str | None = None
    ) -> list[hms.Partition]:
        """All partitions (or the first ``max_parts``, at most 32767: the IDL's i16; -1 means all)."""
        return list(self._call("get_partitions", in_catalog(db_name, catalog), table_name, max_parts_arg(max_parts)))

    def get_partition_names(
        self, db_name: str, table_name: str, max_parts: int = -1, *, catalog: str | None = None
    ) -> list[str]:
        """Partition names such as ``dt=2024-01-01/hr=00`` (``max_parts`` as in :meth:`get_partitions`)."""
        db = in_catalog(db_name, catalog)
        return list(self._call("get_partition_names", db, table_name, max_parts_arg(max_parts)))

    def get_partitions_by_filter(
        self, db_name: str, table_name: str, filter: str, max_parts: int = -1, *, catalog: str | None = None
    ) -> list[hms.Partition]:
        """Partitions matching a Hive filter expression such as ``dt > "2024-01-01"``."""
        db = in_catalog(db_name, catalog)
        return list(self._call("get_partitions_by_filter", db, table_name, filter, max_parts_arg(max_parts)))
