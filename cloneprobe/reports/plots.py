"""Small inline SVG plots for the HTML report (no external assets, no plotting library):
score distributions as strip plots, paired scores as a scatter against the diagonal, ROC
curves. Every label passes through the HTML escaper."""

from __future__ import annotations

import math
from collections.abc import Sequence

from cloneprobe.reports.safe_text import html_text as escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def axis_ticks(low: float, high: float) -> list[float]:
    """About five round values spanning [low, high]."""
    if high <= low:
        return [low]
    step = 10 ** math.floor(math.log10((high - low) / 4))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 6:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step) + 1)]


def _span(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if high == low:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.05
    return low - pad, high + pad


LABELLED = 3
"""Points named beside each series of a strip plot (the highest: the most memorization-like)
and on a scatter (the farthest from the diagonal); every point names itself on hover."""
NAMES_WIDTH = 330
"""Room right of a strip plot for the names of each row's highest points."""


def _point(cx: float, cy: float, r: float, colour: str, name: str | None, value: float) -> str:
    """A dot; with a name, a hover title (the plots write the names they label themselves)."""
    if name is None:
        return (f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{colour}" '
                'fill-opacity="0.6"/>')  # fmt: skip
    return (f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{colour}" fill-opacity="0.6">'
            f"<title>{escape(name)}: {value:.4g}</title></circle>")  # fmt: skip


def strip_plot(title: str, rows: Sequence[tuple[str, Sequence[float]]], axis: str,
               width: int = 640, colours: Sequence[str] | None = None,
               names: Sequence[Sequence[str]] | None = None) -> str:  # fmt: skip
    """One row per labelled series: a dot per value (spread vertically by rank, so equal
    values stay visible) and a bar at the median. `colours`: one per row (default: cycled).
    `names`: per row, one name per value (a task id): each dot names itself on hover and the
    highest few are named on the plot."""
    named = [(label, [(v, (names[number][i] if names is not None else None))
                      for i, v in enumerate(values) if math.isfinite(v)])
             for number, (label, values) in enumerate(rows)]  # fmt: skip
    shown = [(label, [v for v, _ in points]) for label, points in named]
    every = [v for _, values in shown for v in values]
    if not every:
        return ""
    low, high = _span(every)
    label_width, row_height, top = 190, 26, 26
    left, right = label_width, width - 15
    if names is not None:
        width += NAMES_WIDTH
    height = top + row_height * len(shown) + 34

    def x(value: float) -> float:
        return left + (value - low) / (high - low) * (right - left)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="16" font-size="12" font-weight="bold">{escape(title)}</text>',
    ]
    bottom = top + row_height * len(shown)
    for tick in axis_ticks(low, high):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{bottom}" '
                     'stroke="#eee"/>')  # fmt: skip
        parts.append(f'<text x="{x(tick):.1f}" y="{bottom + 13}" font-size="10" '
                     f'text-anchor="middle">{tick:g}</text>')  # fmt: skip
    parts.append(f'<text class="axis" x="{(left + right) / 2:.1f}" y="{bottom + 28}" '
                 f'font-size="11" text-anchor="middle">{escape(axis)}</text>')  # fmt: skip
    parts.append(f'<g class="legend"><line x1="{right + 12}" y1="{bottom + 14}" '
                 f'x2="{right + 12}" y2="{bottom + 26}" stroke="#000" stroke-width="2"/>'
                 f'<text x="{right + 18}" y="{bottom + 24}" font-size="10" fill="#666">median'
                 + (", each dot a task (named on hover)" if names is not None else "")
                 + "</text></g>")  # fmt: skip
    for number, (label, values) in enumerate(shown):
        colour = colours[number] if colours else COLOURS[number % len(COLOURS)]
        middle = top + row_height * number + row_height / 2
        parts.append(f'<text x="{label_width - 6}" y="{middle + 4:.1f}" font-size="11" '
                     f'text-anchor="end">{escape(label)} ({len(values)})</text>')  # fmt: skip
        points = sorted(named[number][1], key=lambda point: point[0])
        for rank, (value, name) in enumerate(points):
            offset = ((rank * 7) % 15 - 7) * 0.8
            parts.append(_point(x(value), middle + offset, 2.5, colour, name, value))
        highest = [name for _, name in reversed(points[-LABELLED:]) if name is not None]
        if highest:  # named beside the row, outside the plot, so that no label covers a dot
            parts.append(f'<text x="{right + 12}" y="{middle + 4:.1f}" font-size="10" '
                         f'fill="#444">highest: {escape(", ".join(highest))}</text>')  # fmt: skip
        if values:
            ordered = sorted(values)
            median = (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2
            parts.append(f'<line x1="{x(median):.1f}" y1="{middle - 10:.1f}" '
                         f'x2="{x(median):.1f}" y2="{middle + 10:.1f}" stroke="#000" '
                         'stroke-width="2"/>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def scatter_plot(title: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
                 x_axis: str, y_axis: str, size: int = 320, legend: int = 200,
                 names: Sequence[Sequence[str]] | None = None) -> str:  # fmt: skip
    """Paired values (one point per task) against the diagonal y = x. `names`: per series,
    one name per point (a task id): each point names itself on hover, and the points farthest
    from the diagonal are named on the plot."""
    points = [p for _, pairs in series for p in pairs
              if math.isfinite(p[0]) and math.isfinite(p[1])]  # fmt: skip
    if not points:
        return ""
    low, high = _span([v for p in points for v in p])
    edge, far = 40, size - 30

    def at(value: float) -> float:
        return edge + (value - low) / (high - low) * (far - edge)

    def flip(value: float) -> float:
        return size - at(value)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + legend}" height="{size}" '
        f'viewBox="0 0 {size + legend} {size}" role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="14" font-size="12" font-weight="bold">{escape(title)}</text>',
        f'<rect x="{edge}" y="{size - far}" width="{far - edge}" height="{far - edge}" '
        'fill="none" stroke="#333"/>',
        f'<line x1="{at(low):.1f}" y1="{flip(low):.1f}" x2="{at(high):.1f}" '
        f'y2="{flip(high):.1f}" stroke="#bbb" stroke-dasharray="4"/>',
        f'<text class="axis" x="{(edge + far) / 2:.1f}" y="{size - 6}" font-size="11" '
        f'text-anchor="middle">{escape(x_axis)}</text>',
        f'<text class="axis" x="11" y="{size / 2:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 11 {size / 2:.1f})">{escape(y_axis)}</text>',
    ]
    for tick in axis_ticks(low, high):
        parts.append(f'<text x="{at(tick):.1f}" y="{size - 18}" font-size="9" '
                     f'text-anchor="middle">{tick:g}</text>')  # fmt: skip
        parts.append(f'<text x="{edge - 3}" y="{flip(tick) + 3:.1f}" font-size="9" '
                     f'text-anchor="end">{tick:g}</text>')  # fmt: skip
    spots: dict[tuple[int, int], list[str]] = {}
    """Labelled tasks by where their dot is: tasks on one spot share one label, so that no
    two names are written over each other."""
    for number, (label, pairs) in enumerate(series):
        colour = COLOURS[number % len(COLOURS)]
        far_off = sorted(range(len(pairs)), key=lambda i: -abs(pairs[i][0] - pairs[i][1]))
        labelled = set(far_off[:LABELLED])
        for index, (a, b) in enumerate(pairs):
            if math.isfinite(a) and math.isfinite(b):
                name = names[number][index] if names is not None else None
                parts.append(_point(at(a), flip(b), 3, colour, name, b))
                if name is not None and index in labelled:
                    spot = spots.setdefault((round(at(a)), round(flip(b))), [])
                    if name not in spot:
                        spot.append(name)
        parts.append(f'<text x="{size + 15}" y="{size - far + 13 * number + 8}" font-size="11" '
                     f'fill="{colour}">{escape(label)} ({len(pairs)})</text>')  # fmt: skip
    for (cx, cy), tasks in spots.items():
        shown = ", ".join(tasks[:LABELLED]) + (f" +{len(tasks) - LABELLED}"
                                               if len(tasks) > LABELLED else "")  # fmt: skip
        x, anchor = (cx - 5, "end") if cx > far - 60 else (cx + 5, "start")
        parts.append(f'<text class="task" x="{x}" y="{cy - 5}" font-size="9" fill="#444" '
                     f'text-anchor="{anchor}">{escape(shown)}</text>')  # fmt: skip
    key = size - far + 13 * len(series) + 14
    parts.append(f'<g class="legend"><line x1="{size + 15}" y1="{key - 4}" x2="{size + 39}" '
                 f'y2="{key - 4}" stroke="#bbb" stroke-dasharray="4"/><text x="{size + 45}" '
                 f'y="{key}" font-size="10" fill="#666">y = x: the same under both</text>'
                 f'<text x="{size + 15}" y="{key + 14}" font-size="10" fill="#666">'
                 "each dot a task, named on hover</text></g>")  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def roc_plot(title: str, curves: Sequence[tuple[str, float, Sequence[Sequence[float]]]],
             size: int = 300, legend: int = 250) -> str:  # fmt: skip
    """ROC curves (label, AUROC, points (fpr, tpr)) in one square plot, chance dashed."""
    low, high = 30, size - 30

    def x(fpr: float) -> float:
        return low + fpr * (high - low)

    def y(tpr: float) -> float:
        return high - tpr * (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + legend}" height="{size}" '
        f'viewBox="0 0 {size + legend} {size}" role="img" '
        f'aria-label="ROC curves: {escape(title)}">',
        f'<rect x="{low}" y="{low}" width="{high - low}" height="{high - low}" fill="none" '
        'stroke="#333"/>',
        f'<line x1="{low}" y1="{high}" x2="{high}" y2="{low}" stroke="#bbb" stroke-dasharray="4"/>',
        f'<text x="{size / 2}" y="{size - 8}" text-anchor="middle" font-size="11">false '
        "positive rate (held-out tasks flagged)</text>",
        f'<text x="12" y="{size / 2}" font-size="11" transform="rotate(-90 12 {size / 2})" '
        'text-anchor="middle">true positive rate</text>',
        f'<text x="{low}" y="18" font-size="12">{escape(title)}</text>',
    ]
    for number, (label, auroc, points) in enumerate(curves):
        colour = COLOURS[number % len(COLOURS)]
        dash = "" if number < len(COLOURS) else ' stroke-dasharray="3"'
        path = " ".join(f"{x(f):.1f},{y(t):.1f}" for f, t in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="1.5"{dash}/>')  # fmt: skip
        parts.append(f'<text x="{size + 5}" y="{low + 13 * number + 8}" font-size="11" '
                     f'fill="{colour}">{escape(label)} {auroc:.2f}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)
