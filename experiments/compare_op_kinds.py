"""Where a prediction misses, op kind by op kind: reads a run_experiment result (its
"ops_by_kind": per op kind, the ops' count, work and measured seconds per epoch) and a cost model
(a calibration file's "cost_model", or a cluster preset's device "cost_model"), and prints per op
kind the measured seconds per epoch beside what the cost model gives for the same ops and work.

Communication ops are not costed by the cost model (the simulator moves their bytes); they are
listed with their measured time only. A run's per-kind work does not say which of the rows its ops
read where indices point miss the caches (that depends on each op's table), so the cache misses
are left out here: for kinds that read such rows from large tables (layers, row gathers) this
prints less than the simulator charges.

  compare_op_kinds.py RESULT.json CALIBRATION.json [--csv OUT.csv] [--evaluation]

--evaluation reads the last evaluation's ops ("evaluation_ops_by_kind") instead of training's.
"""
import argparse
import csv
import json
import sys

RATES = {"dense_flops": "dense_flops_per_second", "sparse_flops": "sparse_flops_per_second",
         "memory_bytes": "memory_bytes_per_second", "sampled_edges": "sampled_edges_per_second"}


def cost_model_of(document, path):
    if "cost_model" in document:
        return document["cost_model"]
    sys.exit(f"{path}: no \"cost_model\" field (expected a calibration file)")


def modelled_seconds(cost, count, work):
    """The cost model's time for `count` ops doing `work` in all: it is linear in both."""
    seconds = count * cost.get("fixed_seconds", 0.0)
    for work_name, rate_name in RATES.items():
        amount = work.get(work_name, 0.0)
        if amount == 0:
            continue
        rate = cost.get(rate_name, 0.0)
        if rate <= 0:
            return None  # work the model has no rate for: undefined, as in CostModel::seconds
        seconds += amount / rate
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("result")
    parser.add_argument("calibration")
    parser.add_argument("--csv", help="also write the rows here")
    parser.add_argument("--evaluation", action="store_true",
                        help="the last evaluation's ops instead of a training epoch's")
    args = parser.parse_args()

    result = json.load(open(args.result))
    field = "evaluation_ops_by_kind" if args.evaluation else "ops_by_kind"
    if field not in result:
        sys.exit(f"{args.result}: no \"{field}\" field (a run_experiment result of a "
                 "distributed run" + (" that evaluated" if args.evaluation else "") +
                 " is expected)")
    kinds = result[field]["kinds"]
    model = cost_model_of(json.load(open(args.calibration)), args.calibration)

    rows = []
    for kind, entry in kinds.items():
        measured = entry["seconds_per_epoch"]["mean"]
        waiting = entry["waiting_seconds_per_epoch"]["mean"]
        modelled = None
        if kind in model:
            modelled = modelled_seconds(model[kind], entry["count_per_epoch"],
                                        entry["work_per_epoch"])
        rows.append({"op_kind": kind, "count_per_epoch": entry["count_per_epoch"],
                     "measured_seconds_per_epoch": measured,
                     "measured_waiting_seconds_per_epoch": waiting,
                     "modelled_seconds_per_epoch": modelled})

    rows.sort(key=lambda r: -r["measured_seconds_per_epoch"])
    print(f"{'op kind':<22}{'count':>8}{'measured s':>12}{'modelled s':>12}{'ratio':>8}")
    measured_total = modelled_total = 0.0
    for r in rows:
        modelled = r["modelled_seconds_per_epoch"]
        ratio = f"{r['measured_seconds_per_epoch'] / modelled:8.2f}" if modelled else f"{'-':>8}"
        shown = f"{modelled:12.4f}" if modelled is not None else f"{'(comm)':>12}"
        print(f"{r['op_kind']:<22}{r['count_per_epoch']:8.1f}"
              f"{r['measured_seconds_per_epoch']:12.4f}{shown}{ratio}")
        if modelled is not None:
            measured_total += r["measured_seconds_per_epoch"]
            modelled_total += modelled
    if modelled_total > 0:
        print(f"{'costed ops':<30}{measured_total:12.4f}{modelled_total:12.4f}"
              f"{measured_total / modelled_total:8.2f}")
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
