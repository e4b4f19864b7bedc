"""Stacked bars over time as an inline SVG: the one picture the notebook helpers draw (:func:`timeline_svg`,
events over time by type).

:func:`stacked_bars` takes values already bucketed (one :class:`~collections.Counter` per time bucket, keyed by
what is stacked) and draws one bar per bucket, one colour per key (a colour-blind-safe palette, in the order
the keys are given), with the first and last time under it and a legend after it. No plotting library: a
notebook renders the markup as it is.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timezone

from hivewire.events._model import ListenerEvent

#: The colours of the stacked keys, in order (the Okabe-Ito palette, safe for colour-blind readers).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def stacked_bars(
    buckets: list[Counter[str]],
    keys: list[str],
    *,
    first: str,
    last: str,
    unit: str,
    css_class: str,
    label: str,
    width: int,
    height: int,
) -> str:
    """The SVG (and its legend) of ``buckets``; each bar's parts say ``<key>: <count> <unit>`` on hover."""
    colour = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(keys)}
    tallest = max(max((sum(b.values()) for b in buckets), default=0), 1)
    plot, bar = height - 20, width / max(len(buckets), 1)
    shapes = []
    for i, bucket in enumerate(buckets):
        y = float(plot)
        for key in keys:
            n = bucket.get(key, 0)
            if n:
                h = n * plot / tallest
                y -= h
                shapes.append(
                    f"<rect x='{i * bar:.1f}' y='{y:.1f}' width='{bar - 1:.1f}' height='{h:.1f}' "
                    f"fill='{colour[key]}'><title>{html.escape(key)}: {n:,}{' ' + unit if unit else ''}</title></rect>"
                )
    labels = (
        f"<text x='0' y='{height - 4}' font-size='10'>{html.escape(first)}</text>"
        f"<text x='{width}' y='{height - 4}' font-size='10' text-anchor='end'>{html.escape(last)}</text>"
        f"<text x='{width}' y='10' font-size='10' text-anchor='end'>max {tallest:,}"
        f"{' ' + unit if unit else ''} per bar</text>"
    )
    legend = " ".join(f"<span style='color:{colour[k]}'>&#9632;</span>&nbsp;{html.escape(k)}" for k in keys)
    return (
        f"<svg class='{css_class}' width='{width}' height='{height}' role='img' "
        f"aria-label='{html.escape(label)}'>{''.join(shapes)}{labels}</svg><p>{legend}</p>"
    )


_BUCKETS = 40


def timeline_svg(events: Iterable[ListenerEvent], width: int = 600, height: int = 120) -> str:
    """Events over time by type: an inline SVG of stacked bars (one per time bucket), with a legend. Empty
    when fewer than two events carry a Kafka timestamp."""
    stamped = [(e.origin.timestamp, e.event_type.value) for e in events if e.origin and e.origin.timestamp]
    if len(stamped) < 2:
        return ""
    first, last = min(t for t, _ in stamped), max(t for t, _ in stamped)
    span = max(last - first, 1)
    buckets: list[Counter[str]] = [Counter() for _ in range(_BUCKETS)]
    for ms, kind in stamped:
        buckets[min((ms - first) * _BUCKETS // span, _BUCKETS - 1)][kind] += 1
    kinds = [k for k, _ in Counter(kind for _, kind in stamped).most_common()]
    return stacked_bars(
        buckets,
        kinds,
        first=utc_text(first),
        last=utc_text(last),
        unit="",
        css_class="hivewire-timeline",
        label="events over time by type",
        width=width,
        height=height,
    )


def utc_text(ms: int) -> str:
    """``2026-11-29 09:43:33.123``: a Kafka timestamp (milliseconds since the epoch, UTC) as shown."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
