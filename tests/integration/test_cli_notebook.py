"""Issue 33, item 9, in a notebook: PySpark's pandas FutureWarning is not what a user sees from ``to_spark``
(pandas is pinned below 3 with the spark extra, as PySpark 4 asks), and ``read_events`` can be pickled."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import hivewire as hw
from hivewire.tools import _testing as testing

SCRIPT = textwrap.dedent("""
    import warnings
    warnings.simplefilter("default")  # as a notebook shows them
    import hivewire as hw
    from hivewire.data._notebook import EventList
    from hivewire.tools import _testing as testing
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    events = EventList([testing.make_event(hw.CreateTableEvent, "sales", "orders")])
    print("rows", events.to_spark(spark).count())
    spark.stop()
""")


def test_to_spark_prints_no_future_warning() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rows 1" in done.stdout
    assert "FutureWarning" not in done.stderr, done.stderr[-3000:]


def test_read_events_can_be_pickled(kafka: str, unique: str) -> None:
    """Issue 33, item 9: a notebook's events go through pickle (multiprocessing, a cache) and come back whole."""
    events = [
        testing.make_event(hw.CreateTableEvent, "sales", "orders"),
        testing.make_event(hw.DropTableEvent, "sales", "returns"),
    ]
    assert testing.produce(kafka, unique, [*events, b"not json"]) == 3
    read = hw.read_events(bootstrap_servers=kafka, topic=unique, progress=False)
    assert len(read) == 2 and len(read.failures) == 1
    back = pickle.loads(pickle.dumps(read))
    assert type(back) is type(read)
    assert [(e.event_type, e.qualified_name, e.origin) for e in back] == [
        (e.event_type, e.qualified_name, e.origin) for e in read
    ]
    assert [e.table.sd.location for e in back] == [e.table.sd.location for e in read]
    assert back.failures == read.failures
