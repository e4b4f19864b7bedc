"""A Hive Metastore 2.3 that authenticates clients with SASL: tests/java/hivewire/test/SaslMetastore.java.

The real metastore handler behind libthrift's ``TSaslServerTransport``: :attr:`uri` offers DIGEST-MD5 and
PLAIN, :attr:`digest_only_uri` DIGEST-MD5 alone (a mechanism the server does not offer is then testable).
One user, :data:`USER` with :data:`PASSWORD`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from hivewire.errors import HivewireError
from hivewire.metastore import SaslAuth
from hivewire.tools._local import LocalMetastore, _port_open, free_port

USER = "hivewire-sasl-user"
#: Long and unusual, so that a grep of the logs for it finds nothing by chance.
PASSWORD = "s3cr3t-Xq7-never-in-a-log"


class SaslMetastore(LocalMetastore):
    """:class:`LocalMetastore` with the SASL server of tests/java as its main class."""

    name = "sasl-metastore"
    main_class = "hivewire.test.SaslMetastore"

    def __init__(self, *, workdir: str | os.PathLike[str], classpath: Sequence[str | os.PathLike[str]]) -> None:
        self.digest_only_port = free_port()
        super().__init__(
            workdir=workdir,
            classpath=classpath,
            properties={
                "hivewire.test.sasl.user": USER,
                "hivewire.test.sasl.password": PASSWORD,
                "hivewire.test.sasl.server": "127.0.0.1",
                "hivewire.test.sasl.digest.only.port": str(self.digest_only_port),
            },
        )

    @property
    def digest_only_uri(self) -> str:
        return f"thrift://127.0.0.1:{self.digest_only_port}"

    def _ready(self) -> bool:
        if not (_port_open(self.port) and _port_open(self.digest_only_port)):
            return False
        from hivewire.metastore import MetastoreClient

        try:
            with MetastoreClient(self.uri, timeout=30, sasl=SaslAuth("PLAIN", USER, PASSWORD)) as client:
                client.get_all_databases()
            return True
        except HivewireError:
            return False
