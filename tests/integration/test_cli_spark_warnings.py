"""Issue 33, item 9: PySpark's pandas FutureWarning is not what a user sees from ``to_spark`` (pandas is pinned
below 3 with the spark extra, as PySpark 4 asks)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
