"""experiments/pbg_distributed.py --quick end to end: real runs beside the simulator's, bytes equal
to the plans in both, and at a larger size a slower network leaves trainers idle longer and more
machines take a shorter epoch."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments",
                      "pbg_distributed.py")


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


class QuickRun(unittest.TestCase):
    def test_tables_and_figure(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, SCRIPT, "--quick", "--output", out], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            here = rows(os.path.join(out, "pbg_distributed_this_machine.csv"))
            self.assertEqual([r["ranks"] for r in here], ["1", "2"])
            for r in here:
                self.assertEqual(r["bytes_match_plans"], "True")
                self.assertGreater(float(r["measured_epoch_s"]), 0)
                self.assertGreater(float(r["simulated_epoch_s"]), 0)
            scale = rows(os.path.join(out, "pbg_distributed.csv"))
            by = {(int(r["partitions"]), int(r["bandwidth_gbps"])): r for r in scale}
            self.assertLess(float(by[(8, 100)]["simulated_epoch_s"]),
                            float(by[(4, 100)]["simulated_epoch_s"]))
            self.assertGreater(float(by[(8, 1)]["not_training_share"]),
                               float(by[(8, 100)]["not_training_share"]))
            self.assertTrue(os.path.exists(os.path.join(out, "pbg_distributed.png")))


if __name__ == "__main__":
    unittest.main()
