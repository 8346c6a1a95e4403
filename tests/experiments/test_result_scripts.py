"""The result scripts' arithmetic: the cost model's time per op kind that compare_op_kinds.py
prints, and the bytes per rank that validation_table.py reports."""
import importlib.util
import os
import sys
import unittest

EXPERIMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXPERIMENTS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compare_op_kinds = load("compare_op_kinds")
validation_table = load("validation_table")


class ModelledSeconds(unittest.TestCase):
    def test_is_linear_in_count_and_work(self):
        cost = {"fixed_seconds": 1e-3, "memory_bytes_per_second": 1e10,
                "dense_flops_per_second": 5e10}
        work = {"memory_bytes": 1e9, "dense_flops": 1e10, "sparse_flops": 0.0}
        self.assertAlmostEqual(compare_op_kinds.modelled_seconds(cost, 4, work),
                               4e-3 + 0.1 + 0.2, places=12)

    def test_work_without_a_rate_has_no_modelled_time(self):
        cost = {"fixed_seconds": 1e-3, "memory_bytes_per_second": 1e10}
        self.assertIsNone(compare_op_kinds.modelled_seconds(cost, 1, {"sparse_flops": 1.0}))


class BytesSentPerRank(unittest.TestCase):
    def test_the_total_is_not_counted_twice(self):
        run = {"epochs": [{}, {}],
               "ranks": [{"bytes_sent": {"features": 300, "gradients": 100, "total": 400}},
                         {"bytes_sent": {"features": 500, "gradients": 100, "total": 600}}]}
        self.assertEqual(validation_table.measured_bytes_sent_per_rank(run), 250)

    def test_kinds_without_a_total_are_summed(self):
        run = {"epochs": [{}], "ranks": [{"bytes_sent": {"features": 30, "gradients": 10}}]}
        self.assertEqual(validation_table.measured_bytes_sent_per_rank(run), 40)


if __name__ == "__main__":
    sys.exit(unittest.main())
