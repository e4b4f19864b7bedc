"""Test certificates for Kafka's TLS listeners, made with the ``openssl`` command (PEM files only).

:func:`make_certificates` writes, into one directory: a test CA (``ca.pem``), a server certificate for
``127.0.0.1`` and ``localhost`` signed by it, as Kafka's PEM key store wants it (``server.keystore.pem``: an
unencrypted PKCS#8 key, then the certificate), client certificates signed by it (``<name>.pem``, with the key in
``<name>.key``, encrypted with ``<name>.key-password`` when asked), and a second CA that nobody trusts
(``other-ca.pem``) with a client certificate of its own (``stranger.pem``/``stranger.key``).

Invariant: every certificate's subject is ``/CN=<name>`` alone, so the broker's principal mapping rule
``RULE:^CN=([^,]+)$/$1/`` turns it into the principal ``User:<name>``.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The broker's ssl.principal.mapping.rules: a certificate's CN is its principal.
PRINCIPAL_MAPPING_RULES = "RULE:^CN=([^,]+)$/$1/,DEFAULT"


@dataclass(frozen=True)
class Certificates:
    """Where :func:`make_certificates` put each file."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def other_ca(self) -> Path:
        return self.directory / "other-ca.pem"

    @property
    def server_keystore(self) -> Path:
        return self.directory / "server.keystore.pem"

    def certificate(self, name: str) -> Path:
        return self.directory / f"{name}.pem"

    def key(self, name: str) -> Path:
        return self.directory / f"{name}.key"

    def key_password(self, name: str) -> Path:
        return self.directory / f"{name}.key-password"


def _openssl(directory: Path, *args: str) -> None:
    done = subprocess.run(["openssl", *args], cwd=directory, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"openssl {args[0]} failed (the openssl command is a test prerequisite):\n{done.stderr}")


def _ca(directory: Path, name: str, subject: str) -> None:
    _openssl(directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
             f"{name}.pem", "-days", "3", "-subj", f"/CN={subject}")  # fmt: skip


def _signed(directory: Path, ca: str, name: str, extensions: str, key_password: str | None) -> None:
    _openssl(directory, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.plain.key", "-out",
             f"{name}.csr", "-subj", f"/CN={name}")  # fmt: skip
    (directory / f"{name}.ext").write_text(extensions + "\n")
    _openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-out", f"{name}.pem", "-days", "3", "-extfile", f"{name}.ext")  # fmt: skip
    if key_password is None:
        _openssl(directory, "pkcs8", "-topk8", "-nocrypt", "-in", f"{name}.plain.key", "-out", f"{name}.key")
    else:
        (directory / f"{name}.key-password").write_text(key_password + "\n")  # as a mounted secret: one newline
        _openssl(directory, "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", f"{name}.plain.key", "-out",
                 f"{name}.key", "-passout", f"file:{name}.key-password")  # fmt: skip
    (directory / f"{name}.plain.key").unlink()


def make_certificates(directory: Path, clients: dict[str, str | None]) -> Certificates:
    """A CA, the broker's key store, ``clients`` (name -> key password, or None for an unencrypted key) signed
    by the CA, and an untrusted CA with its client ``stranger``."""
    directory.mkdir(parents=True, exist_ok=True)
    _ca(directory, "ca", "hivewire test CA")
    _ca(directory, "other-ca", "an untrusted CA")
    _signed(directory, "ca", "server", "subjectAltName=DNS:localhost,IP:127.0.0.1", None)
    keystore = (directory / "server.key").read_text() + (directory / "server.pem").read_text()
    (directory / "server.keystore.pem").write_text(keystore)
    for name, password in clients.items():
        _signed(directory, "ca", name, "extendedKeyUsage=clientAuth", password)
    _signed(directory, "other-ca", "stranger", "extendedKeyUsage=clientAuth", None)
    return Certificates(directory)
