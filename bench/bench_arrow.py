"""Raw messages -> Arrow -> Spark, next to a ``json.loads`` loop and to building Spark ``Row`` objects, in one run.

The same 100,000 mixed Apiary messages (every type, 200 tables, renames, multi-partition events; the
generator of tests/unit/test_arrow.py), with Kafka origins. First, interleaved over ``--rounds``:

* ``json.loads loop``: ``[json.loads(m) for m in messages]``, what a user writes by hand (nothing but parsing);
* ``to_arrow, raw messages``: ``hivewire.arrow.to_arrow`` of ``hivewire.arrow.Message`` (origin, value) items:
  the columnar decoder, straight from the bytes to the table (target: at least 4 times the json.loads loop);
* ``decode + to_arrow, per event``: ``apiary.decode`` of each message, then ``to_arrow`` of the events (every
  object converted): what read_events, the archive and the Spark source did before the columnar decoder.

Then, from the events decoded once, interleaved over ``--rounds``:

* ``to_arrow``: ``hivewire.arrow.to_arrow(events)`` (the events' objects were converted by a warm-up run,
  as they are once a listener has read them; the first conversion is reported separately);
* ``to_dataframe``: ``hivewire.spark.to_dataframe(spark, arrow_table)``, Arrow record batches to the JVM;
* ``Rows``: the same column values as Python ``Row`` objects and ``spark.createDataFrame(rows, SPARK_SCHEMA)``
  (parallelised into as many slices as the Arrow route has record batches), timed from the events
  (building the rows) and from ready-made rows.

Each DataFrame is also materialised in the JVM (a ``noop`` write) so that lazy work is not hidden. Also shown:
``Table.from_pylist`` with one dict per event, the row-wise alternative ``to_arrow`` was measured against.

Usage: python bench/bench_arrow.py [--events 100000] [--rounds 3] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
sys.path.insert(0, str(Path(__file__).parent))

import pyarrow as pa  # noqa: E402
from _common import Output, add_output_options, hivewire_module  # noqa: E402
from test_arrow import decode_all, mixed_messages  # noqa: E402

from hivewire import apiary, arrow  # noqa: E402
from hivewire import spark as hw_spark  # noqa: E402

# The rows moved from data/_arrow.py to data/_rows.py with the columnar decoder; older commits have them there.
_rows = hivewire_module("hivewire.data._rows", "hivewire.data._arrow")
_event_row = getattr(_rows, "event_row", None) or _rows._event_row
paused_gc = _rows.paused_gc


def python_rows(events: list[Any]) -> list[Any]:
    """The values to_arrow puts in each row, as the Python objects a Spark Row needs (datetimes, dicts)."""
    from pyspark.sql import Row

    names = arrow.SCHEMA.names
    time_at, date_at = names.index("event_time"), names.index("event_date")
    maps = [names.index("parameters"), names.index("table_parameters")]
    make = Row(*names)
    rows = []
    for event in events:
        values = list(_event_row(event, "raise"))
        if values[time_at] is not None:
            values[time_at] = datetime.fromtimestamp(values[time_at] / 1e6, tz=timezone.utc)
            values[date_at] = date.fromordinal(date(1970, 1, 1).toordinal() + values[date_at])
        for i in maps:
            if values[i] is not None:
                values[i] = dict(values[i])
        rows.append(make(*values))
    return rows


def timed(fn: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """Median seconds of ``rounds`` runs of ``fn``, and its last result."""
    seconds, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def raw_vs_json(messages: list[bytes], rounds: int, out: Output) -> None:
    """The columnar decoder against a json.loads loop and the per-event path, same messages, one run."""
    import json

    n = len(messages)
    items = [arrow.Message(e.origin, e.raw) for e in decode_all(messages)]
    origins = [m.origin for m in items]

    def per_event() -> Any:
        decode = apiary.decode
        with paused_gc():
            events = [decode(m.value, origin=o) for m, o in zip(items, origins, strict=True)]
        return arrow.to_arrow(events, on_error="record")

    seconds: dict[str, list[float]] = {"json.loads loop": [], "to_arrow, raw messages": [], "decode + to_arrow": []}
    for _ in range(rounds):
        for name, fn in (
            ("json.loads loop", lambda: [json.loads(m) for m in messages]),
            ("to_arrow, raw messages", lambda: arrow.to_arrow(items, on_error="record")),
            ("decode + to_arrow", per_event),
        ):
            start = time.perf_counter()
            fn()
            seconds[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    loads, columnar, per = medians["json.loads loop"], medians["to_arrow, raw messages"], medians["decode + to_arrow"]
    print(f"{n:,} raw messages, {sum(map(len, messages)) / n:,.0f} bytes on average; median of {rounds} rounds")
    for name, value in medians.items():
        print(f"  {name:<46}{value:8.2f} s  ({n / value:>10,.0f}/s)")
        out.figure(name, n / value, "events/s")
    print(f"  to_arrow of raw messages / json.loads loop: {loads / columnar:.2f}   (target >= 4)")
    print(f"  to_arrow of raw messages / decode + to_arrow per event: {per / columnar:.2f}\n")
    out.figure("to_arrow raw messages / json.loads loop", loads / columnar, "ratio")
    out.figure("to_arrow raw messages / decode + to_arrow per event", per / columnar, "ratio")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    add_output_options(parser)
    args = parser.parse_args()
    # The Row route's Python workers unpickle hivewire's values: they must run this Python, not python3's.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    n = args.events

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.Builder()
        .master("local[1]")
        .appName("bench_arrow")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        # Room for both routes' copies of 100,000 messages (about 280 MB each way) in the one JVM.
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    schema = hw_spark.SPARK_SCHEMA

    messages = mixed_messages(n)
    raw_vs_json(messages, args.rounds, out)
    start = time.perf_counter()
    events = [*decode_all(messages)]
    decode_s = time.perf_counter() - start
    start = time.perf_counter()
    table = arrow.to_arrow(events)
    first_s = time.perf_counter() - start
    print(
        f"{n:,} events, {sum(map(len, messages)) / n:,.0f} bytes each on average; Arrow table "
        f"{table.nbytes / 1e6:,.0f} MB ({table.column('raw').nbytes / 1e6:,.0f} MB of it the raw messages)"
    )
    print(f"  decode (apiary.decode, lazy)                  {decode_s:8.2f} s")
    print(f"  first to_arrow (converts every object)        {first_s:8.2f} s")

    def materialise(df: Any) -> Any:
        df.write.format("noop").mode("overwrite").save()
        return df

    def from_pylist() -> Any:
        names = arrow.SCHEMA.names
        with paused_gc():
            dicts = [dict(zip(names, _event_row(e, "raise"), strict=True)) for e in events]
            return pa.Table.from_pylist(dicts, schema=arrow.SCHEMA)

    slices = -(-n // int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")))

    def rows_frame(rows: list[Any]) -> Any:
        # As many partitions as the Arrow route's record batches: one slice of 100,000 rows would be a single
        # task of several hundred MB.
        return spark.createDataFrame(spark.sparkContext.parallelize(rows, slices), schema)

    # Warm the JVM's code paths for both routes before timing.
    materialise(hw_spark.to_dataframe(spark, table.slice(0, 2000)))
    materialise(rows_frame(python_rows(events[:2000])))

    to_arrow_s, table = timed(lambda: arrow.to_arrow(events), args.rounds)
    from_pylist_s, _ = timed(from_pylist, args.rounds)
    to_df_s, df = timed(lambda: hw_spark.to_dataframe(spark, table), args.rounds)
    assert df.schema == schema
    to_df_mat_s, _ = timed(lambda: materialise(hw_spark.to_dataframe(spark, table)), args.rounds)
    rows_build_s, rows = timed(lambda: python_rows(events), args.rounds)
    rows_df_s, rows_df = timed(lambda: rows_frame(rows), args.rounds)
    rows_df_mat_s, _ = timed(lambda: materialise(rows_frame(rows)), args.rounds)
    assert rows_df.count() == df.count() == n

    print(f"\nmedian of {args.rounds} rounds, seconds for {n:,} events (events/s in brackets)")

    def line(label: str, seconds: float, note: str = "") -> None:
        print(f"  {label:<46}{seconds:8.2f} s  ({n / seconds:>10,.0f}/s) {note}")

    line("to_arrow (objects already converted)", to_arrow_s)
    line("Table.from_pylist, one dict per event", from_pylist_s, f"x{from_pylist_s / to_arrow_s:.2f} of to_arrow")
    line("to_dataframe from the Arrow table", to_df_s)
    line("  + materialised in the JVM (noop write)", to_df_mat_s)
    line("Python Rows: build the rows from the events", rows_build_s)
    line("Python Rows: createDataFrame(rows, SPARK_SCHEMA)", rows_df_s)
    line("  + materialised in the JVM (noop write)", rows_df_mat_s)
    arrow_total = to_arrow_s + to_df_mat_s
    rows_total = rows_build_s + rows_df_mat_s
    print(
        f"\n  events -> DataFrame, materialised: Arrow {arrow_total:.2f} s, Rows {rows_total:.2f} s; "
        f"ratio Rows/Arrow {rows_total / arrow_total:.2f}"
    )
    print(
        f"  DataFrame from ready data, created: Arrow table {to_df_s:.2f} s, Rows {rows_df_s:.2f} s; "
        f"ratio {rows_df_s / to_df_s:.2f}"
    )
    print(
        f"  DataFrame from ready data, materialised: Arrow {to_df_mat_s:.2f} s, Rows {rows_df_mat_s:.2f} s; "
        f"ratio {rows_df_mat_s / to_df_mat_s:.2f}"
    )
    spark.stop()
    for name, seconds in (
        ("decode (apiary.decode, lazy), once", decode_s),
        ("first to_arrow (converts every object), once", first_s),
        ("to_arrow (objects already converted)", to_arrow_s),
        ("Table.from_pylist, one dict per event", from_pylist_s),
        ("to_dataframe from the Arrow table", to_df_s),
        ("to_dataframe, materialised", to_df_mat_s),
        ("Python Rows: build the rows from the events", rows_build_s),
        ("Python Rows: createDataFrame", rows_df_s),
        ("Python Rows: createDataFrame, materialised", rows_df_mat_s),
    ):
        out.figure(name, seconds, "s", "lower")
    out.figure("events -> DataFrame, materialised: Rows/Arrow", rows_total / arrow_total, "ratio")
    out.figure("DataFrame from ready data, created: Rows/Arrow", rows_df_s / to_df_s, "ratio")
    out.figure("DataFrame from ready data, materialised: Rows/Arrow", rows_df_mat_s / to_df_mat_s, "ratio")


if __name__ == "__main__":
    main()
