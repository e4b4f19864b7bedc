"""The upstream's answer to one call, as the connection read it (or made it, when the upstream failed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hivewire_shim.wire import REPLY, Header

__all__ = ["Reply", "succeeded"]


@dataclass(frozen=True)
class Reply:
    """The upstream's answer to a call: its header, whether it succeeded, the decoded ``*_result`` (for
    modeled methods) and, on failure, a short description.

    ``from_upstream`` is False when the shim answered itself because the upstream failed; then
    ``maybe_applied`` says whether the call had been sent (so the metastore may have made the change).
    """

    header: Header | None
    ok: bool
    result: Any = None
    error: str | None = None
    from_upstream: bool = True
    maybe_applied: bool = False

    @classmethod
    def of(cls, header: Header, result: Any) -> Reply:
        """The reply that a decoded ``*_result`` is."""
        ok = succeeded(result)
        return cls(header, ok, result, None if ok else _error_of(result))

    @property
    def answered(self) -> bool:
        """The upstream replied as to a method it knows (an exception such as "Invalid method name" is no answer)."""
        return self.from_upstream and self.header is not None and self.header.type == REPLY


def succeeded(result: Any) -> bool:
    """True when a decoded ``*_result`` carries no declared exception (fields 1..n are the exceptions)."""
    return all(getattr(result, spec[2]) is None for spec in result.thrift_spec[1:] if spec is not None)


def _error_of(result: Any) -> str | None:
    for spec in result.thrift_spec[1:]:
        if spec is not None:
            exc = getattr(result, spec[2])
            if exc is not None:
                return f"{type(exc).__name__}: {getattr(exc, 'message', '')}"
    return None
