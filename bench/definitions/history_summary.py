#!/usr/bin/env python3
"""history_summary.py RUN_DIR [--gt-plan K | --gt GT_DIR]: the figures of
history_replay.sh's run in RUN_DIR.

RUN_DIR/<level>/NN.{tests,base,changed,select.json,select.err,select.time,
record.time} for each level (definition, file) and commit index NN.

--gt-plan K: choose up to K commits whose definition-level selection is a
strict subset (those changing a .py or .rb outside the test directories,
tests/, test/ and spec/, first, then the others, each in history order),
write RUN_DIR/gt/NN.unselected (the test files of c_i not selected at one
level or the other) and NN.partial (those selected at definition level as
some of their cases: history_replay.sh's UNIT=case) and print "gt NN".

With NN.cases (UNIT=case: c_i's pytest node ids), the fraction of cases
selected too (a file selected whole counts all its cases, a file that
lists none counts as one), and at case level a case not selected whose
outcome at c_i (its file run whole) differs from the baseline's is a miss.

--gt GT_DIR (or no flag): per commit, each level's selected/total, mode and
reasons; the ground truth of GT_DIR/<commit>/ where it was run (a file
whose outcome at c_i differs from its outcome at the baseline's commit,
a clean pass there when not run: ste selects a baseline failure); the
misses; mean and median selected fraction per level; record times.
"""

import collections
import json
import os
import statistics
import sys

LEVELS = ("definition", "file")


def lines(path):
    try:
        with open(path) as f:
            return [l.rstrip("\n") for l in f if l.strip()]
    except OSError:
        return []


def shown(path):
    """A definition view as --explain names it."""
    return str(path).replace("/\x01ste-def:", "::").replace("/\x01ste-def", ": module-level code")


def key(test):
    return test.replace("/", "_") + ".out"


class Sel:
    def __init__(self, run, level, nn):
        p = os.path.join(run, level, nn)
        self.tests = lines(p + ".tests")
        self.changed = lines(p + ".changed")
        self.base = (lines(p + ".base") or [""])[0]
        try:
            self.doc = json.load(open(p + ".select.json"))
        except (OSError, ValueError):
            self.doc = None
        self.err = " ".join(lines(p + ".select.err"))
        t = lines(p + ".select.time")
        self.seconds = float(t[-1].split()[0]) if t else None
        self.cases = {}  # file -> its selected cases, for a file selected as some
        if self.doc is None:
            self.mode, self.reason, self.selected = "error", self.err, set(self.tests)
        else:
            self.mode, self.reason = self.doc.get("mode"), self.doc.get("reason", "")
            self.selected = {t["test"] for t in self.doc.get("tests", [])}
            self.cases = {t["test"]: t["cases"] for t in self.doc.get("tests", []) if "cases" in t}
        self.collected = None  # file -> how many cases it has (UNIT=case)
        if os.path.exists(p + ".cases"):
            self.collected = collections.Counter(l.split("::")[0] for l in lines(p + ".cases"))
        self.run_times = [lines(p + s) for s in (".run-cases.time", ".run-files.time")]

    def fraction(self):
        return len(self.selected & set(self.tests)) / len(self.tests) if self.tests else 0.0

    def case_counts(self):
        """(cases selected, cases) at c_i, or None without NN.cases."""
        if self.collected is None or not self.tests:
            return None
        size = {t: max(1, self.collected.get(t, 0)) for t in self.tests}
        chosen = sum(len(self.cases[t]) if t in self.cases else size[t] for t in self.selected if t in size)
        return chosen, sum(size.values())

    def run_seconds(self):
        """(the runner line's wall, its files' wall), or None."""
        if not all(self.run_times):
            return None
        return tuple(float(t[-1].split()[0]) for t in self.run_times)

    def reasons(self, top=6):
        """The changes that selected tests, with how many tests each."""
        if self.doc is None:
            return ["error: " + self.err]
        count = collections.Counter()
        for t in self.doc.get("tests", []):
            rs = t.get("reasons", [])
            for r in rs:
                count["%s (%s %s)" % (shown(r.get("path")), r.get("kind"), r.get("change"))] += 1
            if t.get("more_reasons"):
                count["(+more reasons)"] += 1
        out = ["%d <- %s" % (n, r) for r, n in count.most_common(top)]
        if len(count) > top:
            out.append("... %d more distinct reasons" % (len(count) - top))
        for w in self.doc.get("wide", []):
            out.append("wide: %s (%s %s) -> %s tests" % (shown(w.get("path")), w.get("kind"), w.get("change"), w.get("tests")))
        return out


def indices(run):
    return sorted(f[:2] for f in os.listdir(os.path.join(run, "definition")) if f.endswith(".select.json"))


TEST_DIRS = {"tests", "test", "spec"}


def source_change(sel):
    return any(p.endswith((".py", ".rb")) and not TEST_DIRS & set(p.split("/")[:-1])
               for p in sel.changed)


def plan(run, k):
    rows = []
    for nn in indices(run):
        d = Sel(run, "definition", nn)
        if d.mode != "all" and (len(d.selected) < len(d.tests) or d.cases):
            rows.append((not source_change(d), nn, d))
    os.makedirs(os.path.join(run, "gt"), exist_ok=True)
    for _, nn, d in sorted(rows)[:k]:
        f = Sel(run, "file", nn) if os.path.isdir(os.path.join(run, "file")) else d
        both = d.selected & f.selected
        with open(os.path.join(run, "gt", nn + ".unselected"), "w") as fh:
            fh.write("".join(t + "\n" for t in d.tests if t not in both))
        with open(os.path.join(run, "gt", nn + ".partial"), "w") as fh:
            fh.write("".join(t + "\n" for t in sorted(d.cases)))
        print("gt", nn)


def outcome(gt, commit, test):
    p = os.path.join(gt, commit, key(test))
    return open(p).read() if os.path.exists(p) else None


def outcomes(gt, commit, base, test):
    """(test's outcome at commit, at base), or None when it was not run at
    commit. Not run at base: a clean pass (ste selects a baseline failure)."""
    now = outcome(gt, commit, test)
    return None if now is None else (now, outcome(gt, base, test) or "rc 0\n")


def summary(run, gt):
    commits = lines(os.path.join(run, "commits.txt"))
    levels = [l for l in LEVELS if os.path.isdir(os.path.join(run, l))]
    print("# %s" % " ".join(lines(os.path.join(run, "ste-version.txt"))))
    print("# commits c_0..c_%d: %s..%s" % (len(commits) - 1, commits[0][:10], commits[-1][:10]))
    frac = {l: [] for l in levels}
    case_frac = {l: [] for l in levels}
    run_secs = []
    misses = {l: [] for l in levels}
    case_misses = []
    gt_rows = []
    for nn in indices(run):
        i = int(nn)
        sels = {l: Sel(run, l, nn) for l in levels}
        any_sel = next(iter(sels.values()))
        print("\n## c_%d %s (base c_%d %s), %d changed: %s" % (
            i, commits[i][:10], commits.index(any_sel.base) if any_sel.base in commits else -1,
            any_sel.base[:10], len(any_sel.changed), " ".join(any_sel.changed[:8]) +
            (" ..." if len(any_sel.changed) > 8 else "")))
        for l, s in sels.items():
            frac[l].append(s.fraction())
            print("  %-10s %3d/%d  mode %s%s  select %.2fs" % (
                l, len(s.selected & set(s.tests)), len(s.tests), s.mode,
                (": " + s.reason) if s.reason else "", s.seconds or 0))
            counts = s.case_counts()
            if counts:
                case_frac[l].append(counts[0] / counts[1])
                print("  %-10s cases %d/%d (%d files as some of their cases)" % ("", counts[0], counts[1], len(s.cases)))
            if l == "definition" and s.run_seconds():
                run_secs.append(s.run_seconds())
                print("  %-10s run without ste: the runner line %.2fs, its files whole %.2fs" % (("",) + s.run_seconds()))
            for r in s.reasons():
                print("      " + r)
        unsel = lines(os.path.join(run, "gt", nn + ".unselected"))
        if unsel and gt:
            base = any_sel.base
            ran, changed, missing = 0, [], 0
            for t in unsel:
                got = outcomes(gt, commits[i], base, t)
                if got is None:
                    missing += 1
                    continue
                ran += 1
                now, before = got
                if now.strip() != before.strip():
                    changed.append(t)
            gt_rows.append((nn, len(unsel), ran, missing, changed))
            print("  ground truth: %d unselected files (either level), %d run%s, %d changed outcome" % (
                len(unsel), ran, (", %d NOT RUN" % missing) if missing else "", len(changed)))
            for t in changed:
                who = [l for l in levels if t not in sels[l].selected]
                for l in who:
                    misses[l].append((nn, t))
                print("    changed: %s  (not selected at: %s)" % (t, ", ".join(who) or "-"))
        partial = lines(os.path.join(run, "gt", nn + ".partial"))
        if partial and gt:
            d = sels["definition"]
            checked, missing = 0, 0
            for t in partial:
                got = outcomes(gt, commits[i], any_sel.base, t)
                if got is None:
                    missing += 1
                    continue
                checked += 1
                now, before = got
                if now.strip() == before.strip():
                    continue
                # the ids whose outcome changed, less the cases selected
                ids = set(now.split("\n")[1:]) ^ set(before.split("\n")[1:])
                chosen = {"%s::%s" % (t, c) for c in d.cases.get(t, [])}
                left = sorted(x for x in ids if x and x.split(" ", 1)[-1] not in chosen)
                if not ids:  # only the exit status moved: the file is unknown
                    left = ["%s: %s -> %s" % (t, before.split("\n")[0], now.split("\n")[0])]
                for x in left:
                    case_misses.append((nn, x))
                print("    file selected as cases, outcome changed: %s (%d ids not selected)" % (t, len(left)))
            print("  ground truth (cases): %d files selected as some of their cases run whole%s" % (
                checked, (", %d NOT RUN" % missing) if missing else ""))
    print("\n# totals over %d commits" % len(frac[levels[0]]))
    for l in levels:
        fs = frac[l]
        print("  %-10s selected fraction: mean %.3f, median %.3f; all: %d commits, none: %d; misses: %d" % (
            l, statistics.mean(fs), statistics.median(fs), sum(1 for f in fs if f >= 1.0),
            sum(1 for f in fs if f == 0.0), len(misses[l])))
        for nn, t in misses[l]:
            print("    MISS c_%s %s" % (nn, t))
        if case_frac[l]:
            cf = case_frac[l]
            print("  %-10s selected fraction of cases: mean %.3f, median %.3f; all: %d commits, none: %d" % (
                l, statistics.mean(cf), statistics.median(cf), sum(1 for f in cf if f >= 1.0),
                sum(1 for f in cf if f == 0.0)))
    if case_frac.get("definition"):
        print("  case-level misses (a case not selected whose outcome changed): %d" % len(case_misses))
        for nn, x in case_misses:
            print("    CASE MISS c_%s %s" % (nn, x))
    if run_secs:
        print("  running the selections without ste (%d commits): the runner lines %.1fs, their files whole %.1fs" % (
            len(run_secs), sum(r[0] for r in run_secs), sum(r[1] for r in run_secs)))
    print("  ground truth: %d commits, %d unselected files run, %d not run" % (
        len(gt_rows), sum(r[2] for r in gt_rows), sum(r[3] for r in gt_rows)))
    for l in levels:
        recs = []
        for f in sorted(os.listdir(os.path.join(run, l))):
            t = lines(os.path.join(run, l, f)) if f.endswith(".record.time") else []
            if t:
                w, u, s = t[-1].split()[-3:]
                recs.append((f[:2], float(w), float(u) + float(s)))
        print("  %-10s record (wall, user+sys): %s" % (
            l, "; ".join("c_%s %.0fs %.0fs" % r for r in recs)))
        if recs:
            print("  %-10s record median: wall %.0fs, cpu %.0fs" % (
                l, statistics.median(r[1] for r in recs), statistics.median(r[2] for r in recs)))


def main(argv):
    run = argv[0]
    if len(argv) > 2 and argv[1] == "--gt-plan":
        plan(run, int(argv[2]))
    else:
        summary(run, argv[2] if len(argv) > 2 and argv[1] == "--gt" else None)


if __name__ == "__main__":
    main(sys.argv[1:])
