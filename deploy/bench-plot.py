#!/usr/bin/env python3
"""Draws a `statebus bench --json` report as a PNG: throughput by number of views, and the
write->echo latency percentiles, for StateBus, raw libzmq and (with --peer qtro) Qt Remote
Objects, all from the one run the report holds.

    statebus bench --quick --peer qtro --json > bench.json
    deploy/bench-plot.py bench.json docs/bench.png

Needs matplotlib (python3 -m pip install matplotlib).
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: deploy/bench-plot.py REPORT.json OUT.png  (REPORT from `statebus bench --json`)")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench-plot: matplotlib is missing: python3 -m pip install matplotlib")
    try:
        report = json.load(open(sys.argv[1]))
    except (OSError, ValueError) as error:
        sys.exit(f"bench-plot: {sys.argv[1]} is not a statebus bench --json report: {error}")
    rows = {row["key"]: row for row in report.get("rows", []) if row.get("key")}
    series = [("StateBus", "statebus", "#1f77b4"), ("raw libzmq", "raw", "#7f7f7f"), ("Qt Remote Objects", "qtro", "#2ca02c")]

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    views = [n for n in (1, 3, 10) if f"throughput.int.{n}" in rows]
    if not views:
        sys.exit("bench-plot: the report has no Int throughput rows (run the throughput part)")
    width = 0.8 / len(series)
    for index, (label, field, colour) in enumerate(series):
        values = [(rows[f"throughput.int.{n}"].get(field) or 0) / 1e6 for n in views]
        if any(values):
            left.bar([i + index * width for i in range(len(views))], values, width, label=label, color=colour)
    left.set_xticks([i + width for i in range(len(views))], [f"{n} view{'s' if n > 1 else ''}" for n in views])
    left.set_ylabel("Int updates/s at the slowest view (millions)")
    left.set_title("Throughput by number of views")
    left.legend()

    percentiles = [(p, f"echo.own.{key}") for p, key in (("p50", "p50"), ("p99", "p99"), ("p99.9", "p999")) if f"echo.own.{key}" in rows]
    for index, (label, field, colour) in enumerate(series):
        values = [(rows[key].get(field) or 0) / 1e3 for _, key in percentiles]
        if any(values):
            right.bar([i + index * width for i in range(len(percentiles))], values, width, label=label, color=colour)
    right.set_xticks([i + width for i in range(len(percentiles))], [p for p, _ in percentiles])
    right.set_ylabel("write -> own confirmation (µs)")
    right.set_title("Round-trip latency distribution")
    right.legend()

    figure.suptitle(f"statebus bench ({report.get('configuration')}, {report.get('build')} build, {report.get('date')}); {report.get('machine')}", fontsize=9)
    figure.tight_layout()
    figure.savefig(sys.argv[2], dpi=110)
    print(f"bench-plot: wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
