"""What kazoo logs, made fit for an operator: no secret at any level, one line per ZooKeeper outage.

kazoo logs every request it sends at DEBUG, the digest credentials of its ``Auth`` packets included, and a
WARNING for every failed reconnection attempt. :class:`KazooLog` is the ``logger`` given to each
``KazooClient``: it removes the configured secrets from every line, and turns kazoo's connection lines into
one :class:`~hivewire._reachability.Reachability` line when ZooKeeper stops answering and one when it is back
(kazoo's own lines then go to DEBUG).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from hivewire._reachability import Reachability

__all__ = ["KazooLog", "redact"]

MASK = "***"

# The starts of kazoo's lines about losing and regaining its connection.
_DOWN = ("Connection dropped", "Connection time-out", "Cannot resolve", "Transition to CONNECTING", "AUTH_FAILED")
_UP = "Zookeeper connection established"
# Routine lines of every connection (and every reconnection attempt): DEBUG; the outage has its own line.
_ROUTINE = ("Connecting to ", "Closing connection to ", "Zookeeper session closed")


def secrets_of(auth_data: Iterable[tuple[str, str]], *others: str | None) -> tuple[str, ...]:
    """The strings never to show: each credential whole, and a digest credential's password on its own."""
    out: list[str] = []
    for _scheme, credential in auth_data:
        out.append(credential)
        _user, sep, password = credential.partition(":")
        if sep and password:
            out.append(password)
    out.extend(o for o in others if o)
    # Longest first, so a credential is masked whole before its password is looked for.
    return tuple(sorted(set(out), key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` replaced by ``***``."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return text


class KazooLog:
    """kazoo's logger: lines under ``logger`` with ``secrets`` masked; connection changes through
    ``reachability`` (kazoo's own lines about them at DEBUG). It has the methods of a
    :class:`logging.Logger` that kazoo calls."""

    def __init__(self, logger: logging.Logger, secrets: Iterable[str], reachability: Reachability) -> None:
        self.logger = logger
        self.secrets = tuple(secrets)
        self.reachability = reachability

    def isEnabledFor(self, level: int) -> bool:
        return self.logger.isEnabledFor(level)

    def debug(self, msg: object, *args: object, **kwargs: object) -> None:
        self.log(logging.DEBUG, msg, *args, **kwargs)

    def info(self, msg: object, *args: object, **kwargs: object) -> None:
        self.log(logging.INFO, msg, *args, **kwargs)

    def warning(self, msg: object, *args: object, **kwargs: object) -> None:
        self.log(logging.WARNING, msg, *args, **kwargs)

    warn = warning

    def error(self, msg: object, *args: object, **kwargs: object) -> None:
        self.log(logging.ERROR, msg, *args, **kwargs)

    def exception(self, msg: object, *args: object, **kwargs: object) -> None:
        self.log(logging.ERROR, msg, *args, exc_info=True, **kwargs)

    def critical(self, msg: object, *args: object, **kwargs: object) -> None:
        self.log(logging.CRITICAL, msg, *args, **kwargs)

    def log(self, level: int, msg: object, *args: object, exc_info: object = None, **_kwargs: object) -> None:
        text = str(msg)
        if args:
            try:
                text = text % args
            except (TypeError, ValueError):
                text = " ".join([text, *map(str, args)])
        text = redact(text, self.secrets)
        if text.startswith(_DOWN):
            self.reachability.down(text)
            level = logging.DEBUG
        elif text.startswith(_UP):
            self.reachability.up()
            level = logging.DEBUG
        elif text.startswith(_ROUTINE):
            level = logging.DEBUG
        if not self.logger.isEnabledFor(level):
            return
        if exc_info and level >= logging.ERROR:
            # kazoo's unexpected failures: the traceback, with the secrets masked in it too.
            import traceback

            text += "\n" + redact(traceback.format_exc().rstrip(), self.secrets)
        self.logger.log(level, "%s", text)
