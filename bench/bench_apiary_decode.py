"""Apiary message decode throughput (events/s) next to ``json.loads`` of the same bytes, in one run.

Two typical messages, as the Hive 2.3 Apiary listener writes them: ``ON_ADD_PARTITION`` with 10 partitions of
a 12-column table, and ``ON_CREATE_TABLE``. For each, these contenders run interleaved over the same bytes:

* ``json.loads``: the standard library building the whole message as Python objects (the baseline).
* ``msgspec.json.decode``: the same with msgspec, the parser ``decode`` uses (what a full parse costs).
* ``decode, names only``: ``hivewire.apiary.decode`` and a listener that reads ``db_name`` and ``table_name``
  (the lazy path: the whole message is syntax-checked, the envelope built, the Thrift objects left raw).
* ``decode, fully materialised``: the same, then every Thrift object is built (``table``, ``partitions``,
  ``environment_context``).
* ``decode + copy()``: names only, plus the per-listener copy ``App.dispatch`` makes.

Usage: python bench/bench_apiary_decode.py [--iterations 2000] [--rounds 5] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import msgspec
from _common import Output, add_output_options, interleaved, report

from hivewire import apiary
from hivewire.events import AddPartitionEvent, CreateTableEvent, ListenerEvent
from hivewire.testing import make_partition, make_table
from hivewire_thrift.hive_metastore import ttypes as hms

COLUMNS = {
    "order_id": "bigint",
    "customer_id": "bigint",
    "sku": "string",
    "quantity": "int",
    "unit_price": "decimal(10,2)",
    "currency": "string",
    "channel": "string",
    "country": "string",
    "created_at": "timestamp",
    "updated_at": "timestamp",
    "status": "string",
    "notes": "string",
}
PARAMETERS = {"hive.version": "2.3.9"}


def typical_table() -> Any:
    table = make_table(
        "sales",
        "orders",
        columns=COLUMNS,
        partition_keys={"dt": "string"},
        location="s3://warehouse-bucket/sales.db/orders",
        table_type="EXTERNAL_TABLE",
        owner="etl",
        create_time=1717171717,
        parameters={
            "transient_lastDdlTime": "1717171717",
            "owner.team": "orders",
            "parquet.compression": "SNAPPY",
            "numFiles": "0",
            "totalSize": "0",
        },
    )
    for col in table.sd.cols:
        col.comment = f"the {col.name}"
    return table


def typical_partitions(table: Any, n: int) -> list[Any]:
    return [
        make_partition(
            table,
            [f"2024-05-{day:02d}"],
            create_time=1717171717 + day,
            parameters={
                "transient_lastDdlTime": str(1717171717 + day),
                "numFiles": "4",
                "numRows": "120000",
                "totalSize": "73400320",
                "rawDataSize": "0",
                "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}',
            },
        )
        for day in range(1, n + 1)
    ]


def messages() -> dict[str, bytes]:
    table = typical_table()
    context = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
    add = AddPartitionEvent(
        table=table, partitions=typical_partitions(table, 10), parameters=PARAMETERS, environment_context=context
    )
    create = CreateTableEvent(table=table, parameters=PARAMETERS)
    return {"ON_ADD_PARTITION (10 partitions)": apiary.encode(add), "ON_CREATE_TABLE": apiary.encode(create)}


def materialise(event: ListenerEvent) -> None:
    for name in ("environment_context", *event.fields):
        getattr(event, name)


def contenders(data: bytes, n: int) -> dict[str, Callable[[], int]]:
    decode, loads, msgspec_loads = apiary.decode, json.loads, msgspec.json.decode

    def json_loads() -> int:
        for _ in range(n):
            loads(data)
        return n

    def msgspec_full() -> int:
        for _ in range(n):
            msgspec_loads(data)
        return n

    def names_only() -> int:
        for _ in range(n):
            event = decode(data)
            event.db_name  # noqa: B018 - the listener's read is the point
            event.table_name  # noqa: B018
        return n

    def fully() -> int:
        for _ in range(n):
            materialise(decode(data))
        return n

    def with_copy() -> int:
        for _ in range(n):
            event = decode(data).copy()
            event.db_name  # noqa: B018
        return n

    return {
        "json.loads": json_loads,
        "msgspec.json.decode": msgspec_full,
        "decode, names only (lazy)": names_only,
        "decode, fully materialised": fully,
        "decode + copy(), names only": with_copy,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=2000, help="decodes per contender per round")
    parser.add_argument("--rounds", type=int, default=5)
    add_output_options(parser)
    args = parser.parse_args()
    with Output(__file__, args) as out:
        for title, data in messages().items():
            event = apiary.decode(data)
            materialise(event)
            assert apiary.decode(apiary.encode(event)) == event
            n = max(1, args.iterations if len(data) < 8000 else args.iterations // 4)
            rates = interleaved(contenders(data, n), rounds=args.rounds)
            report(f"{title}: {len(data):,} bytes", rates, "events", baseline="json.loads")
            for name, rate in rates.items():
                out.figure(f"{title}: {name}", rate, "events/s")
                if name != "json.loads":
                    out.figure(f"{title}: {name} / json.loads", rate / rates["json.loads"], "ratio")


if __name__ == "__main__":
    main()
