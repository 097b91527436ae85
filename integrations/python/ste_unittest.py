"""ste_unittest: a unittest runner speaking ste's batch runner protocol.

    python3 ste_unittest.py [-v] [-q] [-f] [-b] [-k PATTERN] [--locals] [TEST ...]

TEST: test files (tests/test_a.py), one test of a file
(tests/test_a.py::TestA.test_one, as `ste select` gives a case: a file's
tests given so run in one child, in that order), module names
(tests.test_a) or
directories (their test*.py files and their packages', as unittest's
discovery finds them; `python3 -m unittest DIR` would import DIR as a
package instead); none: discovery from the current directory, as
`python3 -m unittest` does. The protocol is integrations/README.md:

* unittest and $STE_PRELOAD_FILES (one per line) are loaded here, in the
  parent, in the scope the process started in (the root scope under ste);
* each test file is imported and run in a forked child, which first pushes
  the scope "<test path>" (ste_scope_push, through ctypes; absent when not
  under ste, and then it runs unscoped). A child starts from the parent's
  state: a module another test file imported cannot hide this one's
  dependency on it;
* the child's results are replayed, in file order, into the parent's
  TextTestResult: the output and the exit status are those of
  `python3 -m unittest TEST...` (0 when every test passed, 1 otherwise;
  5 when no test ran, on Pythons whose unittest does that);
* a line per file is appended to $STE_RESULTS when its child ends
  ("<passed|failed|error>\\t<exit>\\t<seconds>\\t<path as given>"); a child
  exits 0 (all passed), 1 (a test failed) or 2 (the module could not be
  imported: its error is reported as unittest reports it);
* $STE_JOBS children at a time; $STE_CASE_SCOPES=1 pushes a scope per test
  (its id after the module's name, '/' and '%' percent-encoded) from its
  startTest to its stopTest.

Differences from `python3 -m unittest`: with -f, the files not yet started
are skipped after a failure (unittest stops too, within a file as well);
without -b, what tests print appears as they run, possibly before the
replayed dots of the tests before them (with $STE_JOBS > 1, interleaved).
When recording ($STE_RESULTS set), no bytecode is written (a .pyc written
during a record would be a change at the next selection).
"""

import argparse
import io
import os
import sys
import unittest

import ste_protocol as proto

# Run from its own directory, the script has that directory first on
# sys.path; `python3 -m unittest` has the working directory there.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path[0] = os.getcwd()


class BatchFile:
    def __init__(self, display, module=None, path=None):
        self.display = display  # as given; the STE_RESULTS path
        self.module = module  # a dotted name to import, or None
        self.path = path  # a file to load by path when it has no such name
        self.discovered = None  # the file pattern when found in a directory
        self.cases = []  # "<Class>.<test>" names: only those, in this order
        self.events = []
        self.done = False


def batch_files(names, pattern="test*.py"):
    """The TEST arguments as BatchFiles, in order (directories expanded).
    A *.py argument is not looked at here: a stat in the parent would be a
    dependency of every test; the child finds out whether it exists."""
    files = []
    by_cases = {}  # path -> its BatchFile of cases
    for name in names or ["."]:
        path, sep, case = name.partition("::")
        if sep and path.lower().endswith(".py") and case:
            # "<file>::<Class.test>" (ste select's case form): the cases of
            # one file run in one child, in the order given (the order they
            # ran in when recorded: a case may see what an earlier one left).
            if path in by_cases:
                by_cases[path].cases.append(case)
                continue
            f = _file(path)
            if f.module is not None:
                f.cases.append(case)
                by_cases[path] = f
                files.append(f)
                continue
            # (no dotted name to load a test by: the whole file)
        if name.lower().endswith(".py"):
            files.append(_file(name))
        elif os.path.isdir(name):
            files.extend(_discover(name, pattern))
        else:  # a dotted name: unittest's own business
            files.append(BatchFile(name, module=name))
    return files


def _file(path):
    """A test file, imported the way `python3 -m unittest path` does: by the
    dotted name of its path relative to the working directory, or by path
    when it has none (outside the working directory, odd names)."""
    rel = os.path.relpath(os.path.abspath(path))
    parts = os.path.normpath(rel)[:-3].split(os.sep)
    if not rel.startswith(os.pardir) and all(p.isidentifier() for p in parts):
        return BatchFile(path, module=".".join(parts))
    return BatchFile(path, path=os.path.abspath(path))


def _discover(top, pattern):
    """unittest's discovery without importing: the files matching `pattern`
    in `top` and in the packages (directories with __init__.py) beneath."""
    import fnmatch

    found = []
    for entry in sorted(os.listdir(top)):
        path = os.path.join(top, entry)
        if os.path.isfile(path) and fnmatch.fnmatch(entry, pattern) and entry.endswith(".py"):
            f = _file(os.path.normpath(path))
            f.discovered = pattern
            found.append(f)
        elif os.path.isdir(path) and os.path.isfile(os.path.join(path, "__init__.py")):
            found.extend(_discover(path, pattern))
    return found


# ---- the parent ------------------------------------------------------------------------


class _Formatted(tuple):
    """An error already formatted by the child: (type, text, None)."""


class RemoteTest:
    """A test as the child described it: what the parent's result prints."""

    failureException = AssertionError

    def __init__(self, described):
        self._id, self._str, self._doc = described

    def id(self):
        return self._id

    def __str__(self):
        return self._str

    def shortDescription(self):
        return self._doc


class RemoteSubTest(unittest.case._SubTest):
    """A subtest as the child described it (a _SubTest: the result indents it)."""

    failureException = AssertionError

    def __init__(self, described):  # no TestCase.__init__: nothing to run here
        self._id, self._str, self._doc = described

    def id(self):
        return self._id

    def __str__(self):
        return self._str

    def shortDescription(self):
        return self._doc


class ReplayResult(unittest.TextTestResult):
    """The parent's result: takes the children's errors already formatted."""

    def _exc_info_to_string(self, err, test):
        if isinstance(err, _Formatted):
            return err[1]
        return super()._exc_info_to_string(err, test)


class ForkingSuite:
    """What TextTestRunner.run() calls with the result: runs each file in a
    child and replays the child's events into the result, in file order."""

    def __init__(self, files, loader_options, scopes):
        self.files = files
        self.loader_options = loader_options
        self.scopes = scopes
        self.next_to_replay = 0

    def __call__(self, result):
        proto.preload_files()

        def start(f):
            if result.shouldStop:  # -f after a failure, or Ctrl-C
                return None
            return proto.fork_child(lambda fd: run_file(f, fd, result, self.loader_options, self.scopes))

        def on_message(f, message):
            f.events.append(message)
            self._replay_ready(result)

        def on_exit(f, exit_code, seconds):
            if exit_code not in (0, 1, 2):
                why = "the process running %s ended with %s" % (f.display, proto.describe_exit(exit_code))
                for m in f.events:
                    if m["kind"] == "internalerror":
                        why += ":\n" + m["text"]
                started = [m for m in f.events if m["kind"] in ("start", "stop")]
                test = started[-1]["test"] if started and started[-1]["kind"] == "start" else None
                if test is None:
                    test = (f.display, "%s (crashed)" % f.display, None)
                    f.events.append({"kind": "start", "test": test})
                f.events.append({"kind": "error", "test": test, "err": (RuntimeError, why), "sub": None})
                f.events.append({"kind": "stop", "test": test})
            f.done = True
            proto.append_result(exit_code, seconds, f.display)
            self._replay_ready(result)

        proto.run_children(self.files, start, on_message, on_exit, proto.jobs())
        return result

    def _replay_ready(self, result):
        """Replays the events of the files whose predecessors are done."""
        while self.next_to_replay < len(self.files):
            f = self.files[self.next_to_replay]
            for m in f.events:
                _replay(result, m)
            f.events = []
            if not f.done:
                return
            self.next_to_replay += 1


def _replay(result, m):
    kind = m["kind"]
    if kind == "internalerror":
        return
    test = (RemoteSubTest if kind == "subtest" else RemoteTest)(m["test"])
    if kind == "start":
        result.startTest(test)
    elif kind == "stop":
        result.stopTest(test)
        out, err = m.get("mirror") or ("", "")
        if out:
            sys.stdout.write(out)
        if err:
            sys.stderr.write(err)
    elif kind == "success":
        result.addSuccess(test)
    elif kind in ("error", "failure", "expected_failure"):
        err = _Formatted((m["err"][0], m["err"][1], None))
        {"error": result.addError, "failure": result.addFailure, "expected_failure": result.addExpectedFailure}[
            kind
        ](test, err)
    elif kind == "skip":
        result.addSkip(test, m["reason"])
    elif kind == "unexpected_success":
        result.addUnexpectedSuccess(test)
    elif kind == "subtest":
        parent = RemoteTest(m["parent"])
        err = m["err"]
        if err is not None:
            err = _Formatted((AssertionError if err[0] == "failure" else Exception, err[1], None))
        result.addSubTest(parent, test, err)
    elif kind == "duration" and hasattr(result, "addDuration"):
        result.addDuration(test, m["elapsed"])


# ---- the child --------------------------------------------------------------------------


def run_file(f, fd, parent_result, loader_options, scopes):
    """In the child: enter the file's scope, load it, run it, report."""
    # First of all (what the child touches before it is the root scope's):
    # the file's scope, or a dotted name's own.
    target = f.path or f.display
    error = scopes.push(proto.file_scope_name(target) if target.lower().endswith(".py") else target)
    if error:
        sys.stderr.write("ste: cannot enter the scope of %s (%s); running unscoped\n" % (f.display, error))
    loader = unittest.TestLoader()
    if loader_options.get("patterns"):
        loader.testNamePatterns = loader_options["patterns"]
    suite = _load(loader, f)
    result = ForwardingResult(fd, scopes if proto.case_scopes_enabled() else None, f.module)
    result.failfast = parent_result.failfast
    result.buffer = loader_options.get("buffer", False)
    result.tb_locals = parent_result.tb_locals
    suite(result)
    if loader.errors:
        return 2
    return 0 if result.wasSuccessful() else 1


def _load(loader, f):
    if f.module is not None and f.module != f.display and not os.path.isfile(f.display):
        f.module = f.display  # as `python3 -m unittest no/such/file.py` does
    if f.discovered and f.module is not None and hasattr(loader, "_find_test_path"):
        # As unittest's discovery loads a file it found (load_tests with the
        # pattern, its way of reporting an import error).
        loader._top_level_dir = os.getcwd()
        tests, _ = loader._find_test_path(os.path.abspath(f.display), f.discovered)
        return loader.suiteClass([tests] if tests is not None else [])
    if f.module is not None and f.cases:
        return loader.loadTestsFromNames(["%s.%s" % (f.module, case) for case in f.cases])
    if f.module is not None:
        return loader.loadTestsFromName(f.module)
    import importlib.util

    name = os.path.splitext(os.path.basename(f.path))[0]
    try:
        spec = importlib.util.spec_from_file_location(name, f.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except Exception:
        import traceback

        loader.errors.append("Failed to import test module: %s\n%s" % (name, traceback.format_exc()))
        make_failed = getattr(unittest.loader, "_make_failed_test")
        return make_failed(name, ImportError(loader.errors[-1]), loader.suiteClass, loader.errors[-1])
    return loader.loadTestsFromModule(module)


def _describe(test):
    return (test.id(), str(test), test.shortDescription())


class ForwardingResult(unittest.TestResult):
    """In a child: sends each result event to the parent, errors formatted."""

    def __init__(self, fd, scopes, module):
        super().__init__()
        self.fd = fd
        self.scopes = scopes  # for case scopes, else None
        self.module = module
        self.pushed = False
        self.mirror = None

    def _send(self, kind, test, **extra):
        extra.update(kind=kind, test=_describe(test))
        proto.send(self.fd, extra)

    def _err(self, err, test):
        return (err[0].__name__, self._exc_info_to_string(err, test))

    def startTest(self, test):
        if self.scopes is not None:
            name = test.id()
            if self.module and name.startswith(self.module + "."):
                name = name[len(self.module) + 1 :]
            self.pushed = self.scopes.available and self.scopes.push(proto.case_scope_name(name)) is None
        super().startTest(test)
        self._send("start", test)

    def stopTest(self, test):
        self.mirror = None
        super().stopTest(test)
        self._send("stop", test, mirror=self.mirror)
        if self.pushed:
            self.scopes.pop()
            self.pushed = False

    def _restoreStdout(self):
        # With -b, what a failed test printed is written out at its stop: sent
        # to the parent (printed there at the same point), not printed here.
        if not (self.buffer and self._mirrorOutput):
            return super()._restoreStdout()
        real = self._original_stdout, self._original_stderr
        self._original_stdout, self._original_stderr = io.StringIO(), io.StringIO()
        try:
            super()._restoreStdout()
            self.mirror = (self._original_stdout.getvalue(), self._original_stderr.getvalue())
        finally:
            self._original_stdout, self._original_stderr = real
            sys.stdout, sys.stderr = real

    def addSuccess(self, test):
        super().addSuccess(test)
        self._send("success", test)

    def addError(self, test, err):
        super().addError(test, err)
        self._send("error", test, err=self._err(err, test))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._send("failure", test, err=self._err(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._send("skip", test, reason=reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._send("expected_failure", test, err=self._err(err, test))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._send("unexpected_success", test)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        sent = None
        if err is not None:
            failure = issubclass(err[0], test.failureException)
            sent = ("failure" if failure else "error", self._exc_info_to_string(err, test))
        self._send("subtest", subtest, parent=_describe(test), err=sent)

    def addDuration(self, test, elapsed):  # Python >= 3.12
        getattr(super(), "addDuration", lambda *a: None)(test, elapsed)
        self._send("duration", test, elapsed=elapsed)


# ---- main ---------------------------------------------------------------------------------


def main(argv=None):
    proto.leave_the_tree_alone()
    parser = argparse.ArgumentParser(
        prog="ste_unittest.py", description="Runs unittest test files, each in a forked child (ste's batch protocol)."
    )
    parser.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=2, default=1)
    parser.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=0)
    parser.add_argument("-f", "--failfast", action="store_true")
    parser.add_argument("-b", "--buffer", action="store_true")
    parser.add_argument("-c", "--catch", action="store_true", help="accepted; Ctrl-C stops the run")
    parser.add_argument("--locals", action="store_true")
    parser.add_argument("-k", dest="patterns", action="append", default=[])
    parser.add_argument("-p", "--pattern", default="test*.py", help="file pattern for directories")
    parser.add_argument("tests", nargs="*")
    opts = parser.parse_args(argv)

    patterns = [p if "*" in p else "*%s*" % p for p in opts.patterns]
    suite = ForkingSuite(
        batch_files(opts.tests, opts.pattern), {"patterns": patterns, "buffer": opts.buffer}, proto.SteScopes()
    )
    warnings_filter = None if sys.warnoptions else "default"  # as unittest.main
    runner = unittest.TextTestRunner(
        verbosity=opts.verbosity,
        failfast=opts.failfast,
        buffer=False,  # the children capture (-b); the parent replays
        tb_locals=opts.locals,
        warnings=warnings_filter,
        resultclass=ReplayResult,
    )
    result = runner.run(suite)
    no_tests = getattr(sys.modules.get("unittest.main"), "_NO_TESTS_EXITCODE", None)
    if no_tests is not None and result.testsRun == 0 and not result.skipped:
        return no_tests
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
