#!/usr/bin/env python3
"""Seeded mutants of function bodies for the definition-level measurement
(issue 12; bench/definitions/real_suite.sh runs this).

    mutants.py generate REPO PACKAGE [--seed N] [--count K] > mutants.json
    mutants.py apply REPO mutants.json ID      (write the mutant into REPO)

A mutant is one small edit inside the body of a *definition* as
integrations/python/ste_fingerprint.py defines it (a def directly in a
module's body, or in a class there): an integer constant + 1 (off by one),
a comparison flipped (< <=, > >=, == !=, is / is not, in / not in), or
+ and - swapped. Never module-level code, never a decorator, a signature, a
default value or a docstring. Each is checked with ste's own fingerprinter:
the mutated file parses, its module-level fingerprint is unchanged and
exactly one unit's fingerprint changed (the one named).

Spread: the package's modules (tests, conftest.py excluded) are grouped by
their directory; directories are visited round-robin in a seeded order and
one module of each is drawn in turn, so K mutants land in K different
modules spread over the package. Within a module: one seeded site among all
of its definitions' sites. Deterministic for a seed and a tree.
"""

import ast
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CMP_FLIP = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="),
}


def fingerprinter(integrations):
    sys.path.insert(0, os.path.join(integrations, "python"))
    import ste_fingerprint  # noqa: E402

    return ste_fingerprint.fingerprint


def offsets(source_bytes):
    starts = [0]
    for i, b in enumerate(source_bytes):
        if b == 0x0A:
            starts.append(i + 1)
    return starts


def units(tree):
    """(qualified name, FunctionDef) of every unit, as ste_fingerprint names them."""
    out = []

    def visit(body, prefix):
        seen = {}
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                seen[name] = seen.get(name, 0) + 1
                if seen[name] > 1:
                    name = "%s#%d" % (name, seen[name])
                out.append((name, node))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return out


def sites(src, tree):
    """Candidate edits: (unit, line, kind, start, end, before, after), byte offsets."""
    starts = offsets(src)

    def pos(line, col):
        return starts[line - 1] + col

    found = []
    for name, fn in units(tree):
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring is module-level (ste_fingerprint)
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Constant) and type(node.value) is int:
                    a, b = pos(node.lineno, node.col_offset), pos(node.end_lineno, node.end_col_offset)
                    text = src[a:b].decode()
                    if re.fullmatch(r"[0-9]+", text):
                        found.append((name, node.lineno, "int+1", a, b, text, str(int(text) + 1)))
                elif isinstance(node, ast.Compare):
                    left = node.left
                    op, right = node.ops[0], node.comparators[0]
                    a = pos(left.end_lineno, left.end_col_offset)
                    b = pos(right.lineno, right.col_offset)
                    gap = src[a:b].decode()
                    if isinstance(op, tuple(CMP_FLIP)):
                        old, new = CMP_FLIP[type(op)]
                        m = re.fullmatch(r"(\)*\s*)" + re.escape(old) + r"(\s*\(*)", gap)
                        if m:
                            found.append((name, node.lineno, "cmp", a, b, gap, m.group(1) + new + m.group(2)))
                    elif isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                        old = {ast.Is: "is", ast.IsNot: r"is\s+not", ast.In: "in", ast.NotIn: r"not\s+in"}[type(op)]
                        new = {ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in"}[type(op)]
                        m = re.fullmatch(r"(\)*\s+)" + old + r"(\s+\(*)", gap)
                        if m:
                            found.append((name, node.lineno, "cmp", a, b, gap, m.group(1) + new + m.group(2)))
                elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
                    a = pos(node.left.end_lineno, node.left.end_col_offset)
                    b = pos(node.right.lineno, node.right.col_offset)
                    gap = src[a:b].decode()
                    old, new = ("+", "-") if isinstance(node.op, ast.Add) else ("-", "+")
                    m = re.fullmatch(r"(\)*\s*)" + re.escape(old) + r"(\s*\(*)", gap)
                    if m:
                        found.append((name, node.lineno, "+/-", a, b, gap, m.group(1) + new + m.group(2)))
    return found


def check(fp, src, mutated, unit):
    """The mutant changes exactly `unit`'s fingerprint, not the module's."""
    try:
        m0, u0 = fp(src)
        m1, u1 = fp(mutated)
    except SyntaxError:
        return False
    if m0 != m1 or len(u0) != len(u1):
        return False
    changed = [b[3] for a, b in zip(u0, u1) if a[0] != b[0]]
    return changed == [unit]


def generate(repo, package, seed, count, integrations):
    fp = fingerprinter(integrations)
    rng = random.Random(seed)
    by_dir = {}
    for d, dirs, files in os.walk(os.path.join(repo, package)):
        dirs[:] = sorted(x for x in dirs if x not in ("tests", "__pycache__"))
        for f in sorted(files):
            if f.endswith(".py") and f != "conftest.py" and not f.startswith("test_"):
                rel = os.path.relpath(os.path.join(d, f), repo)
                by_dir.setdefault(os.path.dirname(rel), []).append(rel)
    dirs = sorted(by_dir)
    rng.shuffle(dirs)
    for d in dirs:
        rng.shuffle(by_dir[d])
    out = []
    while len(out) < count and any(by_dir.values()):
        for d in dirs:
            if len(out) >= count or not by_dir[d]:
                continue
            rel = by_dir[d].pop()
            src = open(os.path.join(repo, rel), "rb").read()
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            cands = sites(src, tree)
            rng.shuffle(cands)
            for unit, line, kind, a, b, before, after in cands:
                mutated = src[:a] + after.encode() + src[b:]
                if check(fp, src, mutated, unit):
                    out.append({"id": "m%02d" % (len(out) + 1), "file": rel, "unit": unit, "line": line,
                                "kind": kind, "start": a, "end": b, "before": before, "after": after})
                    break
    return out


def apply(repo, mutants, mid):
    m = next(x for x in mutants if x["id"] == mid)
    path = os.path.join(repo, m["file"])
    src = open(path, "rb").read()
    assert src[m["start"]:m["end"]].decode() == m["before"], "tree differs from the one mutants were made for"
    open(path, "wb").write(src[:m["start"]] + m["after"].encode() + src[m["end"]:])


def main(argv):
    if len(argv) >= 3 and argv[0] == "generate":
        seed, count = 12, 24
        rest = argv[3:]
        while rest:
            if rest[0] == "--seed":
                seed = int(rest[1])
            elif rest[0] == "--count":
                count = int(rest[1])
            else:
                raise SystemExit("unknown option " + rest[0])
            rest = rest[2:]
        integrations = os.environ.get("STE_INTEGRATIONS") or os.path.join(HERE, "..", "..", "integrations")
        json.dump(generate(argv[1], argv[2], seed, count, integrations), sys.stdout, indent=1)
        print()
    elif len(argv) == 4 and argv[0] == "apply":
        apply(argv[1], json.load(open(argv[2])), argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
