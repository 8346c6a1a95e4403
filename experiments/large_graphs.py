#!/usr/bin/python3
"""The P3 paper's graphs at their real size on this machine: a benchmark that prints figures.

For every preset at full size (products, papers100M, UK-2006-05, UK-Union, Facebook) it times one
simulated epoch of dgl-pull and p3 on the P3 cluster (16 GPU ranks, GraphSAGE hidden 32, sampling
25,10, batch 1000 per rank) and reads each run's peak resident memory, against the targets of
docs/large_graphs.md (products <= 30 s, papers <= 5 min, UK-Union and Facebook <= 15 min each,
<= 16 GB). Then it checks epochs from samples against whole epochs (products and papers), and it
writes papers-like once to a cached binary file (time, disk) and simulates from the file.

  experiments/large_graphs.py                       # everything (about 15 minutes on 2 cores)
  experiments/large_graphs.py --only epochs         # one part: epochs, samples or file
  experiments/large_graphs.py --quick               # small scales: checks that the script runs

Results: OUTPUT/large_graphs.json (every run: command, wall time, peak memory, the simulate
result's epoch estimate) and OUTPUT/large_graphs.csv, with provenance; a table on stdout.
"""
import argparse
import csv
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = ("products-like", "papers-like", "uk-like", "uk-union-like", "facebook-like")
# Wall-time targets of one simulated epoch (docs/large_graphs.md); the memory target is 16 GB.
TARGET_SECONDS = {"products-like": 30, "papers-like": 300, "uk-union-like": 900,
                  "facebook-like": 900}
TARGET_RSS_BYTES = 16e9
COMMON = ["--cluster", "p3-cluster", "--model", "sage", "--hidden", "32", "--batch-size", "1000",
          "--fanouts", "25,10"]

# Runs `argv` and prints its peak resident memory, and its peak anonymous memory (what it
# allocated, without the pages of memory-mapped files, which the kernel can drop and reread), as
# two lines on stderr. The wrapper is a fresh process, so its children's maximum is the command's
# own; anonymous memory is polled over the command's process tree every 0.1 s.
MEASURE = r"""
import os, resource, subprocess, sys, time
def tree(root):
    children = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/stat') as f:
                    ppid = int(f.read().rsplit(')', 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo += children.get(pid, [])
    return pids
def anonymous(pid):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('RssAnon:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
process = subprocess.Popen(sys.argv[1:])
peak_anonymous = 0
while process.poll() is None:
    peak_anonymous = max(peak_anonymous, sum(anonymous(p) for p in tree(process.pid)))
    time.sleep(0.1)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
print(peak_anonymous, file=sys.stderr)
sys.exit(process.returncode)
"""


def run(argv, log):
    """Runs one command; returns (wall seconds, peak RSS bytes, peak anonymous bytes)."""
    start = datetime.datetime.now()
    with open(log, "w") as out:
        process = subprocess.run([sys.executable, "-c", MEASURE] + argv, stdout=out,
                                 stderr=subprocess.PIPE, text=True)
        out.write(process.stderr)
    seconds = (datetime.datetime.now() - start).total_seconds()
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed (exit {process.returncode}), log: {log}")
    lines = process.stderr.strip().splitlines()
    return seconds, int(lines[-2]), int(lines[-1])


def simulate(build, args, label, extra, output_dir):
    result_file = os.path.join(output_dir, f"{label}.json")
    argv = [os.path.join(build, "sim", "simulate")] + extra + ["--quiet", "-o", result_file]
    seconds, peak, anonymous = run(argv, os.path.join(output_dir, f"{label}.log"))
    with open(result_file) as f:
        document = json.load(f)
    points = [{"point": p["point"], "strategy": p["strategy"],
               "epoch_estimate": p["result"].get("epoch_estimate"),
               "load_seconds": p.get("load_seconds"),
               "planning_seconds": p["result"].get("planning_seconds"),
               "replay_seconds": p["result"].get("replay_seconds")}
              for p in document["points"]]
    return {"label": label, "command": shlex.join(argv), "wall_seconds": seconds,
            "peak_rss_bytes": peak, "peak_anonymous_bytes": anonymous, "points": points}


def scale_of(args, preset):
    return "1" if not args.quick else ("0.01" if preset == "products-like" else "0.0005")


def epochs(build, args, output_dir):
    """One whole simulated epoch per preset at full size, both strategies, time and memory."""
    runs = []
    for preset in args.presets:
        for strategy in ("dgl-pull", "p3"):
            extra = ["--workload", preset, "--scale", scale_of(args, preset), "--strategy",
                     strategy] + COMMON
            record = simulate(build, args, f"epoch-{preset}-{strategy}", extra, output_dir)
            record.update(part="epochs", preset=preset, strategy=strategy)
            target = TARGET_SECONDS.get(preset)
            record["target_seconds"] = target
            record["within_target"] = (target is None or record["wall_seconds"] <= target) and \
                record["peak_rss_bytes"] <= TARGET_RSS_BYTES
            estimate = record["points"][0]["epoch_estimate"]
            print(f"{preset:14s} {strategy:8s} epoch {estimate['seconds']:8.3f} s simulated in "
                  f"{record['wall_seconds']:7.1f} s wall (target {target or '-'}), peak "
                  f"{record['peak_rss_bytes'] / 1e9:5.2f} GB (anonymous "
                  f"{record['peak_anonymous_bytes'] / 1e9:5.2f} GB)"
                  f"{'' if record['within_target'] else '  OVER TARGET'}", flush=True)
            runs.append(record)
    return runs


def samples(build, args, output_dir):
    """Epochs from samples against whole epochs: products (13 iterations) and papers (76)."""
    runs = []
    cases = [("products-like", [0, 4, 6, 8]), ("papers-like", [0, 10, 20])]
    for preset, sizes in cases:
        whole = None
        for k in sizes:
            extra = ["--workload", preset, "--scale", scale_of(args, preset), "--sweep",
                     "distribution.strategy=dgl-pull,p3", "--iterations", str(k)] + COMMON
            record = simulate(build, args, f"sample-{preset}-k{k}", extra, output_dir)
            record.update(part="samples", preset=preset, sample_size=k)
            if k == 0:
                whole = {p["strategy"]: p["epoch_estimate"]["seconds"] for p in record["points"]}
            for point in record["points"]:
                estimate = point["epoch_estimate"]
                full = whole[point["strategy"]]
                error = estimate["seconds"] / full - 1
                interval = estimate.get("interval_95_seconds")
                covers = interval is not None and interval[0] <= full <= interval[1]
                point["whole_epoch_seconds"] = full
                point["error_against_whole_epoch"] = error
                point["interval_covers_whole_epoch"] = covers
                shown = "exact" if k == 0 else (
                    f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "no interval")
                print(f"{preset:14s} {point['strategy']:8s} k={k:3d}: {estimate['seconds']:8.3f} s "
                      f"{shown:20s} whole {full:8.3f} s, error {100 * error:+6.2f} %"
                      f"{'' if k == 0 or covers else '  (outside the interval)'}", flush=True)
            runs.append(record)
    return runs


def file_storage(build, args, output_dir):
    """papers-like written once to a cached binary file, then simulated from the mapped file."""
    cache = tempfile.mkdtemp(prefix="gnnbed-cache-", dir=args.cache_parent)
    try:
        preset = "papers-like"
        base = ["--workload", preset, "--scale", scale_of(args, preset), "--storage", "file",
                "--cache-dir", cache]
        write_seconds, write_peak, write_anonymous = run(
            [os.path.join(build, "workloads", "workload"), "info"] + base,
            os.path.join(output_dir, "file-generate.log"))
        disk = sum(os.path.getsize(os.path.join(cache, name)) for name in os.listdir(cache))
        record = simulate(build, args, "file-simulate",
                          base + ["--strategy", "dgl-pull"] + COMMON, output_dir)
        record.update(part="file", preset=preset, generate_seconds=write_seconds,
                      generate_peak_rss_bytes=write_peak,
                      generate_peak_anonymous_bytes=write_anonymous, file_bytes=disk)
        print(f"{preset}: generated and written in {write_seconds:.1f} s (peak "
              f"{write_peak / 1e9:.2f} GB, anonymous {write_anonymous / 1e9:.2f} GB), "
              f"{disk / 1e9:.2f} GB on disk; simulated from the file in "
              f"{record['wall_seconds']:.1f} s, peak {record['peak_rss_bytes'] / 1e9:.2f} GB "
              f"(anonymous {record['peak_anonymous_bytes'] / 1e9:.2f} GB; the rest is mapped "
              f"pages of the file)", flush=True)
        return [record]
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=os.path.join(ROOT, "results", "large_graphs"))
    parser.add_argument("--only", choices=("epochs", "samples", "file"))
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--quick", action="store_true", help="small scales (a smoke test)")
    parser.add_argument("--cache-parent", default=None,
                        help="where the file part writes its temporary cache (about 13 GB)")
    args = parser.parse_args()
    args.presets = [p for p in args.presets.split(",") if p]
    for preset in args.presets:
        if preset not in PRESETS:
            parser.error(f"--presets: unknown preset '{preset}' (known: {', '.join(PRESETS)})")
    os.makedirs(args.output, exist_ok=True)
    parts = {"epochs": epochs, "samples": samples, "file": file_storage}
    runs = []
    for name, part in parts.items():
        if args.only in (None, name):
            runs += part(args.build, args, args.output)
    revision = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    document = {"command": shlex.join(sys.argv), "git_revision": revision,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "cpus": os.cpu_count(), "quick": args.quick, "runs": runs}
    path = os.path.join(args.output, "large_graphs.json")
    with open(path + ".tmp", "w") as f:
        json.dump(document, f, indent=2)
    os.replace(path + ".tmp", path)
    with open(os.path.join(args.output, "large_graphs.csv.tmp"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["label", "part", "preset", "wall_seconds", "peak_rss_bytes",
                         "peak_anonymous_bytes"])
        for record in runs:
            writer.writerow([record["label"], record["part"], record["preset"],
                             f"{record['wall_seconds']:.2f}", record["peak_rss_bytes"],
                             record["peak_anonymous_bytes"]])
    os.replace(os.path.join(args.output, "large_graphs.csv.tmp"),
               os.path.join(args.output, "large_graphs.csv"))
    print(f"results: {path}")


if __name__ == "__main__":
    main()
