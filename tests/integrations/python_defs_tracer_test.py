"""The Python definition tracker's tracers (integrations/python/ste_site/
ste_defs.py, integrations/python/ste_tracer/) in real interpreters (ctest
PythonDefinitionTracer).

    python3 tests/integrations/python_defs_tracer_test.py PRELOAD [PYTHON...]

PRELOAD is the build's libste_preload.so: the compiled tracer is found
beside it (python/), as a tracked process finds it through LD_PRELOAD.
Each case is a small program run by a fresh interpreter with the tracker
started as ste_names.py starts it (ste_defs.start(), STE_DEFINITIONS),
whose stats are written to a file instead (the program replaces
ste_defs._stat first), so each case reads exactly what the process would
have recorded:

1. Debian's Python (/usr/bin/python3, 3.11) uses the warm-up counters
   and says nothing of a slow tracer; it sees code run on a thread, in a
   forked child, after the test called sys.setprofile (and still ends its
   account), a coroutine started later, a generator resumed after reset();
   take() lists code once, reset() lists code that runs again. The
   warm-up counters' own cases ("warm"): code quickened in one scope and
   run once in the next, a generator thrown into after the scope it
   was suspended in, code exec'd from a string, a function made of a
   code object or given another's, a function defined before the tracker
   started, each listed where it ran and computing what plain Python
   computes; another frame evaluation function (set as a debugger would)
   leaves the process without `end`. The same cases with
   STE_DEFS_TRACER=frame-hook (the frame evaluation hook), where a
   recursion limit raised past what the hook's C stack allows leaves no
   `end` either (the hook steps aside: the deep recursion runs).
2. STE_DEFS_TRACER=profile forces the fallback: the slow note with its why,
   the same code records, and sys.setprofile by the test leaves no `end`
   (today's rule for a profiler).
3. Other interpreters: each PYTHON given, and python3.10, python3.12,
   python3.13 and python3.14 from PATH, when they run (a pyenv shim of a
   version not selected does not): 3.12+ run the cases of 1 with
   sys.monitoring, 3.10 and older say why they fall back.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SITE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "integrations", "python", "ste_site")
PRELOAD = ""
OTHERS = []
DEBIAN = "/usr/bin/python3"

# The program every case runs (in ROOT/prog.py). Its functions are
# recorded by their first line; CASE says what else it does.
PROGRAM = r'''
import os, sys, threading
sys.path.insert(0, os.environ["SITE"])
import ste_defs

def before_start():
    return 13

_out = open(os.environ["RECORDS"], "a")
def _stat(path):
    _out.write("%d\t%s\n" % (os.getpid(), path.replace("\x01", "^")))
    _out.flush()
ste_defs._stat = _stat
os.environ["STE_DEFINITIONS"] = os.environ["ROOT"]
ste_defs.start()
_stat("/^tracer:%s:%s" % (ste_defs._tracer.name, ste_defs._slow))
_stat("/^version:%d.%d" % sys.version_info[:2])

def on_thread():
    return 1

def in_child():
    return 2

def after_setprofile():
    return 3

async def coro():
    return 4

def gen():
    yield 5
    yield 6

def in_base():
    return 21

def in_scopes():
    return 22

def hot_in_base(n):
    total = 0
    for i in range(n):
        total += i * 2
    return total

def hot_in_scope(n):
    total = 0
    for i in range(n):
        total += i * 3
    return total

def specialised(f):
    return int(f.__code__._co_code_adaptive != f.__code__.co_code)

CASE = os.environ["CASE"]
if CASE == "thread":
    t = threading.Thread(target=on_thread)
    t.start()
    t.join()
elif CASE == "fork":
    pid = os.fork()
    if pid == 0:
        in_child()
        ste_defs.finish()
        os._exit(0)
    os.waitpid(pid, 0)
elif CASE == "setprofile":
    sys.setprofile(lambda *a: None)
    after_setprofile()
elif CASE == "resume":
    import asyncio
    c = coro()        # created now, run later
    g = gen()
    next(g)
    ste_defs._tracer.take()  # (a take that does not pin: ste_defs's would)
    ste_defs._tracer.reset()
    asyncio.run(c)
    next(g)           # resumed: listed again after the reset
    _stat("/^taken:" + ",".join(sorted(set(c.co_name for c in ste_defs._tracer.take()))))
elif CASE == "deep":
    sys.setrecursionlimit(100000)
    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)
    down(50000)
elif CASE == "warm":
    # Each step's listing, between resets: "<step>:<names>".
    import types
    def step(name):
        listed = set(c.co_name for c in ste_defs._tracer.take() if c.co_filename == __file__)
        listed.discard("_stat")  # (this harness's, run after each take)
        _stat("/^step:%s:%s" % (name, ",".join(sorted(n for n in listed if not n.startswith("<")))))
        ste_defs._tracer.reset()
    def hot(n):
        total = 0
        for i in range(n):
            total += i * 2
        return total
    assert sum(hot(i) for i in range(2000)) == sum(i * (i - 1) for i in range(2000))
    step("quickened")
    assert hot(10) == 90              # quickened before, run once now
    step("again")
    step("idle")                      # nothing of ours ran
    def thrown():
        try:
            yield 1
        except KeyError:
            yield 2
    t = thrown()
    next(t)
    step("suspended")
    assert t.throw(KeyError) == 2     # no RESUME: the handler runs
    t.close()                         # (else it stays suspended: listed)
    step("thrown")
    exec(compile("def from_text():\n    return 7\nfrom_text()\n", __file__, "exec"))
    step("exec")
    made = types.FunctionType(hot.__code__.replace(co_name="made"), globals())
    step("made-idle")
    assert made(3) == 6
    step("made")
    def giver():
        return 11
    def taker():
        return 12
    taker.__code__ = giver.__code__
    step("code-set-idle")
    assert taker() == 11
    step("code-set")
    assert before_start() == 13
    step("before-start")
elif CASE == "pinned":
    # Scopes entered and left as ste_protocol.py does (scope_changed()
    # before each push and pop): what ran in the starting scope is
    # recorded there only; what ran in an entered one, again in the next.
    assert sum(hot_in_base(i) for i in range(2000)) == sum(i * (i - 1) for i in range(2000))
    in_base()
    ste_defs.scope_changed()
    ste_defs.entered_scope()
    _stat("/^specialised:base-after-push:%d" % specialised(hot_in_base))
    _stat("/^specialised:once-after-push:%d" % specialised(in_base))  # ran once: as in plain CPython
    assert sum(hot_in_scope(i) for i in range(2000)) == 3 * sum(i * (i - 1) for i in range(2000)) // 2
    assert hot_in_base(10) == 90
    in_base()
    in_scopes()
    ste_defs.scope_changed()
    ste_defs.left_scope()
    _stat("/^specialised:base-after-pop:%d" % specialised(hot_in_base))
    _stat("/^specialised:scope-after-pop:%d" % specialised(hot_in_scope))
    ste_defs.scope_changed()
    ste_defs.entered_scope()
    in_base()
    in_scopes()
    assert hot_in_scope(10) == 135
    ste_defs.scope_changed()
    ste_defs.left_scope()
    if os.environ.get("EXTRA_POP"):
        ste_defs.left_scope()  # a pop below the starting scope
elif CASE == "replaced" and ste_defs._tracer.name == "warm-up":
    ste_defs._tracer._m.install()   # a frame evaluation function, not CPython's
elif CASE == "replaced":
    import ctypes
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    api._PyInterpreterState_SetEvalFrameFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p)
    api._PyInterpreterState_SetEvalFrameFunc(api.PyInterpreterState_Get(), default)
'''


def line_of(name):
    for n, text in enumerate(PROGRAM.split("\n")[1:], 1):
        if text.startswith("def %s(" % name) or text.startswith("async def %s(" % name):
            return n
    raise KeyError(name)


class Run:
    def __init__(self, python, case, extra_env=None):
        self.root = tempfile.mkdtemp(prefix="ste-defs-tracer-")
        with open(os.path.join(self.root, "prog.py"), "w") as f:
            f.write(PROGRAM[1:])
        records = os.path.join(self.root, "records")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "STE_"))}
        env.update(
            SITE=SITE,
            PYTHONDONTWRITEBYTECODE="1",
            ROOT=self.root,
            LD_PRELOAD=PRELOAD,
            RECORDS=records,
            CASE=case,
        )
        env.update(extra_env or {})
        try:
            done = subprocess.run([python, "prog.py"], cwd=self.root, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise AssertionError("%s %s: exit %d: %s" % (python, case, done.returncode, done.stderr))
            self.lines = []
            with open(records) as f:
                for line in f:
                    pid, path = line.rstrip("\n").split("\t", 1)
                    self.lines.append((int(pid), path))
        finally:
            shutil.rmtree(self.root)
        self.main = self.lines[0][0]
        self.version = [p for p in self.paths(self.main) if p.startswith("/^version:")][0][len("/^version:") :]

    def paths(self, pid=None):
        return [p for q, p in self.lines if pid is None or q == pid]

    def tracer(self):
        return [p for p in self.paths(self.main) if p.startswith("/^tracer:")][0]

    def ran(self, name, pid=None):
        return "%s/prog.py/^ste-code:%d" % (self.root, line_of(name)) in self.paths(pid)

    def ended(self, pid):
        return "/^ste-defs-end:%d" % pid in self.paths(pid)

    def slow(self, pid):
        return [p for p in self.paths(pid) if p.startswith("/^ste-defs-slow:%d:" % pid)]


class Tracers(unittest.TestCase):
    pythons = [DEBIAN]
    env = {}
    fast = True
    fast_tracer = "/^tracer:warm-up:"

    def runs(self, case):
        return self.runs_with(case, {})

    def runs_with(self, case, env):
        for python in self.pythons:
            with self.subTest(python=python):
                yield Run(python, case, dict(self.env, **env))

    def expect_tracer(self, run):
        if self.fast:
            self.assertIn(run.tracer(), (self.fast_tracer, "/^tracer:sys.monitoring:"))
            self.assertEqual(run.slow(run.main), [])
        else:
            self.assertTrue(run.tracer().startswith("/^tracer:profile:"), run.tracer())
            self.assertEqual(len(run.slow(run.main)), 1, run.lines)

    def test_a_thread(self):
        for run in self.runs("thread"):
            self.expect_tracer(run)
            self.assertTrue(run.ran("on_thread"), run.lines)
            self.assertTrue(run.ended(run.main), run.lines)

    def test_a_forked_child(self):
        for run in self.runs("fork"):
            child = [pid for pid, _ in run.lines if pid != run.main]
            self.assertTrue(child, run.lines)
            self.assertIn("/^ste-defs-begin:%d" % child[0], run.paths(child[0]))
            self.assertTrue(run.ran("in_child", child[0]), run.lines)
            self.assertFalse(run.ran("in_child", run.main), run.lines)
            self.assertTrue(run.ended(child[0]) and run.ended(run.main), run.lines)
            # The slow note is each process's own.
            self.assertEqual(len(run.slow(child[0])), 0 if self.fast else 1, run.lines)

    def test_sys_setprofile_by_the_test(self):
        for run in self.runs("setprofile"):
            self.assertTrue(run.ran("after_setprofile") or not self.fast, run.lines)
            # The fallback is a profiler: replaced, its account is not whole.
            self.assertEqual(run.ended(run.main), self.fast, run.lines)

    def test_a_raised_recursion_limit_and_deep_recursion(self):
        # The frame hook makes each Python call a C call: it steps aside
        # (no `end`: file level) rather than let the C stack overflow; the
        # other tracers are not in the way.
        for run in self.runs("deep"):
            self.assertEqual(run.ended(run.main), run.tracer() != "/^tracer:frame-hook:", run.lines)

    def test_a_coroutine_run_later_and_a_generator_resumed(self):
        for run in self.runs("resume"):
            # What the tracer listed after reset() (emitted records are
            # deduplicated by file and line: the tracer itself is asked).
            taken = [p for p in run.paths() if p.startswith("/^taken:")]
            self.assertEqual(len(taken), 1, run.lines)
            names = taken[0][len("/^taken:") :].split(",")
            self.assertIn("coro", names)
            self.assertIn("gen", names)

    def test_the_warm_up_counters_own_cases(self):
        for run in self.runs("warm"):
            if run.tracer() not in ("/^tracer:warm-up:", "/^tracer:frame-hook:"):
                continue  # (the cases are the compiled tracer's)
            steps = dict(p[len("/^step:") :].split(":", 1) for p in run.paths() if p.startswith("/^step:"))
            expected = {
                "quickened": "hot,step",
                "again": "hot,step",
                "idle": "step",
                "suspended": "step,thrown",
                "thrown": "step,thrown",
                "exec": "from_text,step",
                "made-idle": "step",
                "made": "made,step",
                "code-set-idle": "step",
                "code-set": "giver,step",
                "before-start": "before_start,step",
            }
            self.assertEqual(steps, expected, run.lines)
            self.assertTrue(run.ended(run.main), run.lines)

    def test_what_the_starting_scope_ran_is_pinned(self):
        for run in self.runs("pinned"):
            # The records between the scope markers entered_scope() makes.
            segments, scope = [[], [], []], 0
            for path in run.paths(run.main):
                if path.startswith("/^ste-defs-scope:"):
                    scope += 1
                else:
                    segments[scope].append(path)
            self.assertEqual(scope, 2, run.lines)
            code = "%s/prog.py/^ste-code:%%d" % run.root
            ran = [
                sorted(n for n in ("in_base", "in_scopes", "hot_in_base", "hot_in_scope") if code % line_of(n) in seg)
                for seg in segments
            ]
            self.assertEqual(
                ran,
                [["hot_in_base", "in_base"], ["hot_in_scope", "in_scopes"], ["hot_in_scope", "in_scopes"]],
                run.lines,
            )
            self.assertTrue(run.ended(run.main), run.lines)
            if run.tracer() == "/^tracer:warm-up:":
                # Pinned code keeps its specialised instructions; code
                # taken in an entered scope is put back to the plain ones;
                # code run once was never quickened, as without ste (a
                # watched counter starts where a new code object's does).
                marks = sorted(p for p in run.paths() if p.startswith("/^specialised:"))
                self.assertEqual(
                    marks,
                    [
                        "/^specialised:base-after-pop:1",
                        "/^specialised:base-after-push:1",
                        "/^specialised:once-after-push:0",
                        "/^specialised:scope-after-pop:0",
                    ],
                )
        for run in self.runs_with("pinned", {"EXTRA_POP": "1"}):
            self.assertFalse(run.ended(run.main), run.lines)

    def test_reset_and_take(self):
        # The seam itself: take() after reset() has the code again.
        program = (
            "import os, sys\n"
            "sys.path.insert(0, os.environ['SITE'])\n"
            "import ste_defs\n"
            "ste_defs.start()\n"
            "def f():\n    return 1\n"
            "f(); t = ste_defs._tracer\n"
            "first = [c.co_name for c in t.take()]\n"
            "f(); second = [c.co_name for c in t.take()]\n"
            "t.reset(); f(); third = [c.co_name for c in t.take()]\n"
            "assert 'f' in first and 'f' not in second and 'f' in third, (first, second, third)\n"
            "assert t.intact()\n"
        )
        for python in self.pythons:
            with self.subTest(python=python):
                root = tempfile.mkdtemp(prefix="ste-defs-tracer-")
                env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "STE_"))}
                env.update(SITE=SITE, PYTHONDONTWRITEBYTECODE="1", STE_DEFINITIONS=root, LD_PRELOAD=PRELOAD)
                env.update(self.env)
                try:
                    done = subprocess.run([python, "-c", program], cwd=root, env=env, capture_output=True, text=True)
                finally:
                    shutil.rmtree(root)
                self.assertEqual(done.returncode, 0, done.stderr)


class FrameHook(Tracers):
    env = {"STE_DEFS_TRACER": "frame-hook"}
    fast_tracer = "/^tracer:frame-hook:"


class FastOnly(unittest.TestCase):
    def test_another_frame_evaluation_function_leaves_no_end(self):
        for env, tracer in (({}, "warm-up"), ({"STE_DEFS_TRACER": "frame-hook"}, "frame-hook")):
            with self.subTest(tracer=tracer):
                run = Run(DEBIAN, "replaced", env)
                self.assertEqual(run.tracer(), "/^tracer:%s:" % tracer)
                self.assertIn("/^ste-defs-begin:%d" % run.main, run.paths())
                self.assertFalse(run.ended(run.main), run.lines)

    def test_case_scopes_take_the_frame_hook(self):
        # A take per test case: the hook, unless the tracer is named.
        run = Run(DEBIAN, "thread", {"STE_CASE_SCOPES": "1"})
        self.assertEqual(run.tracer(), "/^tracer:frame-hook:")
        self.assertTrue(run.ran("on_thread") and run.ended(run.main), run.lines)
        run = Run(DEBIAN, "thread", {"STE_CASE_SCOPES": "1", "STE_DEFS_TRACER": "warm-up"})
        self.assertEqual(run.tracer(), "/^tracer:warm-up:")

    def test_the_compiled_name_readers_answer_as_ste_parts(self):
        # _ste_tracer's string_names and used_names against ste_parts.py's
        # _string_names and _used_names, on every code object of the
        # standard library's modules and Debian's dist-packages (pytest...)
        # and their nested ones.
        program = r"""
import glob, os, sys
sys.path.insert(0, os.environ["SITE"])
import ste_parts, ste_tracers
ste_parts.setup("/nonexistent/", lambda path: None, lambda: None)
module = ste_tracers._compiled_tracer()
ste_parts.use_compiled(module)
assert ste_parts._compiled is module, "not used"
codes, files = [], 0
roots = [os.path.dirname(os.__file__), "/usr/lib/python3/dist-packages"]
for path in sorted(p for r in roots for p in glob.glob(r + "/**/*.py", recursive=True)):
    try:
        with open(path, "rb") as f:
            top = compile(f.read(), path, "exec", dont_inherit=True)
    except Exception:
        continue
    files += 1
    stack = [top]
    while stack:
        code = stack.pop()
        codes.append(code)
        stack.extend(c for c in code.co_consts if type(c) is type(top))
differ = 0
for code in codes:
    a = (set(), set()); b = (set(), set())
    ste_parts._string_names(code.co_consts, *a)
    module.string_names(code.co_consts, *b)
    pa, pb = [], []
    ua = ste_parts._used_names(code, pa); ub = module.used_names(code, pb)
    na = ste_parts._used_names(code); nb = module.used_names(code, None)
    ga, gb = set(), set()
    ma = ste_parts._used_names(code, None, ga); mb = module.used_names(code, None, gb)
    if a != b or ua != ub or pa != pb or na != nb or ma != mb or ga != gb:
        differ += 1
        if differ < 5:
            print("differ:", code.co_filename, code.co_firstlineno, code.co_name, a ^ b if a != b else "", ua, ub, pa, pb)
globs = sum(1 for code in codes if ste_parts._used_names(code, None, set())[0] != ste_parts._used_names(code)[0])
print("files %d codes %d differ %d globals %d" % (files, len(codes), differ, globs))
assert files > 500 and len(codes) > 15000 and differ == 0 and globs > 1000
"""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "STE_"))}
        env.update(SITE=SITE, PYTHONDONTWRITEBYTECODE="1", LD_PRELOAD=PRELOAD)
        done = subprocess.run([DEBIAN, "-W", "ignore", "-c", program], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("differ 0", done.stdout)

    def test_an_older_python_says_why_it_falls_back(self):
        for python in OLD:
            with self.subTest(python=python):
                run = Run(python, "thread")
                why = "python-%s-no-compiled-tracer" % run.version
                self.assertEqual(run.slow(run.main), ["/^ste-defs-slow:%d:%s" % (run.main, why)])
                self.assertTrue(run.ran("on_thread"), run.lines)

    def test_without_the_compiled_tracer_the_fallback_says_why(self):
        run = Run(DEBIAN, "thread", {"LD_PRELOAD": ""})
        self.assertEqual(run.slow(run.main), ["/^ste-defs-slow:%d:python-3.11-no-compiled-tracer" % run.main])
        self.assertTrue(run.ran("on_thread"), run.lines)


class Fallback(Tracers):
    env = {"STE_DEFS_TRACER": "profile"}
    fast = False

    def expect_tracer(self, run):
        Tracers.expect_tracer(self, run)
        self.assertEqual(run.slow(run.main), ["/^ste-defs-slow:%d:STE_DEFS_TRACER=profile" % run.main])


def version_of(python):
    """(major, minor) of `python`, or None when it does not run."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"], capture_output=True, text=True
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return tuple(int(x) for x in done.stdout.split())


OLD = []

if __name__ == "__main__":
    PRELOAD = os.path.abspath(sys.argv[1])
    candidates = sys.argv[2:] + [shutil.which(n) for n in ("python3.10", "python3.12", "python3.13", "python3.14")]
    newer = []
    for python in [p for p in candidates if p]:
        version = version_of(python)
        if version is None:
            print("(%s does not run here: not tested)" % python)
        elif version >= (3, 12):
            newer.append(python)
        elif version < (3, 11):
            OLD.append(python)
    print("other interpreters: 3.12+ %s, older %s" % (newer, OLD))
    Tracers.pythons = [DEBIAN] + newer
    FrameHook.pythons = [DEBIAN]
    Fallback.pythons = [DEBIAN]
    del sys.argv[1:]
    unittest.main(verbosity=2)
