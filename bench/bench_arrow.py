"""Raw messages -> Arrow -> Spark, next to a ``json.loads`` loop and to building Spark ``Row`` objects, in one run.

The same 100,000 mixed Apiary messages (every type, 200 tables, renames, multi-partition events; the
generator of tests/unit/test_arrow.py), with Kafka origins. First, interleaved over ``--rounds``:

* ``json.loads loop``: ``[json.loads(m) for m in messages]`` and ``list(map(json.loads, messages))``, what a
  user writes by hand (nothing but parsing; the better of the two is the anchor);
* ``pyarrow.json.read_json``: Arrow's own JSON reader on the same bytes, one message per line, schema inferred;
* ``to_arrow, raw messages``: ``hivewire.arrow.to_arrow`` of ``hivewire.arrow.Message`` (origin, value) items:
  the columnar decoder, straight from the bytes to the table (target: at least 4 times the best json.loads loop);
* ``decoder, 3 columns``: the same decoder asked for the envelope's names only: every message is still parsed
  and checked whole, but no object cell is built, which bounds what the rest of a row could ever save.

All with the garbage collector paused, one warm-up round each (its CPU seconds printed apart, and the ratio
of the first calls too), then alternating rounds, CPU seconds of the process compared (the load average is
printed before and after).

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
import gc
import json
import os
import resource
import statistics
import subprocess
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

from hivewire import arrow  # noqa: E402
from hivewire import spark as hw_spark  # noqa: E402

# The rows moved from data/_arrow.py to data/_rows.py with the columnar decoder; older commits have them there.
_rows = hivewire_module("hivewire.data._rows", "hivewire.data._arrow")
_event_row = getattr(_rows, "event_row", None) or _rows._event_row
paused_gc = _rows.paused_gc


def python_rows(events: list[Any]) -> list[Any]:
    """The values to_arrow puts in each row, as the Python objects a Spark Row needs (datetimes, dicts)."""
    from pyspark.sql import Row

    names = arrow.SCHEMA.names
    date_at = names.index("event_date")
    stamps = [i for i, t in enumerate(arrow.SCHEMA.types) if pa.types.is_timestamp(t)]
    maps = [names.index("parameters"), names.index("table_parameters")]
    make = Row(*names)
    rows = []
    for event in events:
        values = list(_event_row(event, "raise"))
        for i in stamps:
            if values[i] is not None:
                values[i] = datetime.fromtimestamp(values[i] / 1e6, tz=timezone.utc)
        if values[date_at] is not None:
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


def _cpu() -> float:
    """CPU seconds of this process, every thread (pyarrow's JSON reader and the native decoder's callers)."""
    return time.process_time()


def raw_vs_json(messages: list[bytes], rounds: int, out: Output) -> None:
    """The columnar decoder against the best json.loads loop and pyarrow's JSON reader, same bytes, one run.

    Every contender runs with the garbage collector paused (to_arrow pauses it itself; the loops and the reader
    are run inside the same ``paused_gc``), in alternating rounds; CPU seconds are what is compared."""
    import io
    import json

    import pyarrow.json as pj

    from hivewire.data._decoder import BATCH_ROWS, decode_messages

    n = len(messages)
    items = [arrow.Message(e.origin, e.raw) for e in decode_all(messages)]
    lines = b"\n".join(messages)
    assert lines.count(b"\n") == n - 1, "a message holds a newline: pyarrow's reader needs one per line"

    def loads_comprehension() -> Any:
        loads = json.loads
        return [loads(m) for m in messages]

    def loads_map() -> Any:
        return list(map(json.loads, messages))

    def pyarrow_reader() -> Any:  # schema inferred, as a user would call it
        return pj.read_json(io.BytesIO(b"\n".join(messages)))

    contenders: dict[str, Callable[[], Any]] = {
        "json.loads loop, list comprehension": loads_comprehension,
        "json.loads loop, map": loads_map,
        "pyarrow.json.read_json, schema inferred": pyarrow_reader,
        "to_arrow, raw messages": lambda: arrow.to_arrow(items, on_error="record"),
        # the decoder asked for the envelope's names only: each message still parsed and checked whole, but
        # no object cell built: what the rest of a row costs is the difference with the line above
        "decoder, 3 columns (parse and check only)": lambda: [
            decode_messages(items[i : i + BATCH_ROWS], "record", ["event_type", "db_name", "table_name"])
            for i in range(0, n, BATCH_ROWS)
        ],
    }
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    wall: dict[str, list[float]] = {name: [] for name in contenders}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    # round 0 is every contender's warm-up (first calls, the allocators' first pages): timed, reported apart
    for r in range(rounds + 1):
        order = list(contenders.items())
        if r % 2:
            order.reverse()  # alternate who goes first
        for name, fn in order:
            with paused_gc():
                start, start_cpu = time.perf_counter(), _cpu()
                fn()
                cpu[name].append(_cpu() - start_cpu)
                wall[name].append(time.perf_counter() - start)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    first = {name: values.pop(0) for name, values in cpu.items()}
    for values in wall.values():
        values.pop(0)
    medians = {name: statistics.median(values) for name, values in cpu.items()}
    print(f"{n:,} raw messages, {sum(map(len, messages)) / n:,.0f} bytes on average; garbage collector paused for")
    print(f"every contender; one warm-up round each, then the median CPU seconds of {rounds} alternating rounds")
    print("(one process; wall seconds, then the warm-up round's CPU seconds, after)")
    for name, value in medians.items():
        print(
            f"  {name:<46}{value:8.2f} s CPU  ({n / value:>10,.0f}/s)  {statistics.median(wall[name]):6.2f} s wall"
            f"  {first[name]:6.2f} s first"
        )
        out.figure(f"{name}, events per CPU second", n / value, "events/s")
    loads = ["json.loads loop, list comprehension", "json.loads loop, map"]
    best = min(medians[name] for name in loads)
    columnar = medians["to_arrow, raw messages"]
    reader = medians["pyarrow.json.read_json, schema inferred"]
    print(f"  native decoder in use (hivewire.arrow.ACCELERATED): {arrow.ACCELERATED}")
    cold = min(first[name] for name in loads) / first["to_arrow, raw messages"]
    print(f"  warm-up rounds alone (each contender's first call): to_arrow / best json.loads loop {cold:.2f}")
    out.figure("to_arrow raw messages / best json.loads loop, first call (CPU)", cold, "ratio")
    print(f"  to_arrow of raw messages / best json.loads loop: {best / columnar:.2f}   (target >= 4)")
    print(f"  to_arrow of raw messages / pyarrow.json.read_json: {reader / columnar:.2f}")
    parse = medians["decoder, 3 columns (parse and check only)"]
    print(f"  decoder's parse and check alone / best json.loads loop: {best / parse:.2f}   (the ceiling of to_arrow)\n")
    out.figure("decoder parse and check alone / best json.loads loop (CPU)", best / parse, "ratio")
    out.figure("to_arrow raw messages / best json.loads loop (CPU)", best / columnar, "ratio")
    out.figure("to_arrow raw messages / pyarrow.json.read_json (CPU)", reader / columnar, "ratio")


# -- The decoder candidates (docs/architecture.md, "The columnar decoder") -----------------------------------

#: The message fields the columns read, as each candidate is told them (the derived columns, ALTER changes and
#: Iceberg values, are left to code after the parse: what is timed is the parse into typed columns).
_TABLE = '{"sd": {"location": "VARCHAR", "cols": [{"name": "VARCHAR", "type": "VARCHAR", "comment": "VARCHAR"}]}, '
_TABLE += '"partitionKeys": [{"name": "VARCHAR", "type": "VARCHAR"}], "tableType": "VARCHAR", '
_TABLE += '"parameters": "MAP(VARCHAR, VARCHAR)"}'
_DUCK = (
    '{"eventType": "VARCHAR", "databaseName": "VARCHAR", "tableName": "VARCHAR", "status": "BOOLEAN", '
    f'"parameters": "MAP(VARCHAR, VARCHAR)", "table": {_TABLE}, "oldTable": {_TABLE}, "newTable": {_TABLE}, '
    '"partitions": [{"values": ["VARCHAR"], "sd": {"location": "VARCHAR"}}]}'
)


def _arrow_type(duck: Any) -> Any:
    """The pyarrow type of one of _DUCK's types; maps become structs (pyarrow's JSON reader has no maps)."""
    if isinstance(duck, dict):
        return pa.struct([(k, _arrow_type(v)) for k, v in duck.items()])
    if isinstance(duck, list):
        return pa.list_(_arrow_type(duck[0]))
    return {"VARCHAR": pa.string(), "BOOLEAN": pa.bool_()}.get(duck, pa.struct([]))


def candidate(name: str, n: int) -> dict[str, float]:
    """One candidate on ``n`` mixed messages (1% malformed), in this process: CPU seconds and peak RSS."""
    import io
    import pickle

    with open(os.environ["BENCH_MESSAGES"], "rb") as f:  # made once by candidates(): no generator's peak here
        messages = [arrow.Message(o, v) for o, v in pickle.load(f)][:n]
    values = [m.value for m in messages]
    gc.collect()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    with paused_gc():
        if name == "rust":
            table = arrow.to_arrow(messages, on_error="record")
            rows = table.num_rows
        elif name == "python":
            from hivewire.data import _decoder

            _decoder._NATIVE = None  # the fallback, as without the native module
            table = arrow.to_arrow(messages, on_error="record")
            rows = table.num_rows
        elif name == "duckdb":
            import duckdb

            con = duckdb.connect()
            source = pa.table({"v": pa.array([v or b"" for v in values], pa.binary())})
            con.register("source", source)
            # json_transform errors on the whole query at the first malformed message: guard each row
            sql = f"SELECT CASE WHEN json_valid(v::VARCHAR) THEN json_transform(v::VARCHAR, '{_DUCK}') END FROM source"
            rows = con.sql(sql).to_arrow_table().num_rows
        elif name == "pyarrow":
            import pyarrow.json as pj

            schema = _arrow_type(json.loads(_DUCK))
            options = pj.ParseOptions(explicit_schema=pa.schema(list(schema)), unexpected_field_behavior="ignore")
            parts, rows, block = [], 0, 4096
            for i in range(0, len(values), block):
                chunk = [v or b"" for v in values[i : i + block]]
                try:
                    parts.append(pj.read_json(io.BytesIO(b"\n".join(chunk)), parse_options=options))
                except pa.ArrowInvalid:  # one malformed line fails its block: read each line alone
                    for v in chunk:
                        try:
                            parts.append(pj.read_json(io.BytesIO(v), parse_options=options))
                        except pa.ArrowInvalid:
                            parts.append(pa.table({f.name: pa.nulls(1, f.type) for f in schema}))
            rows = sum(p.num_rows for p in parts)
        else:
            raise SystemExit(f"no candidate {name!r}")
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"cpu": cpu, "rows": rows, "peak_mb": (peak - base) / 1024}


def candidates(n: int, out: Output | None = None) -> None:
    """Each candidate in a process of its own, alternating, three rounds: messages/CPU second, peak memory."""
    import pickle
    import tempfile

    from test_columnar import messages_with_origins

    names = ["rust", "python", "duckdb", "pyarrow"]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    made = tempfile.NamedTemporaryFile(suffix=".pickle", delete=False)  # noqa: SIM115
    with made:
        pickle.dump([tuple(m) for m in messages_with_origins(n, bad_share=0.01, seed=38)], made)
    env = {**os.environ, "BENCH_MESSAGES": made.name}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for r in range(3):
        for name in names if r % 2 == 0 else reversed(names):
            done = subprocess.run(
                [sys.executable, __file__, "--candidate", name, "--events", str(n)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            results[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    os.unlink(made.name)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"{n:,} mixed messages, 1% malformed; median of 3 alternating rounds, one process per run")
    for name in names:
        cpu = statistics.median(r["cpu"] for r in results[name])
        peak = statistics.median(r["peak_mb"] for r in results[name])
        rows = results[name][0]["rows"]
        print(
            f"  {name:<8} {n / cpu:>10,.0f} messages per CPU second   peak RSS growth {peak:6.0f} MB   rows {rows:,.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--candidates", action="store_true", help="only the decoder candidates' table")
    parser.add_argument("--candidate", help=argparse.SUPPRESS)  # one candidate, in a process of its own
    add_output_options(parser)
    args = parser.parse_args()
    # The Row route's Python workers unpickle hivewire's values: they must run this Python, not python3's.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.candidate:
        print(json.dumps(candidate(args.candidate, args.events)))
        return
    if args.candidates:
        candidates(args.events)
        return
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    n = args.events
    # First the comparisons within Python processes, before Spark's JVM exists: its threads (JIT, collector)
    # would share the two cores, and CPU seconds, with whichever contender runs at that moment.
    candidates(min(n, 20_000), out)
    messages = mixed_messages(n)
    raw_vs_json(messages, args.rounds, out)

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
