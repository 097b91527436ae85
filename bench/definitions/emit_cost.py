#!/usr/bin/python3
"""What the Python definition tracker's emission at a process's end costs.

    bench/definitions/emit_cost.py SITE CHECKOUT [ROUNDS]

SITE: a folder holding the tracker's modules (integrations/python/ste_site
of a ste tree; `git archive REV integrations/python/ste_site | tar -x` for
an older one). CHECKOUT: a sympy checkout (python3-mpmath installed). Each
round runs a fresh /usr/bin/python3 that starts the tracker as ste_names.py
does, with its stats counted instead of made (no interceptor), imports
sympy, integrates sin(x)*x, and times ste_defs.flush(): what every tracked
process does at exit. Prints each round's times and record counts.
"""
import os
import subprocess
import sys

CHILD = r'''
import os, sys, time
sys.path.insert(0, os.environ["SITE"])
import ste_defs
n = [0]
def _stat(path):
    n[0] += 1
ste_defs._stat = _stat
os.environ["STE_DEFINITIONS"] = os.environ["CHECKOUT"]
ste_defs.start()
sys.path.insert(0, os.environ["CHECKOUT"])
t0 = time.perf_counter()
import sympy
x = sympy.Symbol("x")
sympy.integrate(sympy.sin(x) * x, x)
t1 = time.perf_counter()
before = n[0]
ste_defs.flush()
t2 = time.perf_counter()
import ste_parts
print("import and integrate %.3f s, emission %.3f s, %d records (%d existence checks)"
      % (t1 - t0, t2 - t1, n[0] - before, len(ste_parts._absent_records)))
'''


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    site, checkout = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    env = dict(os.environ, SITE=site, CHECKOUT=checkout, PYTHONDONTWRITEBYTECODE="1")
    env.pop("STE_DEFINITIONS", None)
    for _ in range(rounds):
        done = subprocess.run(["/usr/bin/python3", "-B", "-c", CHILD], env=env, capture_output=True, text=True)
        print(done.stdout.strip() or done.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
