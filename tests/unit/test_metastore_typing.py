"""MetastoreClient's signatures are typed with the generated stubs: mypy sees Tables, Partitions, the generated
client and the constructor's options, and refuses what does not fit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

USES = """\
from hivewire.metastore import MetastoreClient, MetastoreClientPool

def f(client: MetastoreClient, pool: MetastoreClientPool) -> None:
    reveal_type(client.get_table("db", "t"))
    reveal_type(client.get_table_objects("db", ["t"]))
    reveal_type(client.get_partitions("db", "t"))
    reveal_type(client.get_partitions_by_names("db", "t", ["dt=1"]))
    reveal_type(client.get_partitions_by_filter("db", "t", "dt > 1"))
    reveal_type(client.get_partition_names("db", "t"))
    reveal_type(client.raw)
    reveal_type(client.raw.get_all_databases())
    reveal_type(client.call("get_all_databases"))
    with pool.client() as pooled:
        reveal_type(pooled.get_table("db", "t").sd)
    MetastoreClient.from_zookeeper("zk:2181", timeout=5.0, transport="framed", selection="random")
    MetastoreClient.from_hive_conf({"hive.metastore.uris": "thrift://h:9083"}, protocol="compact")
    MetastoreClient.from_zookeeper("zk:2181", transport="http")  # error: not a Transport
    MetastoreClient.from_hive_conf("hive-site.xml", timeout="5")  # error: not a float
    MetastoreClient.from_zookeeper("zk:2181", retries=3)  # error: not an option
    client.alter_table("db", "t", client.get_partitions("db", "t")[0])  # error: a Partition is no Table
"""


def test_mypy_sees_the_typed_client(tmp_path: Path) -> None:
    code = tmp_path / "uses_client.py"
    code.write_text(USES)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "pyproject.toml", str(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    out = (proc.stdout + proc.stderr).replace("builtins.", "").replace("hivewire_thrift.hive_metastore.", "")
    revealed = [line.split('Revealed type is "', 1)[1].rstrip('"') for line in out.splitlines() if "Revealed" in line]
    assert revealed == [
        "ttypes.Table",
        "list[ttypes.Table]",
        "list[ttypes.Partition]",
        "list[ttypes.Partition]",
        "list[ttypes.Partition]",
        "list[str]",
        "ThriftHiveMetastore.Client",
        "list[str]",
        "object",
        "ttypes.StorageDescriptor | None",
    ], out
    errors = [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]
    assert len(errors) == 4, out
    assert 'Argument "transport" to "from_zookeeper" of "MetastoreClient" has incompatible type' in errors[0], out
    assert 'Argument "timeout" to "from_hive_conf" of "MetastoreClient" has incompatible type "str"' in errors[1], out
    assert 'Unexpected keyword argument "retries"' in errors[2], out
    assert 'Argument 3 to "alter_table" of "MetastoreClient" has incompatible type "Partition"' in errors[3], out
