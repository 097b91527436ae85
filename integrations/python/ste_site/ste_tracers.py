"""The tracers of ste's definition tracker (ste_defs.py, "How"): which code
objects a process ran, each listed the first time it runs, on every thread.

start() returns the first that works and, for the fallback, why:
  - CPython 3.11: _ste_tracer (integrations/python/ste_tracer/, found
    beside the interceptor), its warm-up counters (nothing runs per call);
    its PEP 523 frame evaluation hook instead (one C call per Python call:
    the one before) with STE_DEFS_TRACER=frame-hook, and by default where
    a scope is pushed per test case (STE_CASE_SCOPES=1): many takes;
  - CPython 3.12+: sys.monitoring;
  - otherwise: cProfile's C profiler (_lsprof) on each thread.
"""

import os
import sys

_lock = None  # ste_defs's, from start()
_mark_broken = None  # ste_defs's, from start()


def start(lock, mark_broken, root):
    """(tracer, why): the tracer started, why it is the fallback ("" when
    it is not). root: "<abs root>/", the repository's files."""
    global _lock, _mark_broken
    _lock, _mark_broken = lock, mark_broken
    return _start_tracer(root)


def _thread_ident():
    import _thread

    return _thread.get_ident()


# The tracers. Each lists code objects as they first run, on every thread,
# behind one seam:
#   name               for the summary and the tests;
#   take(pin=False)    the code objects (any file's) first run since the
#                      last take, each at least once (maybe more: _emit
#                      deduplicates); with pin, never listed again, not
#                      even after reset() (ste_defs.py pins what runs in
#                      the scope the process started in);
#   reset()            forget what was taken: code that runs again is
#                      listed again;
#   intact()           still installed (nobody replaced it);
#   thread_started()   on a new thread, before its function (a token);
#   thread_intact(t)   at the end of that thread's function;
#   pause(), resume()  around an exec (finish(), _resume());
#   forked(ident)      in a forked child (only thread `ident` survived).


class _OneListForAllThreads:
    """What a tracer that sees every thread at once (and survives a fork
    and an exec as it is) does at those points: nothing."""

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


class _WarmUp(_OneListForAllThreads):
    """CPython 3.11: _ste_tracer's warm-up counters (ste_tracer.c, 1): the
    interpreter's own count of entries into each code object, read and set
    back at each take. Every code object that can run is watched from the
    audit event that hands it to CPython (exec, a function made of it) on;
    those there before start() are found now: the functions and generators
    the collector tracks (warm_start walks its lists), the frames on every
    thread's stack."""

    name = "warm-up"

    def __init__(self, module):
        self._m = module

    def start(self, root):
        codes = []  # (the functions' and generators': warm_start finds them)
        for frame in sys._current_frames().values():
            while frame is not None:
                codes.append(frame.f_code)
                frame = frame.f_back
        self._m.warm_start(root, codes)

    def take(self, pin=False):
        return self._m.warm_take(pin)

    def reset(self):
        self._m.reset()

    def intact(self):
        return self._m.warm_intact()


class _FrameHook(_OneListForAllThreads):
    """CPython 3.11 with STE_DEFS_TRACER=frame-hook: _ste_tracer's frame
    evaluation hook (ste_tracer.c, 2; one per interpreter: every thread's
    frames)."""

    name = "frame-hook"

    def __init__(self, module):
        self._m = module

    def take(self, pin=False):
        return self._m.take(pin)

    def reset(self):
        self._m.reset()

    def intact(self):
        return self._m.installed()

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


class _Monitoring(_OneListForAllThreads):
    """CPython 3.12+: sys.monitoring's PY_START and PY_RESUME (a generator
    or coroutine resumed) on a tool id of ours, each disabled where it fired
    once the code is listed (restart_events() for reset(): every tool's
    disabled events come back, which the tools allow)."""

    name = "sys.monitoring"

    def __init__(self, tool):
        self._tool = tool
        self._new = []
        self._pinned = {}  # id(code) -> code (held: an id is not reused)
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

    def take(self, pin=False):
        # (restart_events() brings every disabled event back: a pinned
        # code's come back too, and are only not listed.)
        new = self._new[:]
        del self._new[: len(new)]  # (what another thread appends now stays)
        taken = [c for c in new if id(c) not in self._pinned]
        if pin:
            self._pinned.update((id(c), c) for c in taken)
        return taken

    def reset(self):
        sys.monitoring.restart_events()

    def intact(self):
        mon = sys.monitoring
        return mon.get_tool(self._tool) == "ste" and mon.get_events(self._tool) == self._events


class _Profile:
    """The fallback: cProfile's C profiler on each thread (a profiler is
    per thread: thread_started() starts the new thread's)."""

    name = "profile"

    def __init__(self):
        self._profilers = [(_new_profiler(), _thread_ident())]  # the main one first
        self._taken = {}  # id(code) -> code (held: an id is not reused)
        self._pinned = {}  # the same, what reset() keeps in _taken

    def take(self, pin=False):
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
            if pin:
                self._pinned.update((id(c), c) for c in codes)
        return codes

    def reset(self):
        with _lock:
            self._taken = dict(self._pinned)
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

    import ste_boot

    suffix = _bootstrap_external.EXTENSION_SUFFIXES[0]  # ".cpython-311-<arch>.so"
    for folder in ste_boot.interceptor_folders():
        path = "%s/python/_ste_tracer%s" % (folder, suffix)
        if not os.path.exists(path):
            continue
        loader = _bootstrap_external.ExtensionFileLoader("_ste_tracer", path)
        spec = _bootstrap_external.spec_from_file_location("_ste_tracer", path, loader=loader)
        return _bootstrap._load(spec)
    return None


def _start_tracer(root):
    """The first tracer that works (see top) and, for the fallback, why
    ("" for a fast one)."""
    version = "python-%d.%d" % sys.version_info[:2]
    chosen = os.environ.get("STE_DEFS_TRACER", "")
    # A scope per test case (STE_CASE_SCOPES, ste_protocol.py) means a take
    # per case: the counters' take (a walk of every watched code object,
    # and of the collector's lists when a generator ran) costs more there
    # than the hook's per-call cost (bench/README "Stop 42": 41 against 16
    # ms a case on click's suite).
    if chosen == "" and os.environ.get("STE_CASE_SCOPES") == "1":
        chosen = "frame-hook"
    if chosen == "profile":
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
            if module is not None and chosen != "frame-hook":
                tracer = _WarmUp(module)
                tracer.start(root)
                return tracer, ""
            if module is not None:
                if module.install():
                    tracer = _FrameHook(module)
                    tracer.watch_recursion_limit()
                    return tracer, ""
                why = version + "-frame-hook-taken"
        except Exception:
            why = version + "-compiled-tracer-unloadable"
    return _Profile(), why


