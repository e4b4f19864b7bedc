"""What a registration znode advertises: HIVE-20794's form, and the forms found in the wild.

Hive 4 writes ``/<namespace>/<host:port><10-digit sequence>`` with data ``host:port``; HiveServer2-style
names (``serverUri=h:p;version=...;sequence=...``), ``k=v;...`` data and empty data (the address is then
taken from the name) are read too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping

from hivewire.metastore._addresses import host_port

log = logging.getLogger("hivewire.discovery")


_SEQUENCE = re.compile(r"(\d{10})$")


_NAME_WITH_PORT = re.compile(r"(?P<host>.+):(?P<digits>\d+)")


# Keys under which a HiveServer2-style (k=v;...) registration carries the server's address.
_ADDRESS_KEYS = ("hive.metastore.uri", "hive.server2.instance.uri", "serverUri", "instance.uri")


def _pairs(text: str) -> dict[str, str]:
    out = {}
    for item in text.split(";"):
        key, sep, value = item.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _from_pairs(pairs: Mapping[str, str]) -> str | None:
    for key in _ADDRESS_KEYS:
        if pairs.get(key):
            return host_port(pairs[key])
    host, port = pairs.get("hive.server2.thrift.bind.host"), pairs.get("hive.server2.thrift.port")
    return host_port(f"{host}:{port}") if host and port else None


def _from_name(name: str) -> str | None:
    if "=" in name:  # HiveServer2 style: serverUri=host:port;version=...;sequence=0000000012
        return _from_pairs(_pairs(name))
    match = _NAME_WITH_PORT.fullmatch(name)
    if not match:
        return None
    digits = match["digits"]
    # Hive 4 glues the 10-digit sequence to the port ("h:90830000000007"); a node created without
    # the sequence flag has just the port.
    if len(digits) > 10:
        digits = digits[:-10]
    elif len(digits) > 5:
        return None
    return host_port(f"{match['host']}:{digits}")


def parse_registration(name: str, data: bytes | str | None) -> str | None:
    """The ``host:port`` a registration znode advertises, or None when it names no address.

    ``data`` is read first, as Hive 4's client does (``host:port``, or ``k=v;...`` with
    ``hive.server2.instance.uri``/``serverUri``); when it is empty or unreadable the child ``name`` is used
    (``host:port`` plus Hive's 10-digit sequence, or HiveServer2's ``serverUri=host:port;...;sequence=N``).
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")
    text = text.strip()
    if text:
        found = _from_pairs(_pairs(text)) if "=" in text else host_port(text)
        if found:
            return found
    return _from_name(name)


def _sort_key(child: str) -> tuple[int, str]:
    # Registration order (the ZooKeeper sequence), so output is stable; get_children's order is not.
    match = _SEQUENCE.search(child)
    return (int(match.group(1)) if match else 10**10, child)


def _to_uris(entries: Iterable[tuple[str, bytes | None]], where: str) -> list[str]:
    uris: list[str] = []
    for name, data in sorted(entries, key=lambda e: _sort_key(e[0])):
        address = parse_registration(name, data)
        if address is None:
            log.warning("ZooKeeper %s/%s advertises no host:port (data %r); ignored", where, name, data)
            continue
        uri = f"thrift://{address}"
        if uri not in uris:  # a restarted sidecar or a retried create can leave two nodes for one server
            uris.append(uri)
    return uris
