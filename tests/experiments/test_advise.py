"""experiments/advise: its ranking and its reason on given candidates, and a whole run on Cora
(every candidate simulated, ranked by epoch time or pruned by the memory limit, the result
written; options it chooses itself refused before any work)."""
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ADVISE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments",
                      "advise")
loader = importlib.machinery.SourceFileLoader("advise", ADVISE)
spec = importlib.util.spec_from_loader("advise", loader)
advise = importlib.util.module_from_spec(spec)
loader.exec_module(advise)
sys.path.insert(0, os.path.dirname(ADVISE))
import advise_validation_table  # noqa: E402  (experiments/, beside advise)


def candidate(name, strategy, seconds, parts, mb):
    return {"name": name, "strategy": strategy, "fits": True, "epoch_seconds": seconds,
            "breakdown_seconds": dict(zip(advise.PARTS, parts)),
            "mean_bytes_sent_per_rank": mb * 1e6, "max_device_peak_bytes": 1}


class Ranking(unittest.TestCase):
    def test_fastest_first_and_the_reason_is_the_largest_gain_over_another_strategy(self):
        p3 = candidate("p3", "p3", 1.0, [0.1, 0.2, 0.3, 0.4, 0.0], 10)
        p3_pipelined = candidate("p3 (pipeline)", "p3", 1.1, [0.1, 0.2, 0.3, 0.5, 0.0], 10)
        dgl = candidate("dgl-pull (hash)", "dgl-pull", 2.5, [0.1, 0.6, 0.3, 1.5, 0.0], 90)
        pruned = {"name": "dgl-pull (metis)", "strategy": "dgl-pull", "fits": False,
                  "out_of_memory": "rank 0 needs more"}
        order = advise.ranked([dgl, pruned, p3_pipelined, p3])
        self.assertEqual([c["name"] for c in order], ["p3", "p3 (pipeline)", "dgl-pull (hash)"])
        why = advise.why_it_wins(order)
        self.assertIn("beats dgl-pull (hash)", why, "against the best of another strategy")
        self.assertIn("communication, 0.4 s against 1.5 s", why)
        self.assertIn("2.50x", why)

    def test_candidates_within_the_tolerance_of_the_first_are_named_as_ties(self):
        order = [candidate("a", "p3", 1.00, [0.0] * 5, 1), candidate("b", "p3", 1.04, [0.0] * 5, 1),
                 candidate("c", "dgl-pull", 1.06, [0.0] * 5, 1)]
        self.assertEqual(advise.near_ties(order, 0.05), ["b"])
        self.assertEqual(advise.near_ties(order, 0.10), ["b", "c"])
        self.assertEqual(advise.near_ties(order, 0.0), [])
        self.assertEqual(advise.near_ties([], 0.05), [])

    def test_one_strategy_or_none(self):
        only = candidate("p3", "p3", 1.0, [0.0] * 5, 1)
        self.assertIn("only candidate", advise.why_it_wins([only]))
        self.assertEqual(advise.why_it_wins([]), "no candidate fits")

    def test_labels_name_what_the_sweeps_chose(self):
        self.assertEqual(advise.label("p3", [("distribution.cache_budget_bytes", "2147483648"),
                                             ("distribution.pipeline", "true")]),
                         "p3 (cache 2 GiB, pipeline)")
        self.assertEqual(advise.label("p3", [("distribution.cache_budget_bytes", "0"),
                                             ("distribution.pipeline", "false")]),
                         "p3 (cache none)")
        self.assertEqual(advise.label("p3", [("distribution.cache_budget_bytes", "16000000")]),
                         "p3 (cache 15.3 MiB)")
        self.assertEqual(advise.label("sancus", [("distribution.sancus_staleness_epochs", "1")]),
                         "sancus (SCS-E1)")
        self.assertEqual(advise.label("dgl-pull", [("distribution.partitioner", "metis"),
                                                   ("training.batch_size", "1000")]),
                         "dgl-pull (metis, batch 1000)")

    def test_batch_sizes_multiply_the_mini_batch_candidates_only(self):
        plain = advise.families(False, [0])
        sized = advise.families(False, [0], [500, 1000])
        self.assertEqual([advise.point_count(f) for f in sized],
                         [2 * advise.point_count(f) for f in plain])
        self.assertEqual(sized[0]["sweeps"]["training.batch_size"], ["500", "1000"])


class WholeRun(unittest.TestCase):
    def run_advise(self, *args):
        return subprocess.run([sys.executable, ADVISE, "--workload", "cora", "--cluster",
                               "p3-cluster", "-q", "-j", "2", *args],
                              capture_output=True, text=True, check=False)

    def test_every_candidate_is_ranked_or_pruned(self):
        with tempfile.TemporaryDirectory() as folder:
            output = os.path.join(folder, "advise.json")
            done = self.run_advise("--output", output)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(output, encoding="utf-8") as f:
                result = json.load(f)
            ranked = result["ranked"]
            self.assertEqual(len(ranked) + len(result["pruned"]), 8)
            self.assertEqual(result["failed"], [])
            seconds = [c["epoch_seconds"] for c in ranked]
            self.assertEqual(seconds, sorted(seconds))
            self.assertEqual(result["winner"], ranked[0]["name"])
            self.assertIn(ranked[0]["name"], done.stdout.splitlines()[1])
            self.assertTrue(result["why"].startswith(ranked[0]["name"] + " beats"))
            self.assertEqual(len(result["provenance"]["simulate_commands"]), 2)
            first = ranked[0]["epoch_seconds"]
            self.assertEqual(result["near_ties"],
                             [c["name"] for c in ranked[1:] if c["epoch_seconds"] <= first * 1.05])

            # A limit between the smallest and the largest peak prunes some, never those below.
            peaks = sorted(c["max_device_peak_bytes"] for c in ranked)
            limit = (peaks[0] + peaks[-1]) / 2
            done = self.run_advise("--memory-limit", str(limit), "--output", output)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(output, encoding="utf-8") as f:
                limited = json.load(f)
            self.assertTrue(limited["pruned"])
            self.assertTrue(all(c["max_device_peak_bytes"] <= limit for c in limited["ranked"]))

    def test_options_it_chooses_are_refused_before_any_work(self):
        with tempfile.TemporaryDirectory() as folder:
            output = os.path.join(folder, "advise.json")
            done = self.run_advise("--strategy", "p3", "--output", output)
            self.assertEqual(done.returncode, 2)
            self.assertIn("--strategy", done.stderr)
            self.assertFalse(os.path.exists(output))
            done = self.run_advise("--cache-budgets", "0,lots", "--output", output)
            self.assertEqual(done.returncode, 2)
            self.assertIn("--cache-budgets", done.stderr)
            done = self.run_advise("--tie-tolerance", "-1", "--output", output)
            self.assertEqual(done.returncode, 2)
            self.assertIn("--tie-tolerance", done.stderr)
            done = self.run_advise("--full-graph", "--batch-sizes", "100", "--output", output)
            self.assertEqual(done.returncode, 2)
            self.assertIn("--batch-sizes", done.stderr)
            self.assertFalse(os.path.exists(output))


class AgainstMeasuredRuns(unittest.TestCase):
    """advise_validation_table: advise's first choice judged against measured epochs."""

    RANKED = [{"name": "p3", "epoch_seconds": 1.0}, {"name": "dgl-pull", "epoch_seconds": 1.2},
              {"name": "p3 (pipeline)", "epoch_seconds": 1.3}]

    def judge(self, measured, tolerance=0.05):
        return advise_validation_table.verdict(self.RANKED, measured, tolerance)

    def test_right_when_first_is_fastest_or_within_the_tolerance(self):
        fastest = self.judge({"p3": 1.0, "dgl-pull": 1.5, "p3 (pipeline)": 1.1})
        self.assertTrue(fastest["right"])
        self.assertEqual(fastest["advised_measured_rank"], 1)
        close = self.judge({"p3": 1.04, "dgl-pull": 1.5, "p3 (pipeline)": 1.0})
        self.assertTrue(close["right"])
        self.assertEqual(close["measured_fastest"], "p3 (pipeline)")
        self.assertAlmostEqual(close["advised_over_fastest"], 0.04)
        self.assertEqual(close["advised_measured_rank"], 2)

    def test_wrong_when_first_is_slower_by_more_or_did_not_run(self):
        slower = self.judge({"p3": 1.1, "dgl-pull": 1.0, "p3 (pipeline)": 1.2})
        self.assertFalse(slower["right"])
        self.assertTrue(self.judge({"p3": 1.1, "dgl-pull": 1.0, "p3 (pipeline)": 1.2},
                                   tolerance=0.15)["right"])
        failed = self.judge({"p3": None, "dgl-pull": 1.0, "p3 (pipeline)": 1.2})
        self.assertFalse(failed["right"])
        self.assertIn("no measurement", failed["why"])

    def test_the_measured_fastest_is_checked_against_the_named_ties(self):
        measured = {"p3": 1.1, "dgl-pull": 1.0, "p3 (pipeline)": 1.2}
        self.assertIsNone(self.judge(measured)["fastest_named"], "advise named no ties")
        named = advise_validation_table.verdict(self.RANKED, measured, 0.05, ["dgl-pull"])
        self.assertFalse(named["right"])
        self.assertTrue(named["fastest_named"])
        self.assertFalse(advise_validation_table.verdict(self.RANKED, measured, 0.05,
                                                         [])["fastest_named"])

    def test_a_failed_other_candidate_is_listed_not_counted(self):
        result = self.judge({"p3": 1.0, "dgl-pull": None, "p3 (pipeline)": 1.2})
        self.assertTrue(result["right"])
        self.assertEqual(result["missing"], ["dgl-pull"])
        self.assertEqual(result["candidates_measured"], 2)

    def test_the_table_reads_a_validation_folder(self):
        def run(seconds):  # a run_experiment result: warm-up epoch, then the measured ones
            return {"config": {"training": {"warmup_epochs": 1}},
                    "epochs": [{"seconds": 9.0}] + [{"seconds": s} for s in seconds]}
        with tempfile.TemporaryDirectory() as folder:
            setting = os.path.join(folder, "settings", "1gbps-r2")
            os.makedirs(setting)
            with open(os.path.join(setting, "advise.json"), "w", encoding="utf-8") as f:
                json.dump({"ranked": self.RANKED}, f)
            lines = ["setting\trate_gbps\tranks\thidden\tfeature_width\tcandidate\tresult\t"
                     "exit_code\twall_seconds\tload_average_before"]
            for i, (name, seconds) in enumerate([("p3", [2.0, 1.9, 2.1]),
                                                 ("dgl-pull", [1.0, 1.2, 1.1])]):
                path = f"settings/1gbps-r2/run-c{i}.json"
                with open(os.path.join(folder, path), "w", encoding="utf-8") as f:
                    json.dump(run(seconds), f)
                lines.append(f"1gbps-r2\t1\t2\t16\t64\t{name}\t{path}\t0\t5\t0.1")
            lines.append("1gbps-r2\t1\t2\t16\t64\tp3 (pipeline)\tnone.json\t1\t5\t0.1")
            with open(os.path.join(folder, "runs.tsv"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            done = subprocess.run([sys.executable, advise_validation_table.__file__, "--output",
                                   folder], capture_output=True, text=True, check=False)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("in 0 of 1 settings", done.stdout)
            with open(os.path.join(folder, "advise_validation.json"), encoding="utf-8") as f:
                document = json.load(f)
            verdict = document["settings"][0]
            self.assertEqual(verdict["measured_fastest"], "dgl-pull")
            self.assertAlmostEqual(verdict["advised_measured_seconds"], 2.0, msg="the median")
            self.assertAlmostEqual(verdict["advised_over_fastest"], 2.0 / 1.1 - 1)
            self.assertEqual(verdict["missing"], ["p3 (pipeline)"])
            with open(os.path.join(folder, "advise_validation.csv"), encoding="utf-8") as f:
                self.assertEqual(len(f.read().strip().splitlines()), 4)


if __name__ == "__main__":
    unittest.main()
