"""The embedded demo: a real local metastore, a few changes, and what hivewire sees of them."""

from __future__ import annotations

from collections.abc import Callable

from hivewire.local import LocalMetastore
from hivewire.metastore import MetastoreClient
from hivewire.testing import make_database, make_partition, make_table


def run_demo(echo: Callable[[str], None] = print) -> None:
    """Start a Hive Metastore from pyspark's jars, make changes through MetastoreClient, print them."""
    echo("starting a local Hive Metastore (pyspark's jars, Derby in a temp dir) ...")
    with LocalMetastore() as hms, MetastoreClient(hms.uri) as client:
        echo(f"metastore up at {hms.uri}")
        client.create_database(make_database("demo", location=(hms.warehouse / "demo.db").as_uri()))
        table = make_table("demo", "orders", columns={"id": "bigint", "amount": "double"},
                           partition_keys={"dt": "string"},
                           location=(hms.warehouse / "demo.db" / "orders").as_uri())
        client.create_table(table)
        client.add_partitions([make_partition(table, [f"2024-01-0{d}"]) for d in (1, 2, 3)])
        got = client.get_table("demo", "orders")
        echo(f"table demo.orders: columns {[c.name for c in got.sd.cols]}, "
             f"partitioned by {[k.name for k in got.partitionKeys]}")
        echo(f"partitions: {client.get_partition_names('demo', 'orders')}")
        client.drop_table("demo", "orders", True)
        client.drop_database("demo", True, True)
        echo("dropped demo.orders and demo; done")
