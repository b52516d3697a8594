#!/usr/bin/env python3
"""Checks that every template's declared constraints (task.toml) agree with
the invalid-combination assertions of its source, over every instance.

    python3 scripts/check-constraints.py [KERNELS_DIR]

For each family and each instance of its parameter space, the source's
`constexpr` definitions and `static_assert(..., "invalid combination: ...")`
conditions are evaluated with the instance's values (C integer arithmetic),
and so are the declared constraints; the two verdicts must be equal, and an
assertion the script cannot evaluate counts as a failure ("cannot check"). A
template whose source picks its vector width from the ISA (`vw`, `vregs`) is
checked on the AVX-512, AVX2 and SSE targets, with the target facts the CPU
device reads from the compiler (docs/tasks.md). The two preprocessor rules
between text parameters (rmsnorm `aligned`: stream stores need align=peel;
softmax `chunked`: ahead > 0 needs an in-place path) are written out
below. Prints the mismatches and a summary; exits 1 on any mismatch or
assertion it cannot evaluate. Needs Python 3.11
(tomllib). CI runs it as the CTest test kernels/template_constraints
(tests/CMakeLists.txt), beside `eat tasks check`, which compiles a sample of
instances; tests/scripts/check_constraints_test.py specifies it.
"""

import itertools
import pathlib
import re
import sys
import tomllib

TARGETS = {
    "avx512": {"simd_floats": 16, "vector_registers": 32, "vw": 16, "vregs": 32},
    "avx2": {"simd_floats": 8, "vector_registers": 16, "vw": 8, "vregs": 16},
    "sse": {"simd_floats": 4, "vector_registers": 16, "vw": 4, "vregs": 16},
}

STATEMENT = re.compile(
    r'constexpr\s+(?:int|int64_t|bool)\s+(\w+)\s*=\s*'
    r'((?:[^;{]|\{\{\w+\}\})+);'
    r'|static_assert\(([^;]*?),\s*"invalid combination', re.S)

SIZES = {"float": 4, "int": 4, "int32_t": 4, "uint32_t": 4, "double": 8,
         "int64_t": 8, "uint64_t": 8}


def as_python(expr):
    """A C expression over integers as a Python expression: logic, integer
    division, true and false, sizeof of the scalar types, and one
    unparenthesised ternary `a ? b : c`."""
    e = " ".join(expr.split()).replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"!(?!=)", " not ", e).replace("/", "//")
    e = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", e))
    e = re.sub(r"sizeof\((\w+)\)", lambda m: str(SIZES[m.group(1)]), e)
    ternary = re.fullmatch(r"([^?:]+)\?([^?:]+):([^?:]+)", e)
    if ternary:
        a, b, c = ternary.groups()
        e = f"({b}) if ({a}) else ({c})"
    return e


def preprocessor_valid(family, values):
    if family == "aligned":
        return values.get("store") != "stream" or values.get("align") == "peel"
    if family == "chunked" and "ahead" in values:
        return (values["ahead"] == "0" or values.get("short_rows") == "in_place"
                or values.get("long_rows") == "in_place")
    return True


class Unchecked(Exception):
    """An invalid-combination assertion the script cannot evaluate."""


def source_valid(statements, values, facts):
    env = dict(facts)
    env.update({k: int(v) if v.lstrip("-").isdigit() else v
                for k, v in values.items()})
    for name, expr, condition in statements:
        text = expr or condition
        for k, v in values.items():
            text = text.replace("{{" + k + "}}", v)
        try:
            if "{{" in text:
                raise ValueError("a placeholder that is no parameter")
            value = eval(as_python(text), {}, env)
        except Exception as e:
            # A definition no assertion needs may stay unevaluated (one
            # that an assertion needs makes that assertion fail below);
            # an assertion may not.
            if name:
                continue
            raise Unchecked(f"static_assert({' '.join(text.split())}): "
                            f"{type(e).__name__}: {e}") from None
        if name:
            if name not in facts:
                env[name] = value
        elif not value:
            return False
    return True


def declared_valid(constraints, values, facts):
    env = dict(facts)
    env.update({k: int(v) if v.lstrip("-").isdigit() else v
                for k, v in values.items()})
    return all(eval(as_python(c), {}, env) for c in constraints)


def main():
    kernels = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "kernels")
    checked = mismatches = 0
    for task_file in sorted(kernels.glob("*/task.toml")):
        task = tomllib.loads(task_file.read_text())
        for family in task.get("templates", []):
            source = (task_file.parent / family["source"]).read_text()
            statements = [m.groups() for m in STATEMENT.finditer(source)]
            names = [p["name"] for p in family["params"]]
            spaces = [[str(v) for v in p["values"]] for p in family["params"]]
            targets = TARGETS if re.search(r"\bvregs\b", source) else {"any": {}}
            for target, facts in targets.items():
                excluded = 0
                for combo in itertools.product(*spaces):
                    values = dict(zip(names, combo))
                    try:
                        by_source = (source_valid(statements, values, facts)
                                     and preprocessor_valid(family["name"],
                                                            values))
                    except Unchecked as e:
                        mismatches += 1
                        checked += 1
                        print(f"cannot check: {task_file.parent.name} "
                              f"{family['name']} ({target}) {values}: {e}")
                        continue
                    by_declaration = declared_valid(
                        family.get("constraints", []), values, facts)
                    checked += 1
                    excluded += not by_declaration
                    if by_source != by_declaration:
                        mismatches += 1
                        print(f"mismatch: {task_file.parent.name} "
                              f"{family['name']} ({target}) {values}: source "
                              f"says {by_source}, constraints {by_declaration}")
                size = len(list(itertools.product(*spaces)))
                print(f"{task_file.parent.name} {family['name']} ({target}): "
                      f"{excluded} of {size} excluded")
    print(f"{checked} instance-target pairs checked, {mismatches} mismatches")
    if checked == 0:
        print(f"no template instances under {kernels}", file=sys.stderr)
        return 1
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
