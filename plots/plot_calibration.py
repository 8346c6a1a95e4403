#!/usr/bin/python3
"""The fit of a calibration file (calibrate --output): measured against predicted time of every
sample, per op kind and for the network, as a figure; with --table, the residuals as a Markdown
table (the one in docs/calibration.md)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import style  # noqa: E402

RATES = [("dense_flops_per_second", 1e9), ("sparse_flops_per_second", 1e9),
         ("memory_bytes_per_second", 1e9), ("sampled_edges_per_second", 1e6)]
UNRESOLVED = 1.7976931348623157e308


def rate_text(cost, key, unit):
    rate = cost.get(key, 0)
    if rate == 0:
        return "-"
    return "free" if rate >= UNRESOLVED else f"{rate / unit:.3g}"


def markdown_table(calibration):
    lines = ["| op kind | samples | fixed (µs) | dense GFLOP/s | sparse GFLOP/s | memory GB/s "
             "| Medges/s | median abs. residual | max abs. residual |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind, fit in calibration["fits"].items():
        if kind == "network":
            continue
        cost = fit["cost"]
        rates = " | ".join(rate_text(cost, key, unit) for key, unit in RATES)
        lines.append(f"| `{kind}` | {len(fit['samples'])} | {1e6 * cost['fixed_seconds']:.2f} | "
                     f"{rates} | {100 * fit['median_abs_relative_residual']:.1f} % | "
                     f"{100 * fit['max_abs_relative_residual']:.1f} % |")
    network = calibration["fits"].get("network")
    if network:
        lines += ["", "| transfer | bytes | measured (µs) | model (µs) | residual |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for sample in network["ping_pong"]["samples"]:
            lines.append(f"| ping-pong | {sample['bytes']:.0f} | "
                         f"{1e6 * sample['measured_seconds']:.2f} | "
                         f"{1e6 * sample['predicted_seconds']:.2f} | "
                         f"{100 * sample['relative_residual']:+.1f} % |")
        for row in network["collectives"]:
            steps = f"{row['steps']} step" + ("s" if row["steps"] != 1 else "")
            lines.append(f"| {row['collective']} ({steps}) | {row['payload_bytes']} | "
                         f"{1e6 * row['measured_seconds']:.2f} | "
                         f"{1e6 * row['predicted_seconds']:.2f} | "
                         f"{100 * row['relative_residual']:+.1f} % |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("calibration", help="JSON written by calibrate")
    parser.add_argument("--output", help="figure path without extension")
    parser.add_argument("--table", action="store_true", help="print the residuals as Markdown")
    args = parser.parse_args()
    try:
        with open(args.calibration) as f:
            calibration = json.load(f)
        fits = calibration["fits"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"plot_calibration: {args.calibration}: cannot read a calibration: {error}")
    if args.table:
        print(markdown_table(calibration))
    if not args.output:
        return

    panels = [(kind, fit["samples"]) for kind, fit in fits.items() if kind != "network"]
    if "network" in fits:
        panels.append(("network (ping-pong)", fits["network"]["ping_pong"]["samples"]))
    columns = 4
    rows = (len(panels) + columns - 1) // columns
    fig, axes = style.figure(7.0, 2.0 * rows, nrows=rows, ncols=columns, squeeze=False)
    for axis, (name, samples) in zip(axes.flat, panels):
        measured = [1e6 * s["measured_seconds"] for s in samples]
        predicted = [1e6 * s["predicted_seconds"] for s in samples]
        axis.loglog(measured, predicted, ".", markersize=3, color="tab:blue")
        low, high = min(measured + predicted), max(measured + predicted)
        axis.plot([low, high], [low, high], color="tab:gray", linewidth=0.8)
        axis.set_title(name)
    for axis in axes.flat[len(panels):]:
        axis.set_visible(False)
    for axis in axes[:, 0]:
        axis.set_ylabel("model (µs)")
    for axis in axes[-1, :]:
        axis.set_xlabel("measured (µs)")
    fig.tight_layout()
    for path in style.save(fig, args.output):
        print(path)


if __name__ == "__main__":
    main()
