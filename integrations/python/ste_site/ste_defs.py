"""ste's definition tracker: which code of the repository a process ran.

With `[selection] granularity = "definition"` (docs/concepts.md,
"Definitions"), ste sets STE_DEFINITIONS to the repository's absolute root
and ste_names.py starts this tracker as the process starts. It tells ste,
through the interceptor, which code objects of the repository's files the
process executed, so that a change to one function selects the tests that
ran it instead of every test that imported its file.

What it records, each as a stat of a path that never exists (the
interceptor records it as `absent`, in the scope the process is in; outside
ste it is a failing stat):

  <abs file>/\\x01ste-code:<line>   a code object of <file> whose first line
                                    (co_firstlineno) is <line> ran (0: the
                                    module's own code);
  <abs file>/\\x01ste-data          <file> (a .py under the root) was opened
                                    for reading other than by the import
                                    system (inspect.getsource, open(),
                                    pkgutil.get_data): its bytes, not only
                                    its code, matter;
  /\\x01ste-defs-begin:<pid>        this process (or forked child, or scope
                                    it entered) is tracked from here on;
  /\\x01ste-defs-end:<pid>          everything it ran is accounted for (a
                                    `begin` after it, as after an exec that
                                    failed, opens the account again);
  /\\x01ste-defs-slow:<pid>:<why>   this process tracks with the slow
                                    fallback tracer, and why (below).

ste trusts a process's code records only when it made both markers: a
process that ends without `end` (killed, os._exit, the tracer replaced by
the test: another frame evaluation hook, or with the fallback a profiler
or tracer of its own; the frame hook stepping aside for a recursion limit
raised past _SAFE_DEPTH; a thread still running at exit) leaves its tests
at file level.

How: a tracer that lists each code object the first time it runs, on
every thread, chosen as the process starts (the first that works):
  - CPython 3.11: _ste_tracer (integrations/python/ste_tracer/, a C
    extension built with ste, found beside the interceptor: python/ in the
    folder of libste_preload.so on LD_PRELOAD), a PEP 523 frame evaluation
    hook: no tracing or profiling mode, the eval loop stays specialised;
  - CPython 3.12+: sys.monitoring, PY_START and PY_RESUME on a free tool
    id (3 or 4), each event disabled where it fired once its code is listed;
  - otherwise (3.8-3.10, no compiled tracer, its slot taken, or
    STE_DEFS_TRACER=profile): the C profiler of the standard library
    (cProfile's _lsprof.Profiler, subcalls and builtins off: one C callback
    per call and return) on every thread (_thread.start_new_thread is
    wrapped so a new thread starts its own). Call-heavy code runs about 3x
    slower under it; the process says so once, by a stat of
    /\\x01ste-defs-slow:<pid>:<why>, and `ste record` counts those.
What ran is taken from the tracer and emitted:
  - before a fork (os.register_at_fork), in the parent's scope, so that the
    child starts with nothing to emit twice;
  - when a runner integration pushes or pops a scope (ste_protocol.py calls
    flush()), so that what ran in a test file's scope is recorded there;
  - at exit (atexit), before an exec (os.execv/execve), and in a forking
    runner's child before os._exit (finish()).

Nothing here raises into the program: a failure stops the tracking, which
leaves the process without its `end` marker (file level, honest).
"""

import os
import sys

_CODE = "\x01ste-code:"
_DATA = "\x01ste-data"
_BEGIN = "/\x01ste-defs-begin:"  # + pid: a forked child's own (the interceptor
_END = "/\x01ste-defs-end:"  # drops a path its process recorded before the fork)
_SLOW = "/\x01ste-defs-slow:"  # + pid + ":" + why

_root = None  # "<abs root>/" while tracking
_tracer = None  # the backend (below) while tracking
_slow = ""  # why the fallback tracks this process ("" for a fast tracer)
_emitted = set()  # (filename, line) already recorded by this process
_data_files = set()  # abs paths read as data, not yet recorded
_broken = False
_finished = False
_lock = None


def _stat(path):
    try:
        os.stat(path)
    except (OSError, ValueError):
        pass


def _mark_broken():
    global _broken
    _broken = True


# The tracers. Each lists code objects as they first run, on every thread,
# behind one seam:
#   name               for the summary and the tests;
#   take()             the code objects (any file's) first run since the
#                      last take, each at least once (maybe more: _emit
#                      deduplicates);
#   reset()            forget what was taken: code that runs again is
#                      listed again;
#   intact()           still installed (nobody replaced it);
#   thread_started()   on a new thread, before its function (a token);
#   thread_intact(t)   at the end of that thread's function;
#   pause(), resume()  around an exec (finish(), _resume());
#   forked(ident)      in a forked child (only thread `ident` survived).


class _FrameHook:
    """CPython 3.11: _ste_tracer's frame evaluation hook (one per
    interpreter: every thread's frames)."""

    name = "frame-hook"

    def __init__(self, module):
        self._m = module

    def take(self):
        return self._m.take()

    def reset(self):
        self._m.reset()

    def intact(self):
        return self._m.installed()

    def thread_started(self):
        return None

    def thread_intact(self, token):
        return self.intact()

    def pause(self):
        pass

    def resume(self):
        pass

    def forked(self, ident):
        pass

    def watch_recursion_limit(self):
        """With the hook, each Python call is a C call (ste_tracer.c): a
        program that raises the recursion limit past _SAFE_DEPTH may recurse
        deep enough to overflow the C stack. The hook goes then (and with it
        the `end` marker: that process is file level), as if never there."""
        original = sys.setrecursionlimit
        module = self._m

        def setrecursionlimit(limit):
            if limit > _SAFE_DEPTH:
                module.uninstall()
            return original(limit)

        setrecursionlimit.__doc__ = original.__doc__
        sys.setrecursionlimit = setrecursionlimit


# Python calls deep the frame hook allows on an 8 MiB stack with room to
# spare (it overflows near 17,000).
_SAFE_DEPTH = 10000


class _Monitoring:
    """CPython 3.12+: sys.monitoring's PY_START and PY_RESUME (a generator
    or coroutine resumed) on a tool id of ours, each disabled where it fired
    once the code is listed (restart_events() for reset(): every tool's
    disabled events come back, which the tools allow)."""

    name = "sys.monitoring"

    def __init__(self, tool):
        self._tool = tool
        self._new = []
        self._events = sys.monitoring.events.PY_START | sys.monitoring.events.PY_RESUME

    def start(self):
        mon = sys.monitoring
        mon.use_tool_id(self._tool, "ste")
        disable = mon.DISABLE
        new = self._new

        def ran(code, offset):
            new.append(code)
            return disable

        mon.register_callback(self._tool, mon.events.PY_START, ran)
        mon.register_callback(self._tool, mon.events.PY_RESUME, ran)
        mon.set_events(self._tool, self._events)

    def take(self):
        taken = self._new[:]
        del self._new[: len(taken)]
        return taken

    def reset(self):
        sys.monitoring.restart_events()

    def intact(self):
        mon = sys.monitoring
        return mon.get_tool(self._tool) == "ste" and mon.get_events(self._tool) == self._events

    def thread_started(self):
        return None

    def thread_intact(self, token):
        return self.intact()

    def pause(self):
        pass

    def resume(self):
        pass

    def forked(self, ident):
        pass


class _Profile:
    """The fallback: cProfile's C profiler on each thread (a profiler is
    per thread: thread_started() starts the new thread's)."""

    name = "profile"

    def __init__(self):
        self._profilers = [(_new_profiler(), _thread_ident())]  # the main one first
        self._taken = {}  # id(code) -> code (held: an id is not reused)

    def take(self):
        codes = []
        with _lock:
            for prof, _ in list(self._profilers):
                try:
                    stats = prof.getstats()
                except Exception:
                    _mark_broken()
                    continue
                for entry in stats:
                    code = entry.code
                    if id(code) not in self._taken:
                        self._taken[id(code)] = code
                        codes.append(code)
        return codes

    def reset(self):
        with _lock:
            self._taken.clear()
            for prof, _ in self._profilers:
                prof.clear()

    def intact(self):
        return bool(self._profilers) and _ours(self._profilers[0][0])

    def thread_started(self):
        prof = _new_profiler()
        with _lock:
            self._profilers.append((prof, _thread_ident()))
        return prof

    def thread_intact(self, prof):
        return _ours(prof)

    def pause(self):
        for prof, _ in self._profilers:
            prof.disable()

    def resume(self):
        if self._profilers:
            self._profilers[0][0].enable()

    def forked(self, ident):
        self._profilers[:] = [p for p in self._profilers if p[1] == ident]


def _new_profiler():
    # cProfile's C profiler itself (cProfile.py would import profile, pstats
    # and more into every process).
    import _lsprof

    prof = _lsprof.Profiler(subcalls=False, builtins=False)
    prof.enable()
    return prof


def _ours(prof):
    """True iff `prof` still profiles the calling thread."""
    if sys.version_info >= (3, 12):
        monitoring = getattr(sys, "monitoring", None)
        return monitoring is not None and monitoring.get_tool(monitoring.PROFILER_ID) == "cProfile"
    return sys.getprofile() is prof


def _compiled_tracer():
    """_ste_tracer from python/ beside the interceptor (LD_PRELOAD names
    it: build/ in the build tree, lib/ste/ installed), or None."""
    from importlib import _bootstrap, _bootstrap_external

    suffix = _bootstrap_external.EXTENSION_SUFFIXES[0]  # ".cpython-311-<arch>.so"
    for token in os.environ.get("LD_PRELOAD", "").replace(":", " ").split():
        if not token.endswith("/libste_preload.so"):
            continue
        path = "%s/python/_ste_tracer%s" % (token[: -len("/libste_preload.so")], suffix)
        if not os.path.exists(path):
            continue
        loader = _bootstrap_external.ExtensionFileLoader("_ste_tracer", path)
        spec = _bootstrap_external.spec_from_file_location("_ste_tracer", path, loader=loader)
        return _bootstrap._load(spec)
    return None


def _start_tracer():
    """The first tracer that works (see top) and, for the fallback, why
    ("" for a fast one)."""
    version = "python-%d.%d" % sys.version_info[:2]
    if os.environ.get("STE_DEFS_TRACER", "") == "profile":
        return _Profile(), "STE_DEFS_TRACER=profile"
    why = version + "-no-compiled-tracer"
    if sys.version_info >= (3, 12) and hasattr(sys, "monitoring"):
        why = version + "-monitoring-ids-taken"
        for tool in (4, 3):  # no one's by convention (0-2 and 5 are named)
            if sys.monitoring.get_tool(tool) is None:
                try:
                    tracer = _Monitoring(tool)
                    tracer.start()
                    return tracer, ""
                except Exception:
                    why = version + "-monitoring-failed"
                    break
    elif sys.version_info[:2] == (3, 11):
        try:
            module = _compiled_tracer()
            if module is not None:
                if module.install():
                    tracer = _FrameHook(module)
                    tracer.watch_recursion_limit()
                    return tracer, ""
                why = version + "-frame-hook-taken"
        except Exception:
            why = version + "-compiled-tracer-unloadable"
    return _Profile(), why


def _emit():
    """Records what ran since the last emission (and data reads)."""
    if _root is None:
        return
    with _lock:
        try:
            codes = _tracer.take()
        except Exception:
            _mark_broken()
            codes = ()
        for code in codes:
            filename = getattr(code, "co_filename", None)
            if filename is None or not filename.startswith(_root):
                continue
            # A module's own code is line 0: it shares line 1 with a
            # definition that starts there.
            line = 0 if code.co_name == "<module>" else code.co_firstlineno
            key = (filename, line)
            if key in _emitted:
                continue
            _emitted.add(key)
            _stat("%s/%s%d" % (filename, _CODE, line))
        while _data_files:
            _stat(_data_files.pop() + "/" + _DATA)


def flush():
    """Emits what ran so far in the current scope (a runner integration
    calls this before it pushes or pops a scope)."""
    try:
        _emit()
    except Exception:
        _mark_broken()


_scopes_entered = 0


def entered_scope():
    """After a scope push: this scope is tracked (its own `begin` marker:
    the interceptor records a path once per process)."""
    global _scopes_entered
    if _root is not None:
        _scopes_entered += 1
        _stat("%s%d.%d" % (_BEGIN, os.getpid(), _scopes_entered))


def finish():
    """Emits the rest and, when nothing escaped the tracer, `end`."""
    global _finished
    if _root is None or _finished:
        return
    _finished = True
    try:
        if not _tracer.intact():
            _mark_broken()  # the program replaced or stopped the tracer
        if len(sys._current_frames()) > 1:
            _mark_broken()  # a thread may still run code after this (nothing
            # is imported here: an import now would be a dependency)
        _tracer.pause()
        _emit()
        if not _broken:
            _stat(_END + str(os.getpid()))
    except Exception:
        pass


_resumed = 0


def _resume():
    """After an exec that failed: the process goes on, tracked again (a new
    `begin` after the `end` finish() made: its account is open again)."""
    global _finished, _resumed
    if _root is None or not _finished:
        return
    try:
        _finished = False
        _resumed += 1
        _tracer.resume()
        _stat("%s%d.r%d" % (_BEGIN, os.getpid(), _resumed))
    except Exception:
        _mark_broken()


def _wrap_exec():
    # os.execv/execve replace the image (os.execl, execvp, spawnv... go
    # through them): what this image ran is emitted first.
    for name in ("execv", "execve"):
        original = getattr(os, name, None)
        if original is None:
            continue

        def wrapper(*args, _original=original, **kwargs):
            finish()
            try:
                return _original(*args, **kwargs)
            finally:
                _resume()  # reached only when the exec failed

        wrapper.__name__ = name
        wrapper.__doc__ = original.__doc__
        setattr(os, name, wrapper)


def _after_fork_in_child():
    # A new process: its log starts here. The parent emitted what it ran
    # before the fork (in its scope); only the forking thread survives.
    global _finished
    ident = _thread_ident()
    _tracer.forked(ident)
    _finished = False
    _stat(_BEGIN + str(os.getpid()))
    if _slow:
        _stat("%s%d:%s" % (_SLOW, os.getpid(), _slow))


def _thread_ident():
    import _thread

    return _thread.get_ident()


def _wrap_threads():
    import _thread

    original = _thread.start_new_thread

    def start_new_thread(function, args, kwargs=None):
        def run(*a, **k):
            try:
                token = _tracer.thread_started()
                started = True
            except Exception:
                _mark_broken()
                started = False
            try:
                return function(*a, **k)
            finally:
                if started and not _tracer.thread_intact(token):
                    _mark_broken()

        return original(run, args, kwargs or {})

    _thread.start_new_thread = start_new_thread
    if hasattr(_thread, "start_new"):
        _thread.start_new = start_new_thread
    threading = sys.modules.get("threading")
    if threading is not None and hasattr(threading, "_start_new_thread"):
        threading._start_new_thread = start_new_thread


def _note_read(path):
    try:
        if isinstance(path, int):
            return
        path = os.fsdecode(os.fspath(path))
        if not path.endswith(".py"):
            return
        full = os.path.normpath(os.path.join(os.getcwd(), path))
        if full.startswith(_root):
            _data_files.add(full)
    except Exception:
        pass


def _wrap_reads():
    import builtins
    import io

    original_open = io.open

    def open(file, mode="r", *args, **kwargs):
        if "r" in mode or "+" in mode:
            _note_read(file)
        return original_open(file, mode, *args, **kwargs)

    open.__doc__ = original_open.__doc__
    builtins.open = io.open = open
    tokenize = sys.modules.get("tokenize")
    if tokenize is not None and getattr(tokenize, "_builtin_open", None) is original_open:
        tokenize._builtin_open = open

    original_os_open = os.open

    def os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR) != os.O_WRONLY:
            _note_read(path)
        return original_os_open(path, flags, *args, **kwargs)

    os.open = os_open

    # The import system reads sources through FileLoader.get_data, called by
    # SourceLoader.get_code; any other caller (pkgutil.get_data, a resource
    # reader) reads them as data.
    from importlib import _bootstrap_external

    loader = _bootstrap_external.FileLoader
    original_get_data = loader.get_data

    def get_data(self, path):
        caller = sys._getframe(1).f_code
        if caller.co_name != "get_code":
            _note_read(path)
        return original_get_data(self, path)

    loader.get_data = get_data


def start():
    """Starts tracking when STE_DEFINITIONS names the root (ste_names.py
    calls this as the process starts). CPython 3.8+ only."""
    global _root, _lock, _tracer, _slow
    root = os.environ.get("STE_DEFINITIONS", "")
    if _root is not None or not root.startswith("/"):
        return
    impl = getattr(sys, "implementation", None)
    if impl is None or impl.name != "cpython" or sys.version_info < (3, 8):
        return
    try:
        import atexit
        import _thread

        _lock = _thread.RLock()
        _root = root.rstrip("/") + "/"
        _stat(_BEGIN + str(os.getpid()))
        _wrap_reads()
        _wrap_threads()
        _wrap_exec()
        _tracer, _slow = _start_tracer()
        if _slow:
            _stat("%s%d:%s" % (_SLOW, os.getpid(), _slow))
        os.register_at_fork(before=flush, after_in_child=_after_fork_in_child)
        atexit.register(finish)
    except Exception:
        _mark_broken()
