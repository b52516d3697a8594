"""Specification of tests/scripts/check_test_names.py: it fails on a test
executable that lists a test case whose name holds a ';' (which CTest
would split into two tests that run nothing), passes names with ',' '['
']', and fails on an executable that lists no test case. Each case runs the
script on a fake executable: a shell script that prints names as Catch2's
--list-test-names-only does, and exits with their count as Catch2 v2 does.

    python3 tests/scripts/check_test_names_test.py
"""

import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parent / "check_test_names.py"


def run(*listings):
    """Runs the script on one fake executable per listing (a list of
    names); returns (exit code, output)."""
    with tempfile.TemporaryDirectory() as folder:
        executables = []
        for i, names in enumerate(listings):
            fake = pathlib.Path(folder) / f"fake_tests_{i}"
            lines = "".join(f"printf '%s\\n' '{n}'\n" for n in names)
            fake.write_text(f"#!/bin/sh\n{lines}exit {len(names)}\n")
            fake.chmod(0o755)
            executables.append(str(fake))
        done = subprocess.run([sys.executable, str(SCRIPT), *executables],
                              capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr


class CheckTestNames(unittest.TestCase):
    def test_plain_names_pass(self):
        code, out = run(["a kernel passes, twice", "a [run] table is read"],
                        ["one more"])
        self.assertEqual(code, 0, out)
        self.assertIn("2 test executables: no name holds a ';'", out)

    def test_a_name_with_a_semicolon_fails_naming_it(self):
        code, out = run(["fine"], ["it starts no runner; the next one does"])
        self.assertEqual(code, 1, out)
        self.assertIn("CTest would not run it: it starts no runner; the next "
                      "one does", out)
        self.assertEqual(out.count("CTest would not run it"), 1, out)

    def test_an_executable_that_lists_nothing_fails(self):
        code, out = run([])
        self.assertNotEqual(code, 0, out)
        self.assertIn("lists no test case", out)

    def test_no_executable_is_a_usage_error(self):
        code, out = run()
        self.assertNotEqual(code, 0, out)
        self.assertIn("usage", out)


if __name__ == "__main__":
    unittest.main()
