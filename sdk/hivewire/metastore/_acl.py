"""ZooKeeper ACLs as the ``register`` sidecar takes them (``scheme:id:perms``, ``digest:user:password:cdrwa``)
and the digest credentials they imply.

Invariants: a bad entry is a :class:`~hivewire.errors.ConfigError` naming the key and showing the entry
with any password masked; ACLs that would lock the sidecar out of its own nodes are refused before any
node is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kazoo.security import ACL, OPEN_ACL_UNSAFE, Id, Permissions, make_digest_acl_credential

from hivewire.errors import ConfigError

__all__ = ["parse_acl"]

_PERMS = {
    "r": Permissions.READ,
    "w": Permissions.WRITE,
    "c": Permissions.CREATE,
    "d": Permissions.DELETE,
    "a": Permissions.ADMIN,
}


def parse_acl(entries: str | Sequence[str] | None, key: str = "acl") -> tuple[list[Any], list[tuple[str, str]]]:
    """``scheme:id:perms`` entries -> (kazoo ACLs, credentials the sidecar must authenticate with).

    ``world:anyone:r``, ``digest:user:password:cdrwa`` (plain password: hashed here, and the sidecar
    authenticates as that user), ``ip:10.0.0.0/8:r``, ``sasl:principal:cdrwa``, ``auth::cdrwa``. Several
    entries may be given as a list or comma-separated. None or empty: open, like Hive (world:anyone:cdrwa).
    Errors name ``key``.
    """
    if entries is None:
        return list(OPEN_ACL_UNSAFE), []
    items = entries.split(",") if isinstance(entries, str) else list(entries)
    acls: list[Any] = []
    auth: list[tuple[str, str]] = []
    for raw in (i.strip() for i in items):
        if not raw:
            continue
        scheme, sep, rest = raw.partition(":")
        identity, sep2, perms = rest.rpartition(":")
        if not sep or not sep2 or not scheme or not perms:
            raise ConfigError(
                key,
                f"{_shown(raw)!r} is not 'scheme:id:perms' such as world:anyone:r or digest:user:password:cdrwa",
            )
        if any(p not in _PERMS for p in perms.lower()):
            # Not the permissions either: in a digest entry missing them they are the password.
            raise ConfigError(key, f"{_shown(raw)!r}: permissions are letters of 'cdrwa'")
        mask = 0
        for p in set(perms.lower()):
            mask |= _PERMS[p]
        if scheme == "digest":
            user, sep3, password = identity.partition(":")
            if not sep3 or not user:
                raise ConfigError(key, f"{_shown(raw)!r}: a digest entry is digest:user:password:perms")
            auth.append(("digest", f"{user}:{password}"))
            identity = make_digest_acl_credential(user, password)
        elif scheme == "world" and identity != "anyone":
            raise ConfigError(key, f"{_shown(raw)!r}: the world scheme's only id is 'anyone'")
        acls.append(ACL(mask, Id(scheme, identity)))
    if not acls:
        return list(OPEN_ACL_UNSAFE), []
    _check_not_locked_out(acls, auth, key)
    return acls, auth


def _shown(entry: str) -> str:
    """An ACL entry as an error may show it: a digest entry's password masked (whatever its shape)."""
    scheme, sep, rest = entry.partition(":")
    if scheme.lower() != "digest" or not sep:
        return entry
    user, sep, rest = rest.partition(":")
    if not sep:
        return f"{scheme}:***"
    perms = rest.rpartition(":")[2] if ":" in rest else ""
    return f"{scheme}:{user}:***" + (f":{perms}" if perms else "")


def _check_not_locked_out(acls: list[Any], auth: list[tuple[str, str]], key: str) -> None:
    """Creating and deleting our node needs CREATE and DELETE on the namespace, which gets this ACL."""
    needed = Permissions.CREATE | Permissions.DELETE
    ours = {make_digest_acl_credential(*credential.split(":", 1)) for _, credential in auth}
    for acl in acls:
        if acl.id.scheme not in ("world", "digest"):
            return  # ip/sasl/auth/x509: cannot tell from here who we are; trust the operator
        if acl.perms & needed == needed and (acl.id.scheme == "world" or acl.id.id in ours):
            return
    raise ConfigError(
        key,
        "no entry lets the sidecar itself create and delete its node: add one such as "
        "digest:user:password:cdrwa (it authenticates as that user)",
    )
