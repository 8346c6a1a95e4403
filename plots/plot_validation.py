#!/usr/bin/python3
"""Predicted vs measured epoch time of validate_emulated_cluster.sh (validation.csv): one point
per configuration, colour by strategy, marker by rank count, filled for the largest hidden width,
with the y = x line and the +-20 % target band. Where the validation probed the machine's speed
around each run, a short black tick marks the prediction at that speed, joined to the point."""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import style  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

COLOURS = {"dgl-pull": "tab:blue", "p3": "tab:orange"}
MARKERS = ["o", "s", "^", "D", "v"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv", help="validation.csv")
    parser.add_argument("--output", required=True, help="figure stem (writes .png and .pdf)")
    args = parser.parse_args()
    with open(args.csv) as f:
        rows = [r for r in csv.DictReader(f)
                if r.get("measured_epoch_seconds") and r.get("predicted_epoch_seconds")]
    if not rows:
        print("plot_validation: no configuration has both a measurement and a prediction")
        return 1
    rank_counts = sorted({int(r["ranks"]) for r in rows})
    widest = max(int(r["hidden"]) for r in rows)
    fig, ax = style.figure(3.4, 3.0)
    seen = set()
    for r in rows:
        strategy, ranks, hidden = r["strategy"], int(r["ranks"]), int(r["hidden"])
        label = f"{strategy}, {ranks} ranks"
        ax.scatter(float(r["measured_epoch_seconds"]), float(r["predicted_epoch_seconds"]),
                   color=COLOURS.get(strategy, "tab:gray"),
                   marker=MARKERS[rank_counts.index(ranks) % len(MARKERS)],
                   facecolors=COLOURS.get(strategy, "tab:gray") if hidden == widest else "none",
                   s=22, label=None if label in seen else label)
        seen.add(label)
        if r.get("probed_predicted_epoch_seconds"):
            measured = float(r["measured_epoch_seconds"])
            probed = float(r["probed_predicted_epoch_seconds"])
            ax.plot([measured, measured], [float(r["predicted_epoch_seconds"]), probed],
                    color="gray", linewidth=0.6, zorder=1)
            ax.scatter(measured, probed, color="black", marker="_", s=30, linewidths=1.0,
                       label=None if "probed" in seen else "at the probed speed")
            seen.add("probed")
    values = [float(r[c]) for r in rows
              for c in ("measured_epoch_seconds", "predicted_epoch_seconds",
                        "probed_predicted_epoch_seconds") if r.get(c)]
    low, high = 0.8 * min(values), 1.25 * max(values)
    ax.plot([low, high], [low, high], color="black", linewidth=0.8)
    ax.fill_between([low, high], [0.8 * low, 0.8 * high], [1.2 * low, 1.2 * high],
                    color="gray", alpha=0.15, linewidth=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    # Plain numbers, and only 2, 3 and 5 between the decades: a log axis crowds its minor labels.
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    sparse = FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "235" else "")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(sparse)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("measured epoch time (s)")
    ax.set_ylabel("predicted epoch time (s)")
    ax.set_title(f"emulated cluster (filled: hidden {widest}; band: ±20 %)")
    ax.legend(loc="upper left")
    for path in style.save(fig, args.output):
        print(f"figure: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
