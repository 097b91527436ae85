"""ste_pytest: the pytest side of ste's batch runner protocol.

    python3 -m pytest -p ste_pytest [pytest options] TEST_FILE...

(integrations/python on PYTHONPATH; `ste record` puts it there.) The
protocol is integrations/README.md. In short:

* pytest, its plugins and the conftest.py files are loaded here, in the
  parent, in the scope the process started in (the root scope under ste):
  what every test file shares is a dependency of every test file.
* Each test FILE is collected (imported) and run in a forked child, which
  first pushes the scope "<test path>" (`ste_scope_push` of
  libste_preload.so, found with ctypes). A child starts from the parent's
  state, so no module imported by another test file can hide what this
  one imports. The parent never imports a test module.
* The children send their reports to the parent over a pipe (serialized
  with pytest_report_to_serializable); the parent replays them, in file
  order, through the usual hooks once every child is done, so the terminal
  report, --junitxml, the cache, the summary and the exit status are
  pytest's own. (Replaying at the end is what keeps them identical: plain
  pytest collects everything before it runs anything, and a collection
  error anywhere interrupts the session; here every file has run by then.
  So there is no live progress line while children run.)
* A line per file is appended to $STE_RESULTS when its child ends:
  "<passed|failed|error>\\t<exit code>\\t<seconds>\\t<path as given>".
  A child exits 0 (nothing failed), 1 (a test failed), 2 (the file could
  not be collected), 4 (a usage error, e.g. an unknown ::name).
* $STE_JOBS children at a time (default 1); $STE_PRELOAD_FILES (one per
  line, module paths or dotted names) are imported in the parent before
  forking; $STE_CASE_SCOPES=1 pushes a scope per test case (the node id
  after the file, '/' and '%' percent-encoded) around its setup, call and
  teardown; a fixture of a wider scope (class, module, package, session:
  xunit's setup_class and setup_module too) is set up back in the file's
  scope, its shared part, whichever case needs it first. A module
  imported by one case is cached for the next: case scopes are finer
  attribution, not isolation (ste counts only the definitions a case ran
  as its own: docs/concepts.md, "Test cases").

Forking happens under ste (the ste_scope_push symbol resolves, or
STE_RESULTS is set) or with --ste-fork=yes. Otherwise (--ste-fork=auto
without ste, --ste-fork=no, --collect-only, --pyargs, xdist's -n) this
plugin does nothing and pytest runs as usual.

When recording ($STE_RESULTS set), the run leaves the tree as it found it,
so that the next selection sees only real changes: pytest's cache goes to
the results file's directory (ste's log directory) instead of
.pytest_cache/ (read in the root scope, it would make every test depend on
the last run's outcomes), and no bytecode is written.

Differences from plain pytest when forking: session-scoped fixtures are set
up once per test file (in its child); plugins see
pytest_collection_modifyitems per file, so -k and -m select as usual but
what works across files (--lf/--ff/--nf, a reordering plugin) works within
each file; -x stops after the first failing file (the files left are only
collected, as plain pytest has collected them); a child that dies (a
signal, os._exit) fails the test it was running, or the file's collection;
with -s, what tests print appears while they run, before the report.
Forking costs a few milliseconds a file (copy-on-write page faults: what a
child allocates lands on pages it shares with the parent), which matters
only for very small test files (bench/runners/python.sh).
"""

import os
import sys
import warnings

import pytest
from _pytest.reports import CollectReport, TestReport

import ste_protocol as proto

_STE_PLUGIN_NAME = "ste_batch"

# Imported by -p, before any conftest.py: early enough for no bytecode.
proto.leave_the_tree_alone()


# ---- the pytest plugin -------------------------------------------------------------


def pytest_addoption(parser):
    group = parser.getgroup("ste", "ste batch runner")
    group.addoption(
        "--ste-fork",
        choices=("auto", "yes", "no"),
        default="auto",
        help="collect and run each test file in a forked child: auto (under "
        "ste only), yes, no.",
    )


@pytest.hookimpl(tryfirst=True)  # before the cacheprovider's (tryfirst too)
def pytest_configure(config):
    mode = config.getoption("ste_fork")
    scopes = proto.SteScopes()
    if mode == "no" or (mode == "auto" and not proto.under_ste(scopes)):
        return
    if config.option.collectonly or config.option.pyargs:
        return
    if getattr(config.option, "numprocesses", None) or getattr(config.option, "dist", "no") != "no":
        return
    results = os.environ.get("STE_RESULTS")
    if results:
        # Recording: pytest's cache (.pytest_cache/, read here in the root
        # scope, rewritten by every run) would make every test depend on the
        # last run's outcomes. It goes beside the results file instead, in
        # ste's log directory, whose records ste drops and which it removes.
        config._inicache["cache_dir"] = os.path.join(os.path.dirname(os.path.abspath(results)), "pytest-cache")
    config.pluginmanager.register(ForkingSession(config, scopes), _STE_PLUGIN_NAME)


class BatchFile:
    """One test file: run in one child."""

    def __init__(self, path, display, args):
        self.path = path  # absolute
        self.display = display  # as given (or relative to the invocation dir)
        self.args = args  # what the child collects: the file, or its ::selections
        self.nodeid = None
        self.events = []  # messages from the child, in order
        self.exit_code = None
        self.seconds = 0.0
        self.collect_only = False


class RemoteItem(pytest.Item):
    """A test item collected and run in a child: what the parent's hooks see."""

    def __init__(self, *, ste_location, **kw):
        super().__init__(**kw)
        self._ste_location = tuple(ste_location)

    @property
    def location(self):
        return self._ste_location

    def reportinfo(self):
        return self.path, self._ste_location[1], self._ste_location[2]

    def runtest(self):
        raise RuntimeError("%s runs in a child process" % self.nodeid)


class _NoOpHook:
    """Stands in for a hook while the parent walks the directories."""

    def __call__(self, **kwargs):
        return []


class ForkingSession:
    """The plugin when forking: in the parent, collection finds the test
    files without importing them, runs a child per file, and replays what
    the children reported; in a child (in_child), it steps aside and pytest
    collects and runs the file as usual, ChildForwarder reporting."""

    def __init__(self, config, scopes):
        self.config = config
        self.scopes = scopes
        self.jobs = proto.jobs()
        self.case_scopes = proto.case_scopes_enabled()
        self.in_child = False
        self.discovering = False
        self.file_nodes = []  # File collectors found in the parent, in order
        self.files = []
        self.maxfail = config.getoption("maxfail", 0) or 0
        self.usage_error = None
        # Registered once, here (registering costs a millisecond a child);
        # silent until a child arms it.
        self.forwarder = ChildForwarder(config, scopes if self.case_scopes else None)
        config.pluginmanager.register(self.forwarder, "ste_child_forwarder")

    # -- the parent: find the files, run the children, replay ------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_make_collect_report(self, collector):
        """While discovering, a test file is noted, not collected (imported)."""
        if not self.discovering or not isinstance(collector, pytest.File):
            return None
        if isinstance(collector, pytest.Package):
            return None
        self.file_nodes.append(collector)
        return CollectReport(collector.nodeid, "passed", None, [])

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        if self.in_child:
            return None
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.pytest_collection()  # "collecting ..." (we return first)
        proto.preload_files()
        self._discover(session)
        self._run_children(session)
        self._replay_collection(session)
        return True

    def _discover(self, session):
        """The directory walk of perform_collect, with test files noted (see
        pytest_make_collect_report), and ::selections kept for the child."""
        invocation = str(self.config.invocation_params.dir)
        given = {}  # abs path -> (first arg as given, [args with ::names])
        dir_args = []
        walk_args = []
        for arg in self.config.args:
            strpath = str(arg).split("::", 1)[0]
            path = os.path.abspath(os.path.join(invocation, strpath))
            if os.path.isdir(path):
                dir_args.append(path)
            elif path in given:
                given[path][1].append(str(arg))
            else:
                given[path] = (strpath, [str(arg)])
            if strpath not in walk_args:
                walk_args.append(strpath)
        hook = self.config.hook
        saved = (hook.pytest_collection_modifyitems, hook.pytest_collection_finish)
        hook.pytest_collection_modifyitems = hook.pytest_collection_finish = _NoOpHook()
        self.discovering = True
        try:
            session.perform_collect(walk_args)
        finally:
            self.discovering = False
            hook.pytest_collection_modifyitems, hook.pytest_collection_finish = saved
        seen = set()
        for node in self.file_nodes:
            path = str(node.path)
            if path in seen:
                continue
            seen.add(path)
            rel = os.path.relpath(path, invocation)
            under_dir = any(path.startswith(d + os.sep) for d in dir_args)
            if path in given:
                display, args = given[path]
                if under_dir:
                    args = [display]
            else:
                display, args = rel, [rel]
            f = BatchFile(path, display, args)
            f.nodeid = node.nodeid
            self.files.append(f)

    def _run_children(self, session):
        failures = [0]

        def start(f):
            # After -x/--maxfail, the files left are only collected, as
            # plain pytest has collected them (the counts, the progress).
            f.collect_only = bool(self.maxfail and failures[0] >= self.maxfail)
            return proto.fork_child(lambda fd: self._child(session, f, fd))

        def on_message(f, message):
            failures[0] += self._take(f, message)

        def on_exit(f, exit_code, seconds):
            f.exit_code, f.seconds = exit_code, seconds
            self._finish_crashed(f)
            if not f.collect_only:
                proto.append_result(exit_code, seconds, f.display)

        proto.run_children(self.files, start, on_message, on_exit, self.jobs)

    def _take(self, f, message):
        """Stores one message of f's child; returns 1 if it is a failure."""
        f.events.append(message)
        kind = message["kind"]
        if kind == "logreport" and message["report"].get("outcome") == "failed":
            return 0 if message.get("xfail") else 1
        if kind == "collectreport" and message["report"].get("outcome") == "failed":
            return 1
        return 0

    def _finish_crashed(self, f):
        """A child that died mid-way: fail what it was doing."""
        if f.exit_code in (0, 1, 2, 4):
            return
        why = "the process running %s ended with %s" % (f.display, proto.describe_exit(f.exit_code))
        for m in f.events:
            if m["kind"] == "internalerror":
                why += ":\n" + m["text"]
        # Tests run in the order collected: the first unfinished one died.
        collected = next((m for m in f.events if m["kind"] == "collected"), {"items": []})
        finished = {m["nodeid"] for m in f.events if m["kind"] == "logfinish"}
        unfinished = [item for item in collected["items"] if item[0] not in finished]
        if not unfinished:  # while collecting, or after the last test: the file's error
            rep = CollectReport(f.nodeid, "failed", why, [])
            f.events.append({"kind": "collectreport", "report": self._serialize(rep), "items": []})
            return
        nodeid, location = unfinished[0]
        if not any(m["kind"] == "logstart" and m["nodeid"] == nodeid for m in f.events):
            f.events.append({"kind": "logstart", "nodeid": nodeid, "location": location})
        rep = TestReport(nodeid, tuple(location), {}, "failed", why, "call")
        f.events.append({"kind": "logreport", "report": self._serialize(rep)})
        f.events.append({"kind": "logfinish", "nodeid": nodeid, "location": location})

    def _replay_collection(self, session):
        """What perform_collect would have reported, from the children."""
        hook = self.config.hook
        file_nodes = {str(n.path): n for n in self.file_nodes}
        items = []
        for f in self.files:
            parent = file_nodes[f.path]
            proxies = {}

            def proxy(nodeid, location):
                if nodeid not in proxies:
                    proxies[nodeid] = RemoteItem.from_parent(
                        parent, name=nodeid.rsplit("::", 1)[-1], nodeid=nodeid, ste_location=location
                    )
                return proxies[nodeid]

            for m in f.events:
                kind = m["kind"]
                if kind == "collectreport":
                    rep = self._deserialize(m["report"])
                    rep.result = [proxy(i, loc) for i, loc in m["items"]]
                    hook.pytest_collectreport(report=rep)
                elif kind == "deselected":
                    hook.pytest_deselected(items=[proxy(i, loc) for i, loc in m["items"]])
                elif kind == "warning" and m["when"] != "runtest":
                    self._replay_warning(m)
                elif kind == "collected":
                    items.extend(proxy(i, loc) for i, loc in m["items"])
                elif kind == "usageerror" and self.usage_error is None:
                    self.usage_error = m["args"]
        if self.usage_error is not None:
            raise pytest.UsageError(*self.usage_error)
        session.items = items
        hook.pytest_collection_finish(session=session)
        session.testscollected = len(items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        if self.in_child:
            return None
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise session.Interrupted(
                "%d error%s during collection" % (session.testsfailed, "s" if session.testsfailed != 1 else "")
            )
        hook = self.config.hook
        for f in self.files:
            for m in f.events:
                kind = m["kind"]
                if kind == "logstart":
                    hook.pytest_runtest_logstart(nodeid=m["nodeid"], location=tuple(m["location"]))
                elif kind == "logreport":
                    hook.pytest_runtest_logreport(report=self._deserialize(m["report"]))
                elif kind == "warning" and m["when"] == "runtest":
                    self._replay_warning(m)
                elif kind == "logfinish":
                    hook.pytest_runtest_logfinish(nodeid=m["nodeid"], location=tuple(m["location"]))
                    if session.shouldfail:
                        raise session.Failed(session.shouldfail)
                    if session.shouldstop:
                        raise session.Interrupted(session.shouldstop)
        return True

    def _serialize(self, report):
        return self.config.hook.pytest_report_to_serializable(config=self.config, report=report)

    def _deserialize(self, data):
        report = self.config.hook.pytest_report_from_serializable(config=self.config, data=data)
        if isinstance(getattr(report, "location", None), list):
            report.location = tuple(report.location)
        return report

    def _replay_warning(self, m):
        w = m["warning"]
        category = _warning_category(w["category_module"], w["category_name"])
        try:
            message = category(w["message"])
        except Exception:
            category = _warning_category(None, w["category_name"])
            message = category(w["message"])
        record = warnings.WarningMessage(message, category, w["filename"], w["lineno"], line=w["line"])
        self.config.hook.pytest_warning_recorded.call_historic(
            kwargs=dict(
                warning_message=record,
                when=m["when"],
                nodeid=m["nodeid"],
                location=tuple(m["location"]) if m["location"] else None,
            )
        )

    # -- the child: one file ----------------------------------------------------------------

    def _child(self, session, f, fd):
        self.in_child = True
        error = self.scopes.push(proto.file_scope_name(f.path))
        if error:
            sys.stderr.write("ste: cannot enter the scope of %s (%s); running unscoped\n" % (f.display, error))
        if self.jobs > 1:
            # Concurrent children must not share the parent's capture files
            # (one file offset for all). One at a time, they may: as in plain
            # pytest, what the conftest.py files printed then goes to the
            # first test's captured output.
            _fresh_capture(self.config)
        pm = self.config.pluginmanager
        tr = pm.get_plugin("terminalreporter")
        if tr is not None:  # the parent reports; kept for plugins that use it
            from _pytest._io import TerminalWriter

            tr._tw = TerminalWriter(open(os.devnull, "w"))
        forwarder = self.forwarder
        forwarder.arm(fd)
        try:
            return self._collect_and_run(session, f, forwarder)
        finally:
            forwarder.flush()

    def _collect_and_run(self, session, f, forwarder):
        session.testsfailed = 0
        session.testscollected = 0
        session.shouldfail = session.shouldstop = False
        try:
            session.perform_collect(f.args)
        except pytest.UsageError as e:
            forwarder.send({"kind": "usageerror", "args": [str(a) for a in e.args]})
            return 4
        finally:
            items = [[i.nodeid, list(i.location)] for i in session.items]
            forwarder.send({"kind": "collected", "items": items}, flush=True)
        if forwarder.collect_failed:
            return 2
        if f.collect_only:
            return 0
        try:
            self.config.hook.pytest_runtestloop(session=session)
        except (session.Failed, session.Interrupted):
            pass
        finally:
            try:
                session._setupstate.teardown_exact(None)  # after -x, say
            except Exception:
                pass
        return 1 if forwarder.test_failed else 0


class ChildForwarder:
    """In a child: sends what pytest reports to the parent, a message each,
    written at the end of the collection and of each test (a write a
    message costs a syscall each; a child that dies loses the messages of
    the test it was running, which the parent knows from the collection).
    Registered in the parent, it does nothing there (fd None)."""

    def __init__(self, config, scopes):
        self.config = config
        self.scopes = scopes  # for case scopes, else None
        self.fd = None
        self.pending = []
        self.collect_failed = False
        self.test_failed = False

    def arm(self, fd):
        self.fd = fd

    def send(self, message, flush=False):
        self.pending.append(proto.encode(message))
        if flush:
            self.flush()

    def flush(self):
        if self.pending:
            data, self.pending = b"".join(self.pending), []
            proto.write_all(self.fd, data)

    def _report(self, report):
        return self.config.hook.pytest_report_to_serializable(config=self.config, report=report)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_modifyitems(self, session, config, items):
        """ste selects a case with every case that ran after it (they see
        what it left: docs/concepts.md, "Test cases"), so the run order must
        be the one the next run has. A plugin that reorders the cases
        (pytest-randomly's shuffle, any other) may order them otherwise next
        time: then no case scope is pushed, and the file is selected whole.
        Deselecting (-k, -m) keeps the order."""
        before = [item.nodeid for item in items]
        yield
        if self.fd is None or self.scopes is None:
            return
        after = [item.nodeid for item in items]
        kept = set(after)
        if [nodeid for nodeid in before if nodeid in kept] != after:
            self.scopes = None

    def pytest_collectreport(self, report):
        if self.fd is None:
            return
        if report.nodeid == "":  # the session's: the parent made its own
            return
        if report.failed:
            self.collect_failed = True
        items = [[x.nodeid, list(x.location)] for x in report.result if isinstance(x, pytest.Item)]
        self.send({"kind": "collectreport", "report": self._report(report), "items": items})

    def pytest_deselected(self, items):
        if self.fd is None:
            return
        self.send({"kind": "deselected", "items": [[i.nodeid, list(i.location)] for i in items]})

    def pytest_runtest_logstart(self, nodeid, location):
        if self.fd is None:
            return
        self.send({"kind": "logstart", "nodeid": nodeid, "location": list(location)})

    def pytest_runtest_logreport(self, report):
        if self.fd is None:
            return
        xfail = hasattr(report, "wasxfail")
        if report.failed and not xfail:
            self.test_failed = True
        self.send({"kind": "logreport", "report": self._report(report), "xfail": xfail})

    def pytest_runtest_logfinish(self, nodeid, location):
        if self.fd is None:
            return
        self.send({"kind": "logfinish", "nodeid": nodeid, "location": list(location)}, flush=True)

    def pytest_warning_recorded(self, warning_message, when, nodeid, location):
        if self.fd is None:
            return
        import linecache

        w = warning_message
        line = w.line
        if line is None:
            line = linecache.getline(w.filename, w.lineno) if w.filename else ""
        self.send(
            {
                "kind": "warning",
                "when": when,
                "nodeid": nodeid,
                "location": list(location) if location else None,
                "warning": {
                    "message": str(w.message),
                    "category_module": w.category.__module__,
                    "category_name": w.category.__qualname__,
                    "filename": w.filename,
                    "lineno": w.lineno,
                    "line": line or "",
                },
            },
        )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        pushed = False
        if self.scopes is not None and self.fd is not None:
            self.case_name = proto.case_scope_name(item.nodeid.split("::", 1)[-1])
            error = self.scopes.push(self.case_name)
            if error:
                sys.stderr.write("ste: cannot enter the scope of %s (%s)\n" % (item.nodeid, error))
            pushed = error is None and self.scopes.available
        self.case_pushed = pushed
        try:
            yield
        finally:
            if self.case_pushed:  # (not when it could not be entered again)
                self.scopes.pop()
            self.case_pushed = False

    case_pushed = False
    case_name = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        """A fixture wider than a function is set up in the file's scope:
        what it runs is every case's (the one that needed it first is only
        the first to ask)."""
        lifted = self.case_pushed and getattr(fixturedef, "scope", "function") != "function"
        if lifted:
            self.scopes.pop()
            self.case_pushed = False  # (a wider fixture it needs is set up here too)
        try:
            yield
        finally:
            if lifted:
                error = self.scopes.push(self.case_name)
                if error:
                    sys.stderr.write("ste: cannot enter the scope of %s again (%s)\n" % (self.case_name, error))
                self.case_pushed = error is None


# ---- helpers ------------------------------------------------------------------------


def _fresh_capture(config):
    """A child gets its own capture files: the inherited ones are shared with
    the parent and the other children (one file offset for all)."""
    capman = config.pluginmanager.get_plugin("capturemanager")
    inherited = getattr(capman, "_global_capturing", None)
    if inherited is None:
        return
    try:
        inherited.stop_capturing()  # restores fds 0-2; closes our copies only
    except Exception:
        pass
    capman._global_capturing = None
    capman.start_global_capturing()
    capman.suspend_global_capture()


_warning_classes = {}


def _warning_category(module, name):
    """A warning class by name, without importing anything (an import here
    would be a dependency of every test): the class if its module is
    loaded already, else a stand-in with the same name."""
    mod = sys.modules.get(module) if module else None
    obj = mod
    for part in name.split(".") if mod is not None else ():
        obj = getattr(obj, part, None)
    if isinstance(obj, type) and issubclass(obj, Warning):
        return obj
    key = (module, name)
    if key not in _warning_classes:
        _warning_classes[key] = type(name.rsplit(".", 1)[-1], (UserWarning,), {"__module__": module or "builtins"})
    return _warning_classes[key]
