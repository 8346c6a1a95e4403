"""experiments/pbg_single_machine.py end to end on a small planted graph: one row per partition
count and store, swaps only where partitions are swapped, the same model in memory and on disk."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments",
                      "pbg_single_machine.py")


class SmallRun(unittest.TestCase):
    def test_rows_and_swaps(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, SCRIPT, "--entities", "3000", "--degree", "5",
                            "--dimension", "16", "--partitions", "1,3", "--output", out],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(os.path.join(out, "pbg_single_machine.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([(r["partitions"], r["store"]) for r in rows],
                             [("1", "memory"), ("3", "memory"), ("3", "disk")])
            self.assertEqual(float(rows[0]["swapped_mib_per_epoch"]), 0.0)
            self.assertGreater(float(rows[2]["swapped_mib_per_epoch"]), 0.0)
            self.assertEqual(rows[1]["filtered_mrr"], rows[2]["filtered_mrr"])
            self.assertFalse(os.path.exists(os.path.join(out, "swap-3")))


if __name__ == "__main__":
    unittest.main()
