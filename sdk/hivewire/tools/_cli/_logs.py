"""The command line's log output: text for people, or one JSON object per line for log collectors.

``--log-format json`` writes ``{"time", "level", "logger", "message", ...}`` per record, with the traceback
as ``exc_info`` and any ``extra=`` fields of the call. At INFO and above the ZooKeeper client's connection
chatter is held back (its warnings still show), so ``hivewire discover`` prints only what it found.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
FORMATS = ("text", "json")

_TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# What every LogRecord has; anything else on a record came from ``extra=`` and is a structured field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
# Libraries whose INFO lines are about their own connection handling, not about what the command does.
_CHATTY = ("kazoo", "kazoo.client", "kazoo.protocol.connection")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, extra fields, exc_info."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and not name.startswith("_"):
                out[name] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
        if record.exc_info:
            out["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack_info"] = record.stack_info
        return json.dumps(out, ensure_ascii=False)


class _Stderr(logging.Handler):
    """The command's own handler, writing to ``sys.stderr`` as it is at each record (click's test runner swaps
    it); found and replaced on reconfiguration, other handlers left alone."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def configure(level: str = "INFO", fmt: str = "text") -> None:
    """Send log records at ``level`` and above to stderr, as text or JSON (replacing this module's earlier
    handler, leaving others, such as pytest's, in place)."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Stderr)]:
        root.removeHandler(old)
    handler = _Stderr()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_TEXT))
    root.addHandler(handler)
    root.setLevel(level.upper())
    quiet = logging.WARNING if logging.getLevelName(level.upper()) > logging.DEBUG else logging.NOTSET
    for name in _CHATTY:
        logging.getLogger(name).setLevel(quiet)
