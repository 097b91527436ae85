#!/usr/bin/env python3
"""summary.py MEAS_DIR: the figures of real_suite.sh's run in MEAS_DIR.

Reads MEAS_DIR/{tests.txt, mutants.json, plain/, sel/, gt/, *.time, hf/}
and prints, per mutant: selected at definition and at file level, the test
files whose outcome (exit code and failing ids, run alone) changed from the
unmutated run (plain/), and those of them not selected (missed); then the
totals. A mutant's ground truth counts only when every file it was to run
has an outcome (gt/<id>/); the others are listed as incomplete.
"""

import json
import os
import statistics
import sys


def read(path):
    with open(path) as f:
        return f.read()


def key(test):
    return test.replace("/", "_") + ".out"


def cpu(path):
    try:
        wall, user, sys_ = read(path).split()[-3:]
        return float(wall), float(user) + float(sys_)
    except (OSError, ValueError):
        return None


def main(meas):
    tests = [l.strip() for l in open(os.path.join(meas, "tests.txt")) if l.strip()]
    n = len(tests)
    mutants = json.load(open(os.path.join(meas, "mutants.json")))
    groups = {}
    for name in os.listdir(os.path.join(meas, "gt")) if os.path.isdir(os.path.join(meas, "gt")) else []:
        if name.endswith(".ids"):
            for mid in read(os.path.join(meas, "gt", name)).split():
                groups[mid] = name[:-4]
    rows, fr_def, fr_file = [], [], []
    missed_def = missed_file = complete = teeth = 0
    incomplete = []
    for m in mutants:
        mid = m["id"]
        try:
            d = json.load(open(os.path.join(meas, "sel", mid + ".nx-def.json")))
            f = json.load(open(os.path.join(meas, "sel", mid + ".nx-file.json")))
        except OSError:
            continue
        sel_d = {t["test"] for t in d["tests"]}
        sel_f = {t["test"] for t in f["tests"]}
        changed = None
        group = groups.get(mid)
        if group is not None:
            # gt_group.sh + followup.sh: every file under the group, the
            # changed ones again under this mutant alone.
            gdir = os.path.join(meas, "gt", group)
            todo = tests
            cfile = os.path.join(meas, "gt", group + ".changed")
            gdone = [t for t in tests if os.path.exists(os.path.join(gdir, key(t)))]
            if len(gdone) == n and os.path.exists(cfile):
                gchanged = [l.strip() for l in open(cfile) if l.strip()]
                mdir = os.path.join(meas, "gt", group + "." + mid)
                if all(os.path.exists(os.path.join(mdir, key(t))) for t in gchanged):
                    changed = sorted(t for t in gchanged if read(os.path.join(mdir, key(t))) != read(os.path.join(meas, "plain", key(t))))
            if changed is None:
                incomplete.append("%s (group %s: %d/%d)" % (mid, group, len(gdone), n))
        else:
            listing = os.path.join(meas, "gt", mid + ".list")
            todo = [l.strip() for l in open(listing)] if os.path.exists(listing) else None
            gtdir = os.path.join(meas, "gt", mid)
            done = [t for t in (todo or []) if os.path.exists(os.path.join(gtdir, key(t)))]
            if todo is None or len(done) < len(todo):
                incomplete.append("%s (%d/%s)" % (mid, len(done), len(todo) if todo else "-"))
            else:
                changed = sorted(t for t in todo if read(os.path.join(gtdir, key(t))) != read(os.path.join(meas, "plain", key(t))))
        if changed is None:
            gt = None
        else:
            complete += 1
            md = [t for t in changed if t not in sel_d]
            mf = [t for t in changed if t not in sel_f]
            missed_def += len(md)
            missed_file += len(mf)
            teeth += bool(changed)
            gt = (changed, md, mf, len(todo))
        fr_def.append(len(sel_d) / n)
        fr_file.append(len(sel_f) / n)
        rows.append((m, d["mode"], len(sel_d), f["mode"], len(sel_f), gt))
    print("| mutant | file :: definition | edit | selected def | selected file | ran alone | outcome changed | missed def / file |")
    print("|---|---|---|---|---|---|---|---|")
    for m, dm, nd, fm, nf, gt in rows:
        edit = "`%s` → `%s` (line %d)" % (m["before"].strip(), m["after"].strip(), m["line"])
        if gt is None:
            g = ("—", "not run", "—")
        else:
            changed, md, mf, ran = gt
            g = (str(ran), ", ".join(t.replace("networkx/", "").replace("/tests/", "/…/") for t in changed) or "none",
                 "%d / %d" % (len(md), len(mf)))
        print("| %s | %s :: %s | %s | %d | %d | %s | %s | %s |" % (
            m["id"], m["file"].replace("networkx/", ""), m["unit"], edit, nd, nf, g[0], g[1], g[2]))
    print()
    print("test files: %d; mutants: %d, ground truth complete for %d (%d changed an outcome)" % (n, len(rows), complete, teeth))
    print("missed: definition %d, file %d" % (missed_def, missed_file))
    if fr_def:
        print("selected fraction, definition: mean %.1f%% median %.1f%%; file: mean %.1f%% median %.1f%%" % (
            100 * statistics.mean(fr_def), 100 * statistics.median(fr_def),
            100 * statistics.mean(fr_file), 100 * statistics.median(fr_file)))
    # Each group as one change: a file whose outcome changed under the
    # group must be selected by one of its mutants; one that changed under
    # the group but under none of its mutants alone is an interaction.
    for gname in sorted(set(groups.values())):
        cfile = os.path.join(meas, "gt", gname + ".changed")
        if not os.path.exists(cfile):
            continue
        gchanged = [l.strip() for l in open(cfile) if l.strip()]
        ids = [m for m, g in groups.items() if g == gname]
        union = set()
        for mid in ids:
            union |= {t["test"] for t in json.load(open(os.path.join(meas, "sel", mid + ".nx-def.json")))["tests"]}
        lone = []
        for t in gchanged:
            if not any(os.path.exists(os.path.join(meas, "gt", gname + "." + mid, key(t))) and
                       read(os.path.join(meas, "gt", gname + "." + mid, key(t))) != read(os.path.join(meas, "plain", key(t)))
                       for mid in ids):
                lone.append(t)
        print("group %s (%d mutants applied together): %d files changed, %d not selected by any of its mutants; "
              "changed under no mutant alone: %s" % (gname, len(ids), len(gchanged), len([t for t in gchanged if t not in union]),
                                                   ", ".join(lone) or "none"))
    if incomplete:
        print("ground truth incomplete: " + ", ".join(incomplete))
    for name in ("plain_each", "rec_file_pytest", "rec_def_pytest", "rec_file_generic", "rec_def_generic", "plain_one", "gt_base"):
        c = cpu(os.path.join(meas, name + ".time"))
        if c:
            print("%-18s wall %7.1f s  CPU %7.1f s" % (name, c[0], c[1]))
    hf = os.path.join(meas, "hf")
    if os.path.isdir(hf):
        for name in sorted(os.listdir(hf)):
            r = json.load(open(os.path.join(hf, name)))["results"][0]
            print("select %-22s wall median %.3f s (min %.3f), CPU %.3f s" % (
                name[:-5], r["median"], r["min"], r["user"] + r["system"]))


if __name__ == "__main__":
    main(sys.argv[1])
