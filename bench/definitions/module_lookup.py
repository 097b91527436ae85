#!/usr/bin/python3
"""What a lookup in a repository module costs under the definition tracker
(issue 24, item 5; integrations/python/ste_site/ste_parts.py, "Names added").

    bench/definitions/module_lookup.py BUILD_DIR [--rounds 5] [--hits 2000000]

The tracker makes every repository module an instance of a subclass of the
module type, to note the names looked up in it and not found. Three module
classes, the same module contents, interleaved in one process:

  plain     the module type itself (the interpreter specialises `m.x`);
  python    a subclass with __getattr__ in Python (ste_parts' fallback:
            every lookup goes through a slot wrapper, every failed one
            through a Python frame);
  compiled  a subclass of _ste_tracer.module_type (BUILD_DIR/python/):
            the module type's getattro called from C, a failed lookup
            told to a callback, a name found looked up in the set of the
            names already used (as the tracker makes it: "x" is one, as it
            is after the first emission that saw it).

For each, the time of --hits rounds of five `m.x` (found) and of --hits/10
`hasattr(m, "nope")` (not found), and the medians over --rounds. Not a test:
the machine is shared (bench/README.md).
"""

import argparse
import os
import statistics
import sys
import time
import types


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hits", type=int, default=2_000_000)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "python"))
    import _ste_tracer

    noted = []
    module_type = type(sys)

    class Python(module_type):
        def __getattr__(self, name):
            noted.append(name)
            return module_type.__getattribute__(self, name)

    looked_up, known = set(), {"x"}
    compiled = type("Compiled", (_ste_tracer.module_type(lambda m, n: noted.append(n), looked_up, known),), {})

    def make(cls):
        m = types.ModuleType("m_" + cls.__name__)
        m.x = 1
        if cls is not module_type:
            m.__class__ = cls
        return m

    def found(m, n):
        start = time.perf_counter()
        for _ in range(n):
            m.x; m.x; m.x; m.x; m.x  # noqa: B018
        return time.perf_counter() - start

    def missing(m, n):
        start = time.perf_counter()
        for _ in range(n):
            hasattr(m, "nope")
        return time.perf_counter() - start

    modules = {"plain": make(module_type), "python": make(Python), "compiled": make(compiled)}
    times = {(k, what): [] for k in modules for what in ("found", "missing")}
    for r in range(args.rounds):
        for kind, m in modules.items():
            times[kind, "found"].append(found(m, args.hits))
            times[kind, "missing"].append(missing(m, args.hits // 10))
    assert noted.count("nope") == 2 * args.rounds * (args.hits // 10), "a failed lookup was not noted"
    assert not looked_up, "a name already used was noted again"
    print("%-9s %14s %8s %18s %8s" % ("module", "5 found (s)", "/plain", "1 missing (s)", "/plain"))
    base = {w: statistics.median(times["plain", w]) for w in ("found", "missing")}
    for kind in modules:
        f, m = statistics.median(times[kind, "found"]), statistics.median(times[kind, "missing"])
        print("%-9s %14.3f %8.2f %18.3f %8.2f" % (kind, f, f / base["found"], m, m / base["missing"]))


if __name__ == "__main__":
    main()
