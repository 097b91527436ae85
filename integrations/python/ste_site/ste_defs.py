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
                                    pkgutil.get_data), or stat'ed other
                                    than by os.path's or pathlib's
                                    existence predicates (getsize,
                                    st_mtime): its bytes, not only its
                                    code, matter;
  /\\x01ste-defs-begin:<pid>        this process (or forked child, or scope
                                    it entered) is tracked from here on;
  /\\x01ste-defs-end:<pid>          everything it ran is accounted for (a
                                    `begin` after it, as after an exec that
                                    failed, opens the account again);
  /\\x01ste-defs-v2:<pid>           this tracker makes the records below
                                    (without them, ste makes each test depend
                                    on every docstring, constant and place of
                                    what it ran);
  <abs file>/\\x01ste-docs-tracked  <file>'s docstrings are watched (see
                                    "Docstrings");
  <abs file>/\\x01ste-doc:<line>    the docstring of <file>'s class or
                                    definition starting at <line> (0: the
                                    module's) was used;
  <abs file>/\\x01ste-name:<name>   code that ran names <name> (loads it, or
                                    holds it as a string constant), and
                                    <file> binds <name> at its top level to a
                                    plain value (see "Constants");
  <abs file>/\\x01ste-namespace     <file>'s namespace was read by string;
  /\\x01ste-positions:<pid>.<n>     code that ran read the lines of frames;
  /\\x01ste-code-lines:<pid>.<n>    code that ran read the lines of code
                                    objects (see "Places");
  /\\x01ste-defs-slow:<pid>:<why>   this process tracks with the slow
                                    fallback tracer, and why (below);
  /\\x01ste-defs-scope:<pid>.<n>    made in a scope a runner just entered
                                    through ste_protocol.py: what ran was
                                    emitted and forgotten at the push (and
                                    is again at the pop), so every code
                                    object that runs in this scope is
                                    recorded in it, even one an earlier
                                    scope ran (a test case's own part:
                                    docs/concepts.md, "Test cases"), but
                                    one the process's starting scope
                                    recorded (below: "Pinned").

ste trusts a process's code records only when it made both markers: a
process that ends without `end` (killed, os._exit, the tracer replaced by
the test: another frame evaluation function, or with the fallback a profiler
or tracer of its own; the frame hook stepping aside for a recursion limit
raised past ste_tracers._SAFE_DEPTH; a thread still running at exit)
leaves its tests at file level.

How: a tracer (ste_tracers.py) that lists each code object the first time
it runs, on every thread, chosen as the process starts (the first that
works):
  - CPython 3.11: _ste_tracer (integrations/python/ste_tracer/, a C
    extension built with ste, found beside the interceptor: python/ in the
    folder of libste_preload.so on LD_PRELOAD), which reads the
    interpreter's warm-up counters (a code object entered moves its
    counter; every code object that can run is watched from the audit
    event that hands it to CPython): nothing runs per call, the eval loop
    stays specialised and keeps inlining calls. STE_DEFS_TRACER=frame-hook
    chooses its PEP 523 frame evaluation hook instead (the one before: a C
    call per Python call);
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
    scope_changed()), so that what ran in a test file's scope is recorded
    there; the tracer then forgets what it listed (its reset()), so that
    the next scope records again what it runs;
  - at exit (atexit), before an exec (os.execv/execve), and in a forking
    runner's child before os._exit (finish()).

Pinned: what is taken while the process is in the scope it started in
(no scope entered through ste_protocol.py, or every one left again) is
never listed again by this process or a child it forks: every scope it
enters later is inside that one, and a test depends on the records of the
scopes around its own (batch_split.h), so listing it there again would
add nothing. The warm-up counters leave that code as it is, specialised
(a forked test file's child runs what its parent ran at full speed), and
the tracker has less to look at. A pop with no push seen (the scopes were
changed behind ste_protocol.py's back) leaves the process without `end`.

Docstrings, constants and places: ste_parts.py (what ran is handed to it
as it is emitted, and it makes the records above that name them).

Nothing here raises into the program: a failure stops the tracking, which
leaves the process without its `end` marker (file level, honest).
"""

import os
import sys

_CODE = "\x01ste-code:"
_DATA = "\x01ste-data"
_BEGIN = "/\x01ste-defs-begin:"  # + pid: a forked child's own (the interceptor
_END = "/\x01ste-defs-end:"  # drops a path its process recorded before the fork)
_V2 = "/\x01ste-defs-v2:"
_V3 = "/\x01ste-defs-v3:"  # absent and star records (ste_parts.py)
_SLOW = "/\x01ste-defs-slow:"  # + pid + ":" + why
_SCOPE = "/\x01ste-defs-scope:"  # + pid + "." + n

_root = None  # "<abs root>/" while tracking
_tracer = None  # the backend (below) while tracking
_parts = None  # ste_parts while tracking
_slow = ""  # why the fallback tracks this process ("" for a fast tracer)
_emitted = set()  # (filename, line) already recorded by this process
_data_files = set()  # abs paths read as data, not yet recorded
_broken = False
_finished = False
_lock = None


_os_stat = os.stat  # before _wrap_reads: the records are no reads


def _stat(path):
    try:
        _os_stat(path)
    except (OSError, ValueError):
        pass


def _mark_broken():
    global _broken
    _broken = True


def _emit():
    """Records what ran since the last emission (and data reads)."""
    if _root is None:
        return
    with _lock:
        try:
            codes = _tracer.take(_depth == 0)  # (pinned in the starting scope)
        except Exception:
            _mark_broken()
            codes = ()
        for code in codes:
            filename = getattr(code, "co_filename", None)
            if type(filename) is str and filename.startswith(_root):
                # A module's own code is line 0: it shares line 1 with a
                # definition that starts there.
                line = 0 if code.co_name == "<module>" else code.co_firstlineno
                key = (filename, line)
                if key not in _emitted:
                    _emitted.add(key)
                    _stat("%s/%s%d" % (filename, _CODE, line))
            _parts.look_at(code)
        while _data_files:
            _stat(_data_files.pop() + "/" + _DATA)
        _parts.emit()


def flush():
    """Emits what ran so far in the current scope (a runner integration
    calls this before it pushes or pops a scope)."""
    try:
        _emit()
    except Exception:
        _mark_broken()


def scope_changed():
    """Before a runner pushes or pops a scope: emits what ran so far in the
    current scope, then forgets it (the tracer's reset() and what was
    emitted), so that the next scope records every code object it runs."""
    try:
        _emit()
        if _root is not None:
            with _lock:
                _tracer.reset()
                _emitted.clear()
    except Exception:
        _mark_broken()


_scopes_entered = 0
_depth = 0  # scopes entered and not left: 0 in the starting scope


def entered_scope():
    """After a scope push: this scope is tracked (its own `begin` marker:
    the interceptor records a path once per process), and records all it
    runs (the `scope` marker: scope_changed() ran before the push)."""
    global _scopes_entered, _depth
    if _root is not None:
        _scopes_entered += 1
        _depth += 1
        _stat("%s%d.%d" % (_BEGIN, os.getpid(), _scopes_entered))
        _stat("%s%d.%d" % (_SCOPE, os.getpid(), _scopes_entered))


def left_scope():
    """After a scope pop (scope_changed() ran before it). Below the
    starting scope, what was pinned there may not enclose what comes."""
    global _depth
    if _root is None:
        return
    if _depth == 0:
        _mark_broken()
    else:
        _depth -= 1


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
    _stat(_V2 + str(os.getpid()))
    _stat(_V3 + str(os.getpid()))
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


# Functions that stat a path and hand out only whether it is there and
# what it is (os.path's and pathlib's predicates, realpath's walk), or use
# its size and times only to drop a cache (linecache: what it reads next is
# noted as it opens the file), by their module (frozen ones have no file;
# 3.13's pathlib is a package).
_CHECKS = {
    "genericpath": frozenset(("exists", "isfile", "isdir", "samefile", "samestat", "sameopenfile")),
    "posixpath": frozenset(("lexists", "islink", "ismount", "realpath", "_joinrealpath")),
    "pathlib": frozenset(("exists", "is_file", "is_dir", "is_symlink", "is_mount", "samefile", "resolve")),
    "linecache": frozenset(("checkcache", "updatecache")),
}


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

    from ste_names import same_os_support as _same_os_support  # shutil.rmtree asks os.supports_dir_fd

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

    os.open = _same_os_support(original_os_open, os_open)

    # A stat of a source says it is there, and ste depends on that through
    # the module's view where the module loaded; a stat that hands out its
    # size or times (getsize, getmtime, st_size) is a read of its bytes'
    # shape: data. An existence check is os.path's or pathlib's predicate.
    original_stat, original_lstat = os.stat, os.lstat

    def checks_only(frame):
        for _ in range(3):
            frame = frame.f_back
            if frame is None:
                return False
            code = frame.f_code
            names = _CHECKS.get(frame.f_globals.get("__name__", "").split(".")[0])
            if names is not None and code.co_name in names:
                return True
        return False

    def noting(original):
        def wrapper(path, *args, **kwargs):
            if not checks_only(sys._getframe()):
                _note_read(path)
            return original(path, *args, **kwargs)

        wrapper.__name__, wrapper.__doc__ = original.__name__, original.__doc__
        return wrapper

    stat = _same_os_support(original_stat, noting(original_stat))
    lstat = _same_os_support(original_lstat, noting(original_lstat))
    os.stat, os.lstat = stat, lstat
    if sys.version_info < (3, 11):  # pathlib took os.stat as it loaded
        import pathlib

        accessor = getattr(pathlib, "_NormalAccessor", None)
        if accessor is not None:
            accessor.stat, accessor.lstat = staticmethod(stat), staticmethod(lstat)

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
        global _parts
        import ste_parts as _parts

        _parts.setup(_root, _stat, _mark_broken)
        _stat(_V2 + str(os.getpid()))
        _stat(_V3 + str(os.getpid()))
        import ste_tracers

        _tracer, _slow = ste_tracers.start(_lock, _mark_broken, _root)
        _parts.use_compiled(getattr(_tracer, "_m", None))
        if _slow:
            _stat("%s%d:%s" % (_SLOW, os.getpid(), _slow))
        os.register_at_fork(before=flush, after_in_child=_after_fork_in_child)
        atexit.register(finish)
    except Exception:
        _mark_broken()
