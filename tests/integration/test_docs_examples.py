"""Each runnable Python block of README.md and docs/ runs as written, in a fresh interpreter, against local
services: the docs' placeholder addresses (``kafka:9092``, ``thrift://hms1:9083``, ``zk1:2181``) are replaced
by those of a :class:`~hivewire.tools._stack.LocalStack` holding what the examples read (``sales.orders``,
events on ``apiary``, the metastore registered in ZooKeeper); a Hive installation's
``/etc/hive/conf/hive-site.xml`` by one naming that metastore."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_examples import ROOT, Block, blocks

import hivewire as hw
from hivewire.metastore import Registration
from hivewire.tools import _testing as testing
from hivewire.tools._stack import LocalStack

RUNNABLE = [b for b in blocks() if b.reason is None and b.runner is None]  # the others: see docs_examples


@pytest.fixture(scope="module")
def services() -> Iterator[dict[str, str]]:
    with LocalStack(topic="apiary", shim=False) as stack:
        address = stack.metastore.uri.removeprefix("thrift://")
        with hw.MetastoreClient(stack.metastore.uri) as client:
            client.create_database(testing.make_database("sales", location=(stack.workdir / "sales.db").as_uri()))
            table = testing.make_table("sales", "orders", partition_keys={"dt": "string"})
            client.create_table(table)
            client.add_partitions([testing.make_partition(table, [d]) for d in ("2024-05-01", "2024-05-02")])
        events = [
            testing.make_event(hw.CreateTableEvent, "sales", "orders"),
            testing.make_event(hw.AddPartitionEvent, "sales", "orders"),
            testing.make_event(hw.DropTableEvent, "sales", "returns", delete_data=True),
        ]
        testing.produce(stack.bootstrap_servers, "apiary", events)
        hive_site = stack.workdir / "hive-site.xml"  # a Hive installation's, for MetastoreClient.from_hive_conf
        hive_site.write_text(
            "<configuration>\n  <property><name>metastore.thrift.uris</name>"
            f"<value>{stack.metastore.uri}</value></property>\n</configuration>\n"
        )
        with Registration(address, stack.zookeeper.quorum):
            yield {
                "/etc/hive/conf/hive-site.xml": str(hive_site),
                "thrift://hms1:9083,thrift://hms2:9083": stack.metastore.uri,
                "thrift://hms1:9083": stack.metastore.uri,
                "thrift://hms:9083": stack.metastore.uri,
                "hms1.example.com:9083": address,
                "zk1:2181,zk2:2181": stack.zookeeper.quorum,
                "zk1:2181": stack.zookeeper.quorum,
                "kafka:9092": stack.bootstrap_servers,
                "port=9083": "port=0",
            }


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.name)
def test_the_example_runs(block: Block, services: dict[str, str], tmp_path: Path) -> None:
    code = block.code
    for placeholder, real in services.items():
        code = code.replace(placeholder, real)
    # A block of pytest tests (docs/runtime.md's "Testing your listeners") is run by pytest, so its tests run.
    tests = "\ndef test_" in f"\n{code}"
    script = tmp_path / ("test_example.py" if tests else "example.py")
    script.write_text(code)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(ROOT / d) for d in ("sdk", "shim", "thrift")),
        # What docs/data.md tells users: Spark's Python workers must run the interpreter hivewire is installed in.
        "PYSPARK_PYTHON": sys.executable,
    }
    command = (
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(script)]
        if tests
        else [sys.executable, str(script)]
    )
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    if tests:
        ran = code.count("\ndef test_") + code.startswith("def test_")
        assert f"{ran} passed" in done.stdout, f"{block.name}: not all its tests ran:\n{done.stdout[-3000:]}"
