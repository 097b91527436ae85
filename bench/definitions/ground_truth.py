#!/usr/bin/env python3
"""Ground truth for a mutant: every test file run alone with plain pytest
(or minitest), no ste anywhere.

    ground_truth.py REPO OUTDIR LIST_OF_TEST_FILES [--fresh | --minitest]

Each test file runs in a process of its own, one at a time, as
`pytest -q -p no:cacheprovider -p no:randomly -rfE FILE`. By default that
process is a fork of a parent that imported pytest and the package under
test (REPO's, as it is now: the mutant) and nothing else; the child runs
pytest.main on the one file, so each file has its own pytest session and
its own process, and the per-process start-up (Python, pytest, the package:
~0.7 s of CPU for networkx, most of a file's cost) is paid once per mutant.
--fresh: a new `python3 -m pytest` process per file instead (what
run_each.sh does). real_suite.sh checks, on the unchanged tree, that both
give the same outcome for every file.
--minitest: a Ruby suite (history_replay.sh, LANG_KIND=ruby): each file in
a new `ruby -Ilib -Itest FILE --seed 1` process (what rake's test task
loads; one seed, so that the order is the same at every tree; Ruby and the
library start in ~0.2 s, so nothing is shared), its outcome the
"Class#test_name" of each `N) Failure:` / `N) Error:` it reports.

$GT_PYTEST_ARGS: more pytest arguments (history_replay.sh passes the
ones its record used).

OUTDIR/<file with / as _>.out: "rc N" then the sorted FAILED/ERROR ids (the
file's outcome; minitest's without the " [file:line]" of a failure, which
moves with any edit above it). A file that used $TIMEOUT s of CPU (default
300) is killed by SIGXCPU: rc -24 (--fresh: $TIMEOUT s of wall, rc -14).
"""

import os
import re
import shlex
import subprocess
import sys


def failed_ids(log):
    """pytest's -rfE summary lines."""
    return [re.sub(r" - .*", "", l.rstrip("\n")) for l in open(log, errors="replace")
            if l.startswith(("FAILED ", "ERROR "))]


def minitest_failed_ids(log):
    """The line after each "  N) Failure:" / "  N) Error:" header."""
    ids, kind = [], None
    for l in open(log, errors="replace"):
        if kind:
            ids.append("%s %s" % (kind, re.sub(r"( \[.*\])?:$", "", l.rstrip("\n"))))
            kind = None
        m = re.match(r"\s*\d+\) (Failure|Error):$", l.rstrip("\n"))
        kind = m and m.group(1).upper()
    return ids


def outcome(rc, ids):
    return "rc %d\n" % rc + "".join(i + "\n" for i in sorted(ids))


def limit_cpu(seconds):
    # CPU seconds, not wall: on a loaded machine a nice'd child can wait
    # minutes for a core (a wall-clock alarm made a 4 s file "time out"
    # under load 13).
    import resource
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))


def main(argv):
    fresh, minitest = "--fresh" in argv, "--minitest" in argv
    argv = [a for a in argv if a not in ("--fresh", "--minitest")]
    repo, out, listing = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2]
    files = [l.strip() for l in open(listing) if l.strip()]
    timeout = int(os.environ.get("TIMEOUT", "300"))
    os.makedirs(out, exist_ok=True)
    os.chdir(repo)
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rfE"]
    args += shlex.split(os.environ.get("GT_PYTEST_ARGS", ""))
    if not fresh and not minitest:
        sys.path.insert(0, repo)
        import pytest  # noqa: F401
        package = os.environ.get("GT_PACKAGE", "networkx")
        try:
            __import__(package)
        except Exception:
            pass  # a mutant that breaks the import: each child sees it too
    for f in files:
        key = f.replace("/", "_")
        log = os.path.join(out, key + ".log")
        if minitest:
            with open(log, "wb") as fh:
                rc = subprocess.run(["ruby", "-Ilib", "-Itest", f, "--seed", "1"], stdout=fh,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    preexec_fn=lambda: limit_cpu(timeout)).returncode
        elif fresh:
            with open(log, "wb") as fh:
                try:
                    rc = subprocess.run([sys.executable, "-m", "pytest"] + args + [f], stdout=fh,
                                        stderr=subprocess.STDOUT, timeout=timeout).returncode
                except subprocess.TimeoutExpired:
                    rc = -14
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 70
                try:
                    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    limit_cpu(timeout)
                    import pytest
                    code = int(pytest.main(args + [f]))
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            rc = os.waitstatus_to_exitcode(status)
        with open(os.path.join(out, key + ".out"), "w") as fh:
            fh.write(outcome(rc, (minitest_failed_ids if minitest else failed_ids)(log)))


if __name__ == "__main__":
    main(sys.argv[1:])
