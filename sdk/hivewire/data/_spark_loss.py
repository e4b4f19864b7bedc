"""Records the broker deleted before a Spark query read them: found when the query is planned (offsets to read
below the first one the broker holds) and when an executor reads a range (deleted in between), and reported.

Invariants: nothing deleted is skipped in silence; each report names exact ranges per partition, ``[first,
last]`` and the count, and is either the query's failure (``failOnDataLoss``, the default) or one WARNING line,
after which the rest is read. A range read resuming past its start is reported only for what
:func:`hivewire.runtime._deleted.deleted_range` finds deleted: a skip over transaction markers or a compacted
hole is no loss.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from hivewire.data._offsets import MissingRange
from hivewire.data._spark_options import SourceOptions
from hivewire.data._spark_plan import KafkaRange, Watermarks
from hivewire.errors import HivewireError
from hivewire.runtime._deleted import deleted_range

log = logging.getLogger("hivewire.spark")


def ranges_text(topic: str, lost: Mapping[int, tuple[int, int]]) -> str:
    """``topic/0 offsets 10-19 (10 records), ...`` for {partition: (first, last)}."""
    return ", ".join(str(MissingRange(topic, p, a, b)) for p, (a, b) in sorted(lost.items()))


def report_loss(options: SourceOptions, lost: Mapping[int, tuple[int, int]], when: str) -> None:
    """Raise (failOnDataLoss) or warn, once, about {partition: (first, last)} missing offsets."""
    if not lost:
        return
    detail = ranges_text(options.topic, lost)
    if options.fail_on_data_loss:
        raise HivewireError(
            f"records to read were deleted by the broker (retention) {when}: {detail}. Lengthen the topic's "
            'retention.ms or read sooner; .option("failOnDataLoss", "false") reads what remains'
        )
    log.warning(
        "records lost to retention %s, skipped (failOnDataLoss=false): %s; their events are not in the result",
        when,
        detail,
    )


def check_planned(options: SourceOptions, starts: dict[int, int], marks: Watermarks) -> None:
    """Driver side: offsets to read below the first one the broker holds: the exact range per partition, reported."""
    lost = {p: (start, marks[p][0] - 1) for p, start in starts.items() if p in marks and start < marks[p][0]}
    report_loss(options, lost, "before this query read them")


def check_resumed(options: SourceOptions, consumer: Any, part: KafkaRange, resumed: int) -> None:
    """Executor side: reading ``part`` resumed at ``resumed`` > its start; report the deleted start, if any."""
    from confluent_kafka import TopicPartition

    def first_retained() -> int:
        low, _high = consumer.get_watermark_offsets(
            TopicPartition(part.topic, part.partition), timeout=options.timeout, cached=False
        )
        return int(low)

    deleted = deleted_range(part.start, resumed, first_retained, part.end)
    if deleted is not None:
        report_loss(options, {part.partition: deleted}, "after this query was planned")
