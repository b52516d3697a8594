"""Every Catch2 test case is one CTest test that runs it: no name holds a
';'. catch_discover_tests made two CTest tests of such a name (CMake
splits lists there), each running a filter that matched no test case,
which Catch2 v2 passes: six test cases ran in no CTest run before this
check. (',' '[' ']' are escaped in the filter and match.)

    python3 tests/scripts/check_test_names.py EXECUTABLE...
"""

import subprocess
import sys

FORBIDDEN = ";"


def bad_names(executable):
    """The test case names of `executable` that hold a FORBIDDEN
    character."""
    # Catch2 v2 exits with the number of test cases listed.
    listed = subprocess.run([executable, "--list-test-names-only"],
                            capture_output=True, text=True, check=False)
    names = [n for n in listed.stdout.splitlines() if n.strip()]
    if not names:
        raise SystemExit(f"{executable}: lists no test case")
    return [n for n in names if any(c in n for c in FORBIDDEN)]


def main(executables):
    if not executables:
        raise SystemExit("usage: check_test_names.py EXECUTABLE...")
    failed = False
    for executable in executables:
        for name in bad_names(executable):
            failed = True
            print(f"{executable}: test case name holds a '{FORBIDDEN}', so"
                  f" CTest would not run it: {name}")
    if failed:
        return 1
    print(f"{len(executables)} test executables: no name holds a "
          f"'{FORBIDDEN}'")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
