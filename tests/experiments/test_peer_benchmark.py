"""experiments/peer_benchmark and its PyTorch peer: the peer's readers give what gnnbed's loaders
give, the generated graph is deterministic and gnnbed reads it, the benchmark without PyTorch runs
gnnbed's side only, and with PyTorch its --quick run on Cora writes results in which both sides
train Cora to a sensible accuracy. Exits 77 (ctest's skip) when NumPy is missing, or when
PyTorch is and everything else passed."""
import csv
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BENCHMARK = os.path.join(ROOT, "experiments", "peer_benchmark")
BUILD = os.environ.get("GNNBED_BUILD_DIR", os.path.join(ROOT, "build"))
CORA = os.path.join(ROOT, "workloads", "datasets", "cora")
SKIP = 77

try:
    import numpy as np
except ImportError:
    print("test_peer_benchmark: NumPy is missing; skipped")
    sys.exit(SKIP)

sys.path.insert(0, os.path.join(ROOT, "experiments", "peer"))
import peer_data  # noqa: E402

loader = importlib.machinery.SourceFileLoader("peer_benchmark", BENCHMARK)
spec = importlib.util.spec_from_loader("peer_benchmark", loader)
benchmark = importlib.util.module_from_spec(spec)
loader.exec_module(benchmark)
PYTHON, TORCH_VERSION = benchmark.torch_interpreter(None)


def workload_tool(*args):
    done = subprocess.run([os.path.join(BUILD, "workloads", "workload"), *args],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"workload {' '.join(args)} failed: {done.stderr}")
    return json.loads(done.stdout[done.stdout.index("{"):])


def run_benchmark(*args):
    return subprocess.run([sys.executable, BENCHMARK, "--build", BUILD, *args],
                          capture_output=True, text=True, check=False)


def read_report(folder):
    with open(os.path.join(folder, "peer_benchmark.json"), encoding="utf-8") as f:
        report = json.load(f)
    with open(os.path.join(folder, "peer_benchmark.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return report, rows


class Readers(unittest.TestCase):
    def test_binary_file_of_cora_reads_as_the_tsv_layout_does(self):
        tsv = peer_data.read_planetoid_tsv(CORA)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "cora.bin")
            sparse_path = os.path.join(folder, "cora-sparse.bin")
            workload_tool("convert", "--workload", "planetoid-tsv", "--path", CORA,
                          "--features", "stored", "--output", sparse_path)
            workload_tool("convert", "--workload", "planetoid-tsv", "--path", CORA,
                          "--features", "stored", "--feature-rows", "dense", "--output", path)
            binary = peer_data.read_gnnbed_binary(path)
            sparse = peer_data.read_gnnbed_binary(sparse_path)
            for field in ("indptr", "indices", "labels", "train", "val", "test"):
                np.testing.assert_array_equal(getattr(binary, field), getattr(tsv, field), field)
            self.assertEqual((binary.num_nodes, binary.dim, binary.num_classes),
                             (2708, 1433, 7))
            # gnnbed stored Cora's features row-normalised, as it trains on them.
            rows, cols, values = tsv.sparse
            sums = np.bincount(rows, weights=values, minlength=tsv.num_nodes)
            dense = np.zeros((tsv.num_nodes, tsv.dim), dtype=np.float64)
            dense[rows, cols] = values / sums[rows]
            np.testing.assert_allclose(binary.dense, dense, rtol=1e-6)
            from_sparse = np.zeros((tsv.num_nodes, tsv.dim), dtype=np.float64)
            from_sparse[sparse.sparse[0], sparse.sparse[1]] = sparse.sparse[2]
            np.testing.assert_allclose(from_sparse, dense, rtol=1e-6)

            with open(path, "r+b") as f:
                f.write(b"NOTGNNBD")
            with self.assertRaisesRegex(peer_data.DataError, "'magic'"):
                peer_data.read_gnnbed_binary(path)

    def test_generated_graph_is_deterministic_and_gnnbed_reads_it(self):
        params = {"num_nodes": 600, "num_features": 300, "num_classes": 4, "num_val": 50,
                  "num_test": 100, "topic_words": 20}
        with tempfile.TemporaryDirectory() as folder:
            paths = [os.path.join(folder, f"{i}-" + peer_data.bow_sbm_directory_name(params))
                     for i in range(2)]
            for path in paths:
                peer_data.write_planetoid_tsv(peer_data.generate_bow_sbm(params), path)
            for name in sorted(os.listdir(paths[0])):
                with open(os.path.join(paths[0], name), "rb") as a, \
                        open(os.path.join(paths[1], name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)
            read = peer_data.read_planetoid_tsv(paths[0])
            info = workload_tool("info", "--workload", "planetoid-tsv", "--path", paths[0])
            self.assertEqual((info["num_nodes"], info["num_edges"], info["feature_dim"],
                              info["num_classes"], info["num_train"], info["num_val"],
                              info["num_test"]),
                             (600, read.num_edges, 300, 4, 4 * 20, 50, 100))


class WithoutPeer(unittest.TestCase):
    def test_an_interpreter_without_torch_leaves_gnnbed_side_only_and_exit_zero(self):
        with tempfile.TemporaryDirectory() as folder:
            done = run_benchmark("--cases", "cora-gcn", "--epochs", "3", "--threads", "1",
                                 "--python", os.path.join(folder, "no-python"), "--output",
                                 folder)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("PyTorch does not import", done.stdout)
            report, rows = read_report(folder)
            self.assertIsNone(report["provenance"]["peer_python"])
            case = report["cases"][0]
            self.assertNotIn("peer", case)
            self.assertGreater(case["gnnbed"]["epoch_seconds"], 0)
            self.assertEqual([r["case"] for r in rows], ["cora-gcn"])
            self.assertEqual(rows[0]["peer_epoch_s"], "")


@unittest.skipIf(PYTHON is None, f"PyTorch does not import: {TORCH_VERSION}")
class WithPeer(unittest.TestCase):
    def test_quick_run_on_cora_trains_both_sides(self):
        with tempfile.TemporaryDirectory() as folder:
            done = run_benchmark("--quick", "--cases", "cora-gcn,cora-sage", "--threads", "1",
                                 "--output", folder)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            report, rows = read_report(folder)
            provenance = report["provenance"]
            self.assertEqual(provenance["threads"], 1)
            self.assertEqual(provenance["torch_version"], TORCH_VERSION)
            self.assertIn("git_describe", provenance)
            self.assertEqual([r["case"] for r in rows], ["cora-gcn", "cora-sage"])
            least = {"cora-gcn": 0.75, "cora-sage": 0.65}
            for case in report["cases"]:
                for side in ("gnnbed", "peer"):
                    result = case[side]
                    self.assertNotIn("error", result, f"{case['case']} {side}")
                    self.assertGreaterEqual(result["test_accuracy"], least[case["case"]],
                                            f"{case['case']} {side}")
                    self.assertGreater(result["epoch_seconds"], 0)
                    self.assertGreater(result["peak_memory_bytes"], 0)
                self.assertGreater(case["ratio"], 0)
                with open(case["peer"]["runs"][0]["result"], encoding="utf-8") as f:
                    peer = json.load(f)
                self.assertEqual(len(peer["epochs"]), case["settings"]["epochs"])
                self.assertEqual(peer["sparse_input_features"], case["settings"]["model"] == "gcn")
            for row in rows:
                self.assertGreater(float(row["ratio"]), 0)
                self.assertGreaterEqual(float(row["peer_test_accuracy"]), least[row["case"]])
            table = [line for line in done.stdout.splitlines() if line.startswith("cora-")]
            self.assertEqual([line.split()[0] for line in table], ["cora-gcn", "cora-sage"])


if __name__ == "__main__":
    outcome = unittest.main(exit=False).result
    if not outcome.wasSuccessful():
        sys.exit(1)
    sys.exit(SKIP if PYTHON is None else 0)
