"""Keys, group names and election names: slash-separated paths, checked once here for both backends."""

from __future__ import annotations

from hivewire.errors import CoordinationError


def normalize(path: str, what: str = "key") -> str:
    """``path`` without leading or trailing slashes, refused when a part is empty, ``.`` or ``..``."""
    text = path.strip("/")
    parts = text.split("/")
    if not text or any(part in ("", ".", "..") or part != part.strip() for part in parts):
        raise CoordinationError(
            f"{what} {path!r} is not a path of names such as 'apps/orders/listeners/audit': no empty parts, "
            "no '.' or '..', no spaces around a part"
        )
    return text


def parent(path: str) -> str:
    """The path one level up ('' at the top)."""
    return path.rpartition("/")[0]
