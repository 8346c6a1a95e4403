"""experiments/reproduce's claims: selectors, the value metric, a polling monitor's reading of a
simulated timeline (as nvidia-smi reads a GPU), and the evidence a claim's explanation quotes."""
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import reproduce_claims as claims  # noqa: E402

LOADER = importlib.machinery.SourceFileLoader("reproduce",
                                              os.path.join(ROOT, "experiments", "reproduce"))
reproduce = importlib.util.module_from_spec(importlib.util.spec_from_loader("reproduce", LOADER))
LOADER.exec_module(reproduce)


def point(run, seconds, **assignments):
    return {"run": run, "assignments": {k.replace("_", "."): v for k, v in assignments.items()},
            "epoch_seconds": seconds, "breakdown_mean_seconds": {"copy": seconds / 4},
            "mean_bytes_sent_by_kind": {"features": 1e9 * seconds}}


POINTS = [point("a", 8.0, distribution_strategy="dgl-pull", model_kind="gcn"),
          point("a", 2.0, distribution_strategy="p3", model_kind="gcn"),
          point("a", 9.0, distribution_strategy="dgl-pull", model_kind="gat"),
          point("a", 6.0, distribution_strategy="p3", model_kind="gat"),
          point("a", 4.0, distribution_strategy="dgl-pull", model_kind="sgc"),
          point("a", 1.0, distribution_strategy="p3", model_kind="sgc")]


class Selectors(unittest.TestCase):
    def test_any_of_several_values(self):
        metric = {"kind": "ratio", "reduce": "min", "pair_on": ["model.kind"],
                  "numerator": {"distribution.strategy": "dgl-pull",
                                "model.kind": {"any": ["gcn", "sgc"]}},
                  "denominator": {"distribution.strategy": "p3",
                                  "model.kind": {"any": ["gcn", "sgc"]}}}
        value, where = claims.evaluate(metric, POINTS, None)
        self.assertEqual(value, 4.0)  # gcn 8/2 and sgc 4/1: GAT's 1.5 is left out
        self.assertIn("kind=gcn", where)

    def test_value_of_one_point_by_kind_of_bytes(self):
        metric = {"kind": "value", "select": {"distribution.strategy": "p3", "model.kind": "gat"},
                  "quantity": "bytes_sent.features"}
        self.assertEqual(claims.evaluate(metric, POINTS, None)[0], 6e9)

    def test_value_of_several_points_needs_a_reduction(self):
        metric = {"kind": "value", "select": {"distribution.strategy": "p3"}}
        self.assertIsNone(claims.evaluate(metric, POINTS, None)[0])
        self.assertEqual(claims.evaluate(dict(metric, reduce="max"), POINTS, None)[0], 6.0)


def write_trace(folder, kernels_by_rank, end):
    """A Chrome trace of simulate with the given compute intervals (seconds) on each rank."""
    events = [{"ph": "X", "pid": rank, "tid": "compute", "name": "k", "ts": start * 1e6,
               "dur": (stop - start) * 1e6}
              for rank, kernels in kernels_by_rank.items() for start, stop in kernels]
    events.append({"ph": "X", "pid": 0, "tid": "network", "name": "end", "ts": 0, "dur": end * 1e6})
    os.makedirs(os.path.join(folder, "raw"), exist_ok=True)
    with open(os.path.join(folder, "raw", "t.trace.json"), "w") as f:
        json.dump({"traceEvents": events}, f)
    return [{"run": "r", "assignments": {}, "trace": "t.trace.json"}]


class PolledMonitor(unittest.TestCase):
    def test_a_reading_is_busy_when_a_kernel_ran_in_its_sample_period(self):
        # One 1 ms kernel every 1 s over 4 s; polls every 0.1 s from 0.25 s, each over the last
        # 0.25 s: the polls within 0.25 s after a kernel read it, the 3 at +0.03, +0.13 and +0.23
        # s after each of the last three, only the first poll for the first: 10 of 38.
        with tempfile.TemporaryDirectory() as folder:
            kernels = [(t + 0.0, t + 0.001) for t in (0.02, 1.02, 2.02, 3.02)]
            points = write_trace(folder, {0: kernels}, 4.0)
            monitor = {"poll_seconds": 0.1, "sample_period_seconds": 0.25}
            metric = {"kind": "busy_fraction", "select": {"run": "r"}, "monitor": monitor}
            value, where = claims.evaluate(metric, points, folder)
            self.assertAlmostEqual(value, 10 / 38, places=12)
            self.assertIn("38 readings", where)
            exact = claims.evaluate({"kind": "busy_fraction", "select": {"run": "r"}}, points,
                                    folder)[0]
            self.assertAlmostEqual(exact, 0.004 / 4.0, places=12)

    def test_every_rank_is_read(self):
        with tempfile.TemporaryDirectory() as folder:
            points = write_trace(folder, {0: [(0.0, 2.0)], 1: [(3.0, 3.1)]}, 4.0)
            monitor = {"poll_seconds": 0.5, "sample_period_seconds": 0.5}
            metric = {"kind": "busy_fraction", "select": {"run": "r"}, "monitor": monitor}
            # Polls at 0.5, 1, ..., 4 on both ranks: rank 0 reads its kernel at 0.5 to 2, rank 1
            # its own at 3.5 only; a kernel that ended at a period's start is not read.
            self.assertEqual(claims.evaluate(metric, points, folder)[0], 5 / 16)


class Evidence(unittest.TestCase):
    CLAIM = {"claim": "c", "cite": "s", "paper": 2.0,
             "why": "copy {copy} of a {epoch} epoch",
             "evidence": [{"name": "copy", "label": "copy", "unit": "fraction",
                           "metric": {"kind": "ratio", "pair_on": [],
                                      "numerator": {"distribution.strategy": "p3",
                                                    "model.kind": "gcn",
                                                    "quantity": "breakdown.copy"},
                                      "denominator": {"distribution.strategy": "p3",
                                                      "model.kind": "gcn"}}},
                          {"name": "epoch", "label": "epoch", "unit": "s",
                           "metric": {"kind": "value",
                                      "select": {"distribution.strategy": "p3",
                                                 "model.kind": "gcn"}}}],
             "metric": {"kind": "ratio", "numerator": {}, "denominator": {}}}

    def test_the_explanation_quotes_this_runs_values(self):
        claims.check_claim("spec", self.CLAIM)
        measured = claims.measure_evidence(self.CLAIM, POINTS, None)
        self.assertEqual([m["text"] for m in measured], ["25 %", "2 s"])
        self.assertEqual(claims.explanation(self.CLAIM, measured), "copy 25 % of a 2 s epoch")

    def test_a_name_no_evidence_gives_is_refused(self):
        claim = dict(self.CLAIM, why="copy {copy} and {bytes}")
        with self.assertRaisesRegex(claims.SpecError, "spec: why quotes bytes"):
            claims.check_claim("spec", claim)

    def test_an_unknown_unit_is_refused(self):
        evidence = [dict(self.CLAIM["evidence"][0], unit="minutes")]
        with self.assertRaisesRegex(claims.SpecError, r"evidence\[0\]: unit 'minutes'"):
            claims.check_claim("spec", dict(self.CLAIM, evidence=evidence, why=""))

    def test_a_monitor_without_a_sample_period_is_refused(self):
        metric = {"kind": "busy_fraction", "select": {}, "monitor": {"poll_seconds": 0.05}}
        with self.assertRaisesRegex(claims.SpecError,
                                    "spec: metric: monitor.sample_period_seconds must be"):
            claims.check_claim("spec", dict(self.CLAIM, metric=metric))

    def test_units(self):
        self.assertEqual(claims.with_unit(16.42e9, "bytes"), "16.4 GB")
        self.assertEqual(claims.with_unit(0.0075, "fraction"), "0.75 %")
        self.assertEqual(claims.with_unit(1.3125, "x"), "1.31x")
        self.assertEqual(claims.with_unit(216586.5, ""), "216,586")
        self.assertEqual(claims.with_unit(None, "s"), "no value")


class Placements(unittest.TestCase):
    PROFILES = {"paper": {"dgl-pull": "gpu", "default": "machine"}, "gpu": ["--g"],
                "machine": ["--m"], "shape": ["--s"]}

    def test_a_profile_that_places_strategies_apart_splits_the_run(self):
        run = {"profiles": ["paper", "shape"],
               "sweeps": {"distribution.strategy": ["dgl-pull", "p3", "roc"]}}
        self.assertEqual(reproduce.placements(run, "full", self.PROFILES),
                         [(["dgl-pull"], ["--g", "--s"]), (["p3", "roc"], ["--m", "--s"])])

    def test_the_strategy_may_come_from_the_arguments(self):
        run = {"profiles": ["paper"], "args": ["--strategy", "dgl-pull"]}
        self.assertEqual(reproduce.placements(run, "full", self.PROFILES),
                         [(["dgl-pull"], ["--g"])])

    def test_plain_profiles_make_one_call(self):
        run = {"profiles": ["machine", "shape"],
               "sweeps": {"distribution.strategy": ["dgl-pull", "p3"]}}
        self.assertEqual(reproduce.placements(run, "full", self.PROFILES),
                         [(None, ["--m", "--s"])])


class JsonReport(unittest.TestCase):
    def test_the_last_json_line_after_a_table(self):
        text = "$ traffic_example\nrank {layer 0}\n0 216587\n{\"ranks\": [{\"rank\": 0}]}\n"
        self.assertEqual(reproduce.json_report(text, "log", "p"), {"ranks": [{"rank": 0}]})

    def test_a_report_over_several_lines(self):
        text = "$ workload partition\n{\n \"partition\": {\"seconds\": 2}\n}\n"
        self.assertEqual(reproduce.json_report(text, "log", "p"), {"partition": {"seconds": 2}})

    def test_no_report_is_a_run_error_naming_the_log(self):
        with self.assertRaisesRegex(reproduce.RunError, "run.log: p printed no JSON report"):
            reproduce.json_report("$ p\nnothing\n", "run.log", "p")


if __name__ == "__main__":
    unittest.main()
