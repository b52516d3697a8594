"""Specification of scripts/check-constraints.py: a template's declared
constraints must agree with its source's invalid-combination assertions on
every instance, and an assertion the script cannot evaluate fails the check
instead of passing unseen. Each case writes a task folder with one template
and runs the script on it.

    python3 tests/scripts/check_constraints_test.py
"""

import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / \
    "check-constraints.py"


def run(source, constraints):
    """Runs the script on a task whose template `tiled` has parameters
    tile in {1, 2, 4, 8} and unroll in {1, 2}; returns (exit code, output)."""
    with tempfile.TemporaryDirectory() as kernels:
        task = pathlib.Path(kernels) / "toy"
        task.mkdir()
        (task / "tiled.cpp.in").write_text(source)
        declared = ", ".join(f'"{c}"' for c in constraints)
        (task / "task.toml").write_text(f"""
[[templates]]
name = "tiled"
source = "tiled.cpp.in"
constraints = [{declared}]

[[templates.params]]
name = "tile"
values = [1, 2, 4, 8]

[[templates.params]]
name = "unroll"
values = [1, 2]
""")
        done = subprocess.run([sys.executable, str(SCRIPT), kernels],
                              capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr


class CheckConstraints(unittest.TestCase):
    def test_agreeing_constraints_pass(self):
        code, out = run('constexpr int tile = {{tile}};\n'
                        'static_assert(tile * {{unroll}} <= 8, '
                        '"invalid combination: tile * unroll > 8");\n',
                        ["tile * unroll <= 8"])
        self.assertEqual(code, 0, out)
        self.assertIn("8 instance-target pairs checked, 0 mismatches", out)
        self.assertIn("toy tiled (any): 1 of 8 excluded", out)

    def test_an_undeclared_assertion_is_a_mismatch(self):
        code, out = run('static_assert({{tile}} <= 4, '
                        '"invalid combination: tile > 4");\n', [])
        self.assertEqual(code, 1, out)
        self.assertIn("mismatch: toy tiled (any) {'tile': '8', 'unroll': '1'}"
                      ": source says False, constraints True", out)

    def test_a_definition_from_a_placeholder_is_evaluated(self):
        # Until 2026-12-04 `constexpr int rows = {{tile}};` was not read (its
        # braces), and an assertion over `rows` was skipped unseen.
        code, out = run('constexpr int rows = {{tile}};\n'
                        'static_assert(rows <= 4, "invalid combination: '
                        'rows > 4");\n', [])
        self.assertEqual(code, 1, out)
        self.assertIn("2 mismatches", out)

    def test_true_false_sizeof_and_a_ternary_are_evaluated(self):
        code, out = run('constexpr bool wide = true;\n'
                        'constexpr int bytes = {{tile}} * sizeof(float);\n'
                        'constexpr int step = wide ? {{unroll}} : 1;\n'
                        'static_assert(bytes * step <= 32, '
                        '"invalid combination: too wide");\n',
                        ["tile * 4 * unroll <= 32"])
        self.assertEqual(code, 0, out)
        self.assertIn("1 of 8 excluded", out)

    def test_an_assertion_it_cannot_evaluate_fails(self):
        code, out = run('static_assert(fits({{tile}}), '
                        '"invalid combination: does not fit");\n', [])
        self.assertEqual(code, 1, out)
        self.assertIn("cannot check: toy tiled (any)", out)
        self.assertIn("static_assert(fits(1)): NameError", out)


if __name__ == "__main__":
    unittest.main()
