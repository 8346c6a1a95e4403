#!/usr/bin/env python3
"""PyTorch-BigGraph's distributed training (run_experiment and simulate --strategy pbg,
docs/embeddings.md): real runs on this machine beside the simulator's prediction of them, then
the simulator on planted graphs of the sizes of PBG's LiveJournal and Twitter runs: epoch time
against machines and partitions (machines = partitions / 2, PBG's default) and the trainers'
share of time not training (waiting for partition swaps and lock grants) against the network's
bandwidth.

Usage: experiments/pbg_distributed.py [--quick] [--output DIR]
Prints two tables; writes DIR/pbg_distributed.json (every run's command and result), .csv and a
figure DIR/pbg_distributed.png/.pdf.
"""
import argparse
import csv
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMP_NUM_THREADS": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def run_json(command, output, env=None):
    print("pbg_distributed: " + " ".join(map(str, command)), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in command], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})
    return json.loads(pathlib.Path(output).read_text())


def graph_options(entities, degree, dimension, partitions, epochs=1):
    return ["--dataset", "planted", "--entities", entities, "--degree", degree,
            "--dimension", dimension, "--partitions", partitions, "--epochs", epochs,
            "--test-fraction", "0.0005", "--eval-candidates", "sampled"]


def real_beside_simulated(build, out, options):
    """This machine's ranks for real, and the this-machine preset's prediction of the same."""
    rows = []
    for ranks in options.real_ranks:
        graph = graph_options(options.real_entities, 10, 100, options.real_partitions, 3)
        real_out = out / f"real-{ranks}.json"
        real = run_json(["mpirun", "-np", ranks, "--oversubscribe", build / "exec/run_experiment",
                         "--strategy", "pbg", *graph, "--quiet", "--output", real_out],
                        real_out, MPI_ENV)
        sim_out = out / f"sim-this-machine-{ranks}.json"
        simulated = run_json([build / "sim/simulate", "--strategy", "pbg", *graph,
                              "--cluster", "this-machine", "--cluster-set", "machines=1",
                              "--cluster-set", f"ranks_per_machine={ranks}", "--quiet",
                              "--output", sim_out], sim_out)
        rows.append({"ranks": ranks, "partitions": options.real_partitions,
                     "measured_epoch_s": round(real["epoch_seconds"], 3),
                     "simulated_epoch_s": round(simulated["epoch_seconds"], 3),
                     "simulated_not_training_share": round(simulated["not_training_share"], 3),
                     "bytes_match_plans": real["bytes_match_plans"]
                     and simulated["bytes_match_plans"]})
    return rows


# PBG's published graphs as planted ones of their size: (entities, group size, degree).
GRAPHS = {"livejournal": (4850000, 20, 14),  # 4.85 M entities, 68 M edges
          "twitter": (41650000, 50, 35),     # 41.65 M entities, 1.46 B edges
          "quick": (242500, 20, 14)}


def at_pbg_size(build, out, options, name):
    """A graph of PBG's size on a CPU cluster: machines = partitions / 2, then bandwidths."""
    rows = []
    entities, group, degree = GRAPHS[name]

    def graph(partitions):
        return graph_options(entities, degree, 100, partitions) + ["--group-size", group]

    points = [(p, p // 2, options.bandwidths[-1]) for p in options.partitions]
    points += [(options.partitions[-1], options.partitions[-1] // 2, b)
               for b in options.bandwidths[:-1]]
    for partitions, machines, gbps in points:
        sim_out = out / f"sim-{name}-{partitions}p-{machines}m-{gbps}gbps.json"
        result = run_json([build / "sim/simulate", "--strategy", "pbg", *graph(partitions),
                           "--cluster", options.cluster, "--cluster-set", f"machines={machines}",
                           "--cluster-set", "ranks_per_machine=1",
                           "--cluster-set", f"nic.bandwidth_gbps={gbps}", "--quiet",
                           "--output", sim_out], sim_out)
        sent = sum(r["bytes_sent"]["embeddings"] for r in result["ranks"]) / machines
        rows.append({"graph": name, "edges": result["dataset"]["train_edges"],
                     "partitions": partitions, "machines": machines, "bandwidth_gbps": gbps,
                     "simulated_epoch_s": round(result["epoch_seconds"], 2),
                     "not_training_share": round(result["not_training_share"], 3),
                     "swapped_gib_per_machine": round(sent / 2**30, 2)})
    return rows


def plot(real_rows, scale_rows, out):
    import style
    fig, (here, left, right) = style.figure(10.4, 2.4, ncols=3)
    fig.subplots_adjust(wspace=0.35)
    ranks = [r["ranks"] for r in real_rows]
    width = 0.35
    here.bar([x - width / 2 for x in range(len(ranks))],
             [r["measured_epoch_s"] for r in real_rows], width, label="measured")
    here.bar([x + width / 2 for x in range(len(ranks))],
             [r["simulated_epoch_s"] for r in real_rows], width, label="simulated")
    here.set_xticks(range(len(ranks)), [str(r) for r in ranks])
    here.set_xlabel("ranks on this machine")
    here.set_ylabel("epoch (s)")
    here.set_title(f"this machine, {real_rows[0]['partitions']} partitions")
    here.legend()
    top = max(r["bandwidth_gbps"] for r in scale_rows)
    most = max(r["partitions"] for r in scale_rows)
    for name in dict.fromkeys(r["graph"] for r in scale_rows):
        mine = [r for r in scale_rows if r["graph"] == name]
        by_machines = [r for r in mine if r["bandwidth_gbps"] == top]
        left.plot([r["machines"] for r in by_machines],
                  [r["simulated_epoch_s"] for r in by_machines], "o-", label=name)
        by_bandwidth = sorted((r for r in mine if r["partitions"] == most),
                              key=lambda r: r["bandwidth_gbps"])
        right.plot([r["bandwidth_gbps"] for r in by_bandwidth],
                   [100 * r["not_training_share"] for r in by_bandwidth], "s-", label=name)
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.legend()
    left.set_xlabel("machines (partitions = 2 x machines)")
    left.set_ylabel("simulated epoch (s)")
    left.set_title(f"{top} Gbps")
    right.set_xscale("log")
    right.set_xlabel("network bandwidth (Gbps)")
    right.set_ylabel("trainers not training (%)")
    right.set_title(f"{most} partitions, {most // 2} machines")
    return style.save(fig, str(out / "pbg_distributed"))


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a graph of 1/20 the size and fewer points (minutes)")
    parser.add_argument("--cluster", default="cloud-25gbps",
                        help="the preset whose hosts train (one trainer per machine)")
    parser.add_argument("--output", default=str(ROOT / "results" / "pbg_distributed"))
    parser.add_argument("--build", default=os.environ.get("GNNBED_BUILD_DIR", str(ROOT / "build")))
    options = parser.parse_args()
    graphs = ["quick"] if options.quick else ["livejournal", "twitter"]
    options.partitions = [4, 8] if options.quick else [4, 8, 16, 32]
    options.bandwidths = [1, 100] if options.quick else [1, 10, 25, 100]
    options.real_ranks = [1, 2]
    options.real_entities = 50000 if options.quick else 200000
    options.real_partitions = 8
    build = pathlib.Path(options.build)
    for binary in ("exec/run_experiment", "sim/simulate"):
        if not (build / binary).exists():
            sys.exit(f"pbg_distributed: {build / binary} is not built (cmake --build build)")
    out = pathlib.Path(options.output)
    out.mkdir(parents=True, exist_ok=True)
    real_rows = real_beside_simulated(build, out, options)
    scale_rows = [row for name in graphs for row in at_pbg_size(build, out, options, name)]
    write_csv(real_rows, out / "pbg_distributed_this_machine.csv")
    write_csv(scale_rows, out / "pbg_distributed.csv")
    figure = plot(real_rows, scale_rows, out)
    (out / "pbg_distributed.json").write_text(json.dumps(
        {"this_machine": real_rows, "at_pbg_size": scale_rows,
         "graphs": {name: dict(zip(("entities", "group_size", "degree"), GRAPHS[name]))
                    for name in graphs}},
        indent=2))
    print("this machine, measured beside simulated (this-machine preset):")
    print(f"{'ranks':>5} {'measured s':>10} {'simulated s':>11} {'not training':>12} {'bytes':>6}")
    for r in real_rows:
        print(f"{r['ranks']:>5} {r['measured_epoch_s']:>10.3f} {r['simulated_epoch_s']:>11.3f}"
              f" {100 * r['simulated_not_training_share']:>11.1f}%"
              f" {'equal' if r['bytes_match_plans'] else 'DIFFER':>6}")
    print(f"simulated, planted graphs of PBG's sizes, dimension 100, on {options.cluster}'s hosts:")
    print(f"{'graph':>11} {'edges':>13} {'partitions':>10} {'machines':>8} {'Gbps':>5}"
          f" {'epoch s':>8} {'not training':>12} {'GiB swapped/machine':>20}")
    for r in scale_rows:
        print(f"{r['graph']:>11} {r['edges']:>13} {r['partitions']:>10} {r['machines']:>8}"
              f" {r['bandwidth_gbps']:>5}"
              f" {r['simulated_epoch_s']:>8.2f} {100 * r['not_training_share']:>11.1f}%"
              f" {r['swapped_gib_per_machine']:>20.2f}")
    print(f"figure: {figure[0]}")


if __name__ == "__main__":
    main()
