"""Joins the measured runs of validate_emulated_cluster.sh (runs.tsv, runs/*.json) with the
simulator's predictions (simulate.json) into validation.csv and validation.json (with provenance),
and prints the table with the median and worst absolute relative error."""
import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import datetime, timezone

PARTS = ["sampling", "copy", "compute", "communication", "waiting"]


def git(root, *args):
    try:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def link_check(calibration_path):
    """What calibrate measured through a shaped link: the largest ping-pong message's throughput
    (the fitted bandwidth is skewed by tbf's burst, which sends small messages at line speed) and
    the fitted latency."""
    document = json.load(open(calibration_path))
    largest = max(document["fits"]["network"]["ping_pong"]["samples"], key=lambda s: s["bytes"])
    return {"largest_message_bytes": largest["bytes"],
            "largest_message_gbps": 8 * largest["bytes"] / largest["measured_seconds"] / 1e9,
            "fitted_gbps": 8 * document["network"]["bandwidth_bytes_per_second"] / 1e9,
            "latency_seconds": document["network"]["latency_seconds"]}


def predictions(simulate_path):
    """(rate, hidden, ranks, strategy) -> the simulated point's result."""
    points = {}
    document = json.load(open(simulate_path))
    for point in document["points"]:
        a = point["assignments"]
        # Ranks, not machines: a machine may hold several (--ranks-per-machine).
        key = (float(a["cluster.nic.bandwidth_gbps"]), int(a["model.hidden"]),
               int(point["num_ranks"]), a["distribution.strategy"])
        points[key] = point["result"]
    return document, points


def probed_predictions(output):
    """(rate, hidden, ranks, strategy) -> the prediction at the speed probed around that run
    (probed/*.json, one simulated point each), when the validation probed."""
    points = {}
    directory = os.path.join(output, "probed")
    if os.path.isdir(directory):
        for name in sorted(os.listdir(directory)):
            if name.endswith(".json"):
                points.update(predictions(os.path.join(directory, name))[1])
    return points


def measured_bytes_sent_per_rank(run):
    """Mean over ranks of the bytes each sent per epoch (all traffic kinds)."""
    epochs = len(run["epochs"])
    totals = []
    for rank in run["ranks"]:
        sent = rank["bytes_sent"]
        if isinstance(sent, dict):
            # Per traffic kind, with their sum under "total": not to be counted twice.
            totals.append(sent["total"] if "total" in sent else sum(sent.values()))
        else:
            totals.append(sum(sent))
    return statistics.mean(totals) / epochs


def median_epoch(run):
    """The measured epoch (after the warm-up) of median time, breakdown and all: on a shared
    virtual machine an epoch now and then stretches by a fifth, and the median ignores it."""
    warmup = run["config"]["training"].get("warmup_epochs", 1)
    measured = run["epochs"][warmup:] or run["epochs"]
    ordered = sorted(measured, key=lambda epoch: epoch["seconds"])
    return ordered[(len(ordered) - 1) // 2]


def rows(output, points, probed_points):
    table = []
    with open(os.path.join(output, "runs.tsv")) as manifest:
        for entry in csv.DictReader(manifest, delimiter="\t"):
            key = (float(entry["rate_gbps"]), int(entry["hidden"]), int(entry["ranks"]),
                   entry["strategy"])
            row = {"strategy": key[3], "ranks": key[2], "hidden": key[1], "rate_gbps": key[0],
                   "exit_code": int(entry["exit_code"]),
                   "load_average_before": float(entry["load_average_before"]),
                   "result": entry["result"]}
            if entry.get("compute_time_ratio"):
                row["compute_time_ratio"] = float(entry["compute_time_ratio"])
            for prefix, source in (("predicted", points), ("probed_predicted", probed_points)):
                predicted = source.get(key)
                if predicted is not None and not predicted["out_of_memory"]:
                    row[f"{prefix}_epoch_seconds"] = predicted["epoch_seconds"]
                    if "evaluation" in predicted:
                        row[f"{prefix}_evaluation_seconds"] = predicted["evaluation"]["seconds"]
                    for part in PARTS:
                        row[f"{prefix}_{part}_seconds"] = predicted["breakdown_mean_seconds"][part]
            path = os.path.join(output, entry["result"])
            if row["exit_code"] == 0 and os.path.exists(path):
                run = json.load(open(path))
                typical = median_epoch(run)
                row["measured_epoch_seconds"] = typical["seconds"]
                for part in PARTS:
                    row[f"measured_{part}_seconds"] = typical["breakdown_mean_seconds"][part]
                row["measured_mb_sent_per_rank"] = measured_bytes_sent_per_rank(run) / 1e6
                result = run.get("result", run)
                if "evaluation_seconds" in result:
                    row["measured_evaluation_seconds"] = result["evaluation_seconds"]
            if "measured_epoch_seconds" in row:
                for prefix, error in (("predicted", "relative_error"),
                                      ("probed_predicted", "probed_relative_error")):
                    if f"{prefix}_epoch_seconds" in row:
                        row[error] = (row[f"{prefix}_epoch_seconds"] /
                                      row["measured_epoch_seconds"] - 1)
                    if (f"{prefix}_evaluation_seconds" in row and
                            "measured_evaluation_seconds" in row):
                        row[f"{prefix}_evaluation_error"] = (
                            row[f"{prefix}_evaluation_seconds"] /
                            row["measured_evaluation_seconds"] - 1)
            table.append(row)
    return table


def print_table(table):
    print(f"{'strategy':9} {'ranks':>5} {'hidden':>6} {'Gbit/s':>6} {'measured s':>10} "
          f"{'predicted s':>11} {'error':>7}  {'meas comm':>9} {'pred comm':>9} {'load':>5} "
          f"{'speed':>6} {'probed s':>9} {'error':>7}")
    for r in table:
        def cell(field, width, fmt="{:.3f}"):
            return (fmt.format(r[field]) if field in r else "-").rjust(width)
        print(f"{r['strategy']:9} {r['ranks']:5d} {r['hidden']:6d} {r['rate_gbps']:6g} "
              f"{cell('measured_epoch_seconds', 10)} {cell('predicted_epoch_seconds', 11)} "
              f"{cell('relative_error', 7, '{:+.0%}')}  "
              f"{cell('measured_communication_seconds', 9)} "
              f"{cell('predicted_communication_seconds', 9)} "
              f"{r['load_average_before']:5.1f} {cell('compute_time_ratio', 6, '{:.2f}')} "
              f"{cell('probed_predicted_epoch_seconds', 9)} "
              f"{cell('probed_relative_error', 7, '{:+.0%}')}")
    for field, what in (("relative_error", "the calibration's speed"),
                        ("probed_relative_error", "the speed probed around each run")):
        errors = [abs(r[field]) for r in table if field in r]
        if errors:
            print(f"absolute relative error over {len(errors)} configurations at {what}: "
                  f"median {statistics.median(errors):.0%}, worst {max(errors):.0%}")
    evaluated = [r for r in table if "predicted_evaluation_error" in r]
    if evaluated:
        print("evaluation (after the last epoch): measured s, predicted s, error")
        for r in evaluated:
            print(f"  {r['strategy']:9} {r['ranks']:2d} ranks h{r['hidden']:<4d} {r['rate_gbps']:g} "
                  f"Gbit/s  {r['measured_evaluation_seconds']:.3f}  "
                  f"{r['predicted_evaluation_seconds']:.3f}  {r['predicted_evaluation_error']:+.0%}")
        errors = [abs(r["predicted_evaluation_error"]) for r in evaluated]
        print(f"evaluation: median {statistics.median(errors):.0%}, worst {max(errors):.0%}")
    failed = [r for r in table if "measured_epoch_seconds" not in r]
    if failed:
        print(f"{len(failed)} configuration(s) without a measurement (see logs/)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", help="validate_emulated_cluster's directory")
    parser.add_argument("--link", help="print the link check of one calibrate result and stop")
    parser.add_argument("--command", default="", help="the validation command line")
    parser.add_argument("--calibration", default="", help="the simulator's calibration file")
    args = parser.parse_args()
    if args.link:
        link = link_check(args.link)
        print(f"  MPI ping-pong, {link['largest_message_bytes'] / 2**20:g} MiB messages: "
              f"{link['largest_message_gbps']:.2f} Gbit/s; latency "
              f"{1e6 * link['latency_seconds']:.0f} us")
        return 0
    if not args.output:
        parser.error("--output is required")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    simulation, points = predictions(os.path.join(args.output, "simulate.json"))
    table = rows(args.output, points, probed_predictions(args.output))
    columns = []
    for r in table:
        columns += [c for c in r if c not in columns]
    with open(os.path.join(args.output, "validation.csv.tmp"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(table)
    os.replace(os.path.join(args.output, "validation.csv.tmp"),
               os.path.join(args.output, "validation.csv"))
    links = {}
    exchanges = {}
    for name in sorted(os.listdir(args.output)):
        if not name.endswith("gbps.json"):
            continue
        path = os.path.join(args.output, name)
        if name.startswith("link-exchange-"):
            exchanges[name[len("link-exchange-"):-len("gbps.json")]] = json.load(open(path))["results"]
        elif name.startswith("link-"):
            links[name[len("link-"):-len("gbps.json")]] = link_check(path)
    document = {
        "provenance": {
            "command": args.command,
            "git_revision": git(root, "rev-parse", "HEAD"),
            "git_dirty": git(root, "status", "--porcelain", "--untracked-files=no") != "",
            "host": platform.node(),
            "cpus": os.cpu_count(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "simulate": simulation["provenance"],
            "simgrid_version": simulation.get("simgrid_version"),
        },
        "calibration": args.calibration,
        "link_checks": links,
        "link_exchanges": exchanges,
        "rows": table,
    }
    with open(os.path.join(args.output, "validation.json.tmp"), "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    os.replace(os.path.join(args.output, "validation.json.tmp"),
               os.path.join(args.output, "validation.json"))
    print_table(table)
    print(f"table: {args.output}/validation.csv, {args.output}/validation.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
