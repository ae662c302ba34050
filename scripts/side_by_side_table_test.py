#!/usr/bin/env python3
"""scripts/side-by-side-table.py on a small log: ratios to llama.cpp of the
same round (its default build unlimited, the plain one under a limit),
prediction errors and their summary (at the profile's rates and at the rates
rechecked around each run, or only the first for a log without rechecks),
and runs that left no figure (a killed llama.cpp, a failed replay) shown as
"-" without a ratio or an error."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "side-by-side-table.py")

LOG = """round\tshare\tsystem\tconfiguration\tmeasured\tpredicted\tpredicted_now
1\tnone\tllama.cpp\tdefault\t5.0\t-\t-
1\tnone\tsparseflash\tin_memory sparse=true\t10.0\t11.0\t10.0
1\tnone\tllama.cpp\tplain\t4.0\t-\t-
1\t0.5\tllama.cpp\tplain\t0.5\t-\t-
1\t0.5\tsparseflash\tpowerinfer2\t4.0\t3.0\t4.4
1\t0.5\tsparseflash\tllamacpp mmap=true\t0.8\t1.0\t0.8
2\tnone\tllama.cpp\tdefault\t8.0\t-\t-
2\tnone\tsparseflash\tin_memory sparse=true\t12.0\t11.0\t12.6
2\tnone\tllama.cpp\tplain\t4.0\t-\t-
2\t0.5\tllama.cpp\tplain\tkilled\t-\t-
2\t0.5\tsparseflash\tpowerinfer2\t6.0\t3.0\t-
2\t0.5\tsparseflash\tllamacpp mmap=true\tfailed\t-\t-
"""


class SideBySideTable(unittest.TestCase):
    def setUp(self):
        fd, self.log = tempfile.mkstemp(suffix=".tsv")
        with os.fdopen(fd, "w") as f:
            f.write(LOG)
        self.out = subprocess.run([sys.executable, SCRIPT, self.log], check=True,
                                  capture_output=True, text=True).stdout
        self.lines = self.out.splitlines()

    def tearDown(self):
        os.remove(self.log)

    def row(self, start, tables=1):
        """The cells of the row starting `start` in the first table; `tables`:
        how many tables have such a row."""
        found = [l for l in self.lines if l.startswith(start)]
        self.assertEqual(len(found), tables, f"rows starting {start!r} in:\n{self.out}")
        return [c.strip() for c in found[0].strip("|").split("|")]

    def test_ratios_are_to_llama_cpp_of_the_same_round(self):
        # Unlimited against the default build: 10/5 and 12/8, not the plain build's 4.
        self.assertEqual(self.row("| unlimited | sparseflash in_memory")[3], "1.5-2.0x")
        # Under a limit against the plain build; round 2's llama.cpp was killed.
        self.assertEqual(self.row("| 50% of the file | sparseflash powerinfer2")[3], "8.0-8.0x")

    def test_measured_and_predicted_round_by_round(self):
        self.assertEqual(self.row("| unlimited | sparseflash in_memory")[2], "10, 12 (11, 11)")
        self.assertEqual(self.row("| 50% of the file | llama.cpp plain")[2], "0.5, -")
        self.assertEqual(self.row("| 50% of the file | sparseflash llamacpp")[2], "0.8, - (1, -)")

    def test_errors_are_predicted_over_measured_less_one(self):
        errors = self.row("| none | in_memory sparse=true", tables=2)
        self.assertEqual(errors[2], "+10.0%, -8.3%")
        self.assertEqual(errors[3:], ["9.2%", "10.0%"])
        # The failed replay adds no error.
        self.assertEqual(self.row("| 0.5 | llamacpp mmap=true", tables=2)[2], "+25.0%")

    def test_errors_at_the_rechecked_rates_have_their_own_table(self):
        self.assertIn("| memory | configuration | errors at the rates checked around "
                      "each run | median abs. | max abs. |", self.out)
        # The second of each row, after the table of errors at the profile's rates.
        rows = [l for l in self.lines if l.startswith("| none | in_memory sparse=true")]
        self.assertEqual(len(rows), 2)
        self.assertIn("| +0.0%, +5.0% | 2.5% | 5.0% |", rows[1])
        self.assertIn("- powerinfer2 and llmflash at 50 and 75 % at the rechecked rates: 1 run, "
                      "median abs. error 10.0%, max 10.0%", self.out)

    def test_a_log_without_rechecks_has_one_table_of_errors(self):
        with open(self.log, "w") as f:
            f.write("\n".join(l.rsplit("\t", 1)[0] for l in LOG.splitlines()) + "\n")
        out = subprocess.run([sys.executable, SCRIPT, self.log], check=True,
                             capture_output=True, text=True).stdout
        self.assertIn("| 0.5 | powerinfer2 | -25.0%, -50.0% | 37.5% | 50.0% |", out)
        self.assertNotIn("checked around", out)

    def test_summary_groups_the_sparse_strategies_and_llamacpp(self):
        self.assertIn("- powerinfer2 and llmflash at 50 and 75 %: 2 runs, median abs. error "
                      "37.5%, max 50.0%", self.out)
        self.assertIn("- llamacpp at every limit: 1 run, median abs. error 25.0%, max 25.0%",
                      self.out)


if __name__ == "__main__":
    unittest.main()
