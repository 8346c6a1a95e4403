#!/usr/bin/python3
"""Compares measured runs (run_experiment results) and predicted ones (every point of a simulate
result) side by side: a table on stdout and a figure of the epoch-time breakdown and the bytes each
rank sends per epoch, by kind."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import style  # noqa: E402

PARTS = ["sampling", "copy", "compute", "communication", "waiting"]
KINDS = ["structure", "features", "activations", "gradients", "weights"]


def simulated_points(result):
    runs = []
    for point in result["points"]:
        outcome = point["result"]
        if outcome["out_of_memory"]:
            print(f"{point['point']}: out of memory ({outcome['out_of_memory_reason']})")
            continue
        ranks = outcome["ranks"]
        runs.append({
            "label": point["config"]["distribution"]["strategy"] + " (simulated)",
            "ranks": point["num_ranks"],
            "epoch_seconds": outcome["epoch_seconds"],
            "breakdown": dict(outcome["breakdown_mean_seconds"]),
            "bytes": {k: sum(r["bytes_sent_per_epoch"][k] for r in ranks) / len(ranks)
                      for k in KINDS},
            "bytes_match": None,
            "accuracy": None,
        })
    return runs


def load(path):
    try:
        with open(path) as f:
            result = json.load(f)
        if "points" in result:
            return simulated_points(result)
        return [{
            "label": result["config"]["distribution"]["strategy"] + " (measured)",
            "ranks": result["num_ranks"],
            "epoch_seconds": result["epoch_seconds"],
            "breakdown": {p: sum(e["breakdown_mean_seconds"][p] for e in result["epochs"])
                          / len(result["epochs"]) for p in PARTS},
            "bytes": {k: sum(r["bytes_sent"][k] for r in result["ranks"])
                      / len(result["ranks"]) / len(result["epochs"]) for k in KINDS},
            "bytes_match": result["bytes_match_plans"],
            "accuracy": result.get("test_accuracy"),
        }]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"compare_runs: {path}: cannot read a run_experiment or simulate result: {error}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", nargs="+",
                        help="JSON files written by run_experiment or simulate")
    parser.add_argument("--output", required=True, help="figure path without extension")
    args = parser.parse_args()
    runs = [run for path in args.results for run in load(path)]

    print(f"{'strategy':<22} {'ranks':>5} {'epoch s':>9} " + " ".join(f"{p:>13}" for p in PARTS)
          + " " + " ".join(f"{k + ' MB':>15}" for k in KINDS) + "  test acc  bytes = plans")
    for run in runs:
        accuracy = f"{100 * run['accuracy']:7.1f} %" if run["accuracy"] is not None else "      -  "
        match = {True: "yes", False: "NO", None: "-"}[run["bytes_match"]]
        print(f"{run['label']:<22} {run['ranks']:>5} {run['epoch_seconds']:>9.4f} "
              + " ".join(f"{run['breakdown'][p]:>13.4f}" for p in PARTS) + " "
              + " ".join(f"{run['bytes'][k] / 1e6:>15.3f}" for k in KINDS)
              + f"  {accuracy}  {match}")

    fig, (time_axis, bytes_axis) = style.figure(3.4 + 0.9 * len(runs), 2.8, ncols=2)
    labels = [f"{run['label'].replace(' (', chr(10) + '(')}\n{run['ranks']} ranks" for run in runs]
    bottoms = [0.0] * len(runs)
    for part in PARTS:
        values = [1e3 * run["breakdown"][part] for run in runs]
        time_axis.bar(labels, values, bottom=bottoms, label=part)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    time_axis.set_ylabel("time per epoch and rank (ms)")
    time_axis.set_title("epoch time, by part (mean over ranks)")
    time_axis.legend(fontsize=7)
    bottoms = [0.0] * len(runs)
    for kind in KINDS:
        values = [run["bytes"][kind] / 1e6 for run in runs]
        bytes_axis.bar(labels, values, bottom=bottoms, label=kind)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    bytes_axis.set_ylabel("MB sent per epoch and rank")
    bytes_axis.set_title("traffic, by kind (transport count or plan)")
    bytes_axis.legend(fontsize=7)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    for path in style.save(fig, args.output):
        print(f"figure written to {path}")


if __name__ == "__main__":
    main()
