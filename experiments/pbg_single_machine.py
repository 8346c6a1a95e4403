#!/usr/bin/env python3
"""PyTorch-BigGraph-style training on one machine: epoch time, time in swaps, bytes swapped and
peak memory against the number of partitions, with every partition in memory and with the
partitions the bucket does not need swapped to disk (train_embeddings, docs/embeddings.md).

Usage: experiments/pbg_single_machine.py [--entities N] [--degree D] [--dimension D]
           [--epochs E] [--partitions 1,2,4,8] [--output DIR]
Prints a table; writes DIR/pbg_single_machine.csv and .json (with each run's command and result).
"""
import argparse
import csv
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(binary, args, output, swap):
    command = [str(binary), *args, "--quiet", "--output", str(output)]
    if swap is not None:
        command += ["--swap-dir", str(swap)]
    started = time.time()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    result = json.loads(output.read_text())
    if swap is not None:
        shutil.rmtree(swap, ignore_errors=True)
    return command, result, time.time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=500000)
    parser.add_argument("--degree", type=int, default=10)
    parser.add_argument("--dimension", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--partitions", default="1,2,4,8")
    parser.add_argument("--output", default=str(ROOT / "results" / "pbg_single_machine"))
    parser.add_argument("--build", default=os.environ.get("GNNBED_BUILD_DIR", str(ROOT / "build")))
    options = parser.parse_args()
    binary = pathlib.Path(options.build) / "exec" / "train_embeddings"
    if not binary.exists():
        sys.exit(f"pbg_single_machine: {binary} is not built (cmake --build build)")
    out = pathlib.Path(options.output)
    out.mkdir(parents=True, exist_ok=True)
    common = ["--dataset", "planted", "--entities", str(options.entities), "--degree",
              str(options.degree), "--dimension", str(options.dimension), "--epochs",
              str(options.epochs), "--test-fraction", "0.0005"]
    rows, runs = [], []
    partitions = [int(p) for p in options.partitions.split(",")]
    configs = [(p, store) for p in partitions for store in ("memory", "disk")
               if not (p == 1 and store == "disk")]
    for index, (p, store) in enumerate(configs, 1):
        print(f"pbg_single_machine: run {index}/{len(configs)}: {p} partitions, {store}",
              file=sys.stderr, flush=True)
        swap = out / f"swap-{p}" if store == "disk" else None
        command, result, wall = run(binary, [*common, "--partitions", str(p)],
                                    out / f"run-{p}-{store}.json", swap)
        epochs = result["epochs"]
        epoch_s = sum(e["seconds"] for e in epochs) / len(epochs)
        swap_s = sum(e["swap_seconds"] for e in epochs) / len(epochs)
        swap_mib = sum(e["swap_bytes"] for e in epochs) / len(epochs) / 2**20
        rows.append({"partitions": p, "store": store, "epoch_s": round(epoch_s, 3),
                     "swap_s": round(swap_s, 3),
                     "swap_share": round(swap_s / epoch_s, 3) if epoch_s > 0 else 0,
                     "swapped_mib_per_epoch": round(swap_mib, 1),
                     "peak_mib": round(result["peak_memory_bytes"] / 2**20, 1),
                     "filtered_mrr": round(result["test"]["filtered"]["mrr"], 4)})
        runs.append({"command": command, "wall_seconds": wall, "result": result})
    with open(out / "pbg_single_machine.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out / "pbg_single_machine.json").write_text(json.dumps({"rows": rows, "runs": runs}, indent=2))
    print(f"planted graph: {options.entities} entities, {options.entities * options.degree} edges,"
          f" dimension {options.dimension}, {options.epochs} epoch(s)")
    print(f"{'partitions':>10} {'store':>6} {'epoch s':>8} {'swap s':>7} {'share':>6}"
          f" {'MiB/epoch':>10} {'peak MiB':>9} {'MRR':>7}")
    for r in rows:
        print(f"{r['partitions']:>10} {r['store']:>6} {r['epoch_s']:>8.2f} {r['swap_s']:>7.2f}"
              f" {100 * r['swap_share']:>5.1f}% {r['swapped_mib_per_epoch']:>10.1f}"
              f" {r['peak_mib']:>9.1f} {r['filtered_mrr']:>7.4f}")
    print(f"results: {out / 'pbg_single_machine.csv'}")


if __name__ == "__main__":
    main()
