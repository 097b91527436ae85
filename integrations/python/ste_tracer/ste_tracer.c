/* _ste_tracer: which code objects ran, for ste's definition tracker
 * (integrations/python/ste_site/ste_defs.py, the fast backends on CPython
 * 3.11). Two ways to know, behind the same take()/reset() seam
 * (ste_tracers.py):
 *
 * 1. The warm-up counters (the default, "warm-up"). CPython 3.11 counts
 *    each entry into a code object before it specialises it: RESUME, the
 *    first instruction of every code object (after a yield too), adds one
 *    to co_warmup, which starts at QUICKENING_INITIAL_WARMUP_VALUE (-8);
 *    at 0 the code is quickened (adaptive instructions, RESUME_QUICK) and
 *    counts no more. So a code object whose counter is not -8 ran. This
 *    module keeps every code object that can run ("watched": each one
 *    exec'd, each one a function is made of, each one assigned to a
 *    function's __code__, as the audit hook below is told, and the code
 *    objects nested in their constants; at start, those of the functions
 *    and frames already there), and take() lists those whose counter moved
 *    and sets it back ("re-arms" it): a quickened one is first put back
 *    to its plain instructions in place (deopt, as co_code shows them),
 *    and the counter set back to -8, where a new code object's starts:
 *    its next entry moves it, and CPython quickens it after 8 entries, as
 *    it does new code. (Not at once: a counter set to -1 made every code
 *    object the process ran once, a module or class body, a test, quicken
 *    and specialise at its first entry, work plain CPython never does for
 *    code run fewer than 8 times; and at the next take it was deopted.)
 *    Nothing runs per call: the eval loop keeps inlining Python calls and
 *    its specialised instructions (the frame hook below costs one C call
 *    per Python call). Limits, each handled:
 *    - a generator or coroutine thrown into (gen.throw(), close(), a
 *      delegating yield from) runs its handlers without a RESUME. So each
 *      take() also lists the repository's generators and coroutines that
 *      were suspended at the take before (found by a walk of the
 *      collector's lists, made only when one of them ran since);
 *    - another frame evaluation function (a JIT, a debugger's) may run
 *      code without RESUME: warm_intact() is false then, and the tracker
 *      leaves the process at file level;
 *    - a code object nobody else holds can never run again: take() drops
 *      it once listed or not run (its own reference the last one).
 *    A take may pin what it lists (warm_take(True)): those are dropped
 *    from the watch as they are, neither re-armed nor listed again in this
 *    process or a child it forks. ste_defs.py pins what ran in the scope
 *    the process started in, which encloses every scope it enters later:
 *    their tests depend on that scope's records already (a forked test
 *    file's child then keeps what its parent specialised, and does not
 *    list it again).
 *
 * 2. A PEP 523 frame evaluation function ("frame-hook", the one before;
 *    STE_DEFS_TRACER=frame-hook): every frame CPython evaluates passes
 *    here first. The first time a code object is seen in the current
 *    generation it is marked (its co_extra slot holds the generation) and
 *    appended to a list; then the frame is evaluated by
 *    _PyEval_EvalFrameDefault, untouched. take(True) pins what it lists:
 *    marked so that it is never listed again (as above). With a frame
 *    evaluation function
 *    set, a Python-to-Python call is no longer inlined in the eval loop
 *    (one C call per Python call, as on 3.10), plus one co_extra read per
 *    frame. So Python recursion uses the C stack again (~450 bytes a
 *    level): an 8 MiB stack overflows near 17,000 levels, which plain 3.11
 *    allows with a raised recursion limit; ste_tracers.py stops the hook
 *    (uninstall()) when a program raises the limit past what is safe.
 *
 * The module:
 *   install()    sets the frame hook; False when another frame evaluation
 *                function is set (a debugger's): the tracker falls back;
 *   installed()  the interpreter's frame evaluation function is still ours;
 *   uninstall()  the default one again, if ours is set;
 *   take(pin=False)  the code objects first seen since the last take (a
 *                list; each once per generation), in the order they first
 *                ran; pinned (never listed again) with pin;
 *   reset()      a new generation: code that runs again is listed again;
 *   warm_start(root, codes)  starts the warm-up watch: the audit hook, the
 *                code of every function and generator there and the given
 *                code objects (and theirs) watched and re-armed;
 *                root, "<abs root>/", says which generators count above;
 *   warm_take(pin=False)  the watched code objects that ran since the
 *                last warm_take (each once per generation: reset() for
 *                both tracers), re-armed; with pin, pinned instead: no
 *                longer watched, left as they are;
 *   warm_intact() the watch is whole: no append failed, the default frame
 *                evaluation function runs the code;
 *   names_setup(), string_names(), used_names()  see 3 below;
 *   module_type(on_absent)  see 4 below.
 * Called with the GIL held, like the hooks themselves: no lock of its own.
 *
 * Built only for the CPython it is compiled against (CMakeLists.txt beside
 * this file: Debian 12's 3.11); the import fails (ImportError, the tracker
 * falls back) on another minor version, whose frame and code layout differ.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "_ste_tracer is for CPython 3.11 (3.12+ use sys.monitoring, ste_defs.py)"
#endif

/* Internal structures, stable within 3.11: _PyInterpreterFrame's f_code,
 * the code's warm-up counter, the collector's lists, and (our own copy,
 * hidden) the opcode tables: which specialised opcode is which plain one,
 * how many cache units follow it. */
#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_interp.h"
#pragma GCC visibility push(hidden)
#define NEED_OPCODE_TABLES
#include "internal/pycore_opcode.h"
#undef NEED_OPCODE_TABLES
#pragma GCC visibility pop
#undef Py_BUILD_CORE

static Py_ssize_t extra_index = -1;
static uintptr_t generation = 1;   /* co_extra 0 (NULL): never seen */
static PyObject *seen = NULL;      /* list: code objects not yet taken */
static int failed = 0;             /* an append failed: the list lacks one */


/* ---- 1. The warm-up counters ------------------------------------------ */

static Py_ssize_t watch_index = -1; /* co_extra: (generation listed << 1) | 1,
                                     * or WARM_PINNED */
static PyObject *watched = NULL;    /* list: every code object watched */
static PyObject *suspended = NULL;  /* list: the root's generators' code
                                     * suspended at the last warm_take */
static PyObject *root = NULL;       /* str: "<abs root>/" */
static PyInterpreterState *watching = NULL; /* set by warm_start */
static int warm_failed = 0;         /* a code object could not be watched */

#define WARM_COLD QUICKENING_INITIAL_WARMUP_VALUE  /* re-armed (-8): not run since */
#define WARM_PINNED ((uintptr_t)2) /* listed by a pinning take: never again */
#define HOOK_PINNED (~(uintptr_t)0) /* the same for the hook (no generation
                                     * gets there: reset() wraps at 2^63) */
#define GENERATOR_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)

/* A code object as new but one entry from quickening: if it was
 * quickened, its instructions the plain ones again with their caches
 * zeroed (what co_code shows; the layout is the same, so a frame that
 * runs it now goes on at the same offset), and its counter at -1. A
 * quickened code is never quickened twice (_PyCode_Quicken takes the
 * cache units after a specialised instruction for instructions). */
static void
rearm(PyCodeObject *co)
{
    if (co->co_warmup == 0) {
        _Py_CODEUNIT *instructions = _PyCode_CODE(co);
        Py_ssize_t n = Py_SIZE(co);
        for (Py_ssize_t i = 0; i < n; i++) {
            int opcode = _PyOpcode_Deopt[_Py_OPCODE(instructions[i])];
            int caches = _PyOpcode_Caches[opcode];
            instructions[i] = _Py_MAKECODEUNIT(opcode, _Py_OPARG(instructions[i]));
            while (caches-- > 0 && i + 1 < n) {
                instructions[++i] = _Py_MAKECODEUNIT(CACHE, 0);
            }
        }
    }
    co->co_warmup = WARM_COLD;
}

static uintptr_t
watch_mark(PyObject *code)
{
    void *mark = NULL;
    if (_PyCode_GetExtra(code, watch_index, &mark) != 0) {
        PyErr_Clear();
        return 0;
    }
    return (uintptr_t)mark;
}

/* Watches `code` and the code objects in its constants (a function's,
 * class body's, comprehension's), re-armed. */
static void
watch(PyObject *code, int depth)
{
    if (!PyCode_Check(code) || depth > 100) return;
    if (watch_mark(code) != 0) return;  /* watched, or pinned */
    if (PyList_Append(watched, code) != 0 ||
        _PyCode_SetExtra(code, watch_index, (void *)(uintptr_t)1) != 0) {
        PyErr_Clear();
        warm_failed = 1;
        return;
    }
    rearm((PyCodeObject *)code);
    PyObject *consts = ((PyCodeObject *)code)->co_consts;
    if (consts != NULL && PyTuple_Check(consts)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); i++) {
            watch(PyTuple_GET_ITEM(consts, i), depth + 1);
        }
    }
}

/* Every code object that can run reaches CPython through one of these
 * audited events, before it runs: `exec` (exec(), eval(), the import
 * system's exec of a module, a script run by the interpreter), a function
 * made of a code object (types.FunctionType), a function's __code__
 * replaced. */
static int
audit(const char *event, PyObject *args, void *unused)
{
    if (watching == NULL || (event[0] != 'e' && event[0] != 'f' && event[0] != 'o')) return 0;
    if (PyInterpreterState_Get() != watching || !PyTuple_Check(args)) return 0;
    PyObject *code = NULL;
    if (strcmp(event, "exec") == 0 || strcmp(event, "function.__new__") == 0) {
        if (PyTuple_GET_SIZE(args) >= 1) code = PyTuple_GET_ITEM(args, 0);
    } else if (strcmp(event, "object.__setattr__") == 0 && PyTuple_GET_SIZE(args) == 3 &&
               PyFunction_Check(PyTuple_GET_ITEM(args, 0))) {
        code = PyTuple_GET_ITEM(args, 2);
    }
    if (code != NULL && PyCode_Check(code)) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        watch(code, 0);
        PyErr_Restore(type, value, traceback);
    }
    return 0;
}

static int
in_root(PyCodeObject *co)
{
    return co->co_filename != NULL && PyUnicode_Check(co->co_filename) &&
           PyUnicode_Tailmatch(co->co_filename, root, 0, PY_SSIZE_T_MAX, -1) == 1;
}

/* Calls visit(object, found) for every object the collector of `interp`
 * tracks (its generations and the permanent one), until one returns
 * non-zero (returned). Nothing may allocate a tracked object meanwhile:
 * `found` is a list made before, appended to. */
static int
for_each_tracked(PyInterpreterState *interp, int (*visit)(PyObject *, PyObject *), PyObject *found)
{
    struct _gc_runtime_state *gc = &interp->gc;
    PyGC_Head *heads[NUM_GENERATIONS + 1];
    for (int g = 0; g < NUM_GENERATIONS; g++) heads[g] = &gc->generations[g].head;
    heads[NUM_GENERATIONS] = &gc->permanent_generation.head;
    for (int g = 0; g <= NUM_GENERATIONS; g++) {
        for (PyGC_Head *at = _PyGCHead_NEXT(heads[g]); at != heads[g]; at = _PyGCHead_NEXT(at)) {
            int stop = visit((PyObject *)(at + 1), found);
            if (stop) return stop;
        }
    }
    return 0;
}

static int
is_generator_type(PyTypeObject *type)
{
    return type == &PyGen_Type || type == &PyCoro_Type || type == &PyAsyncGen_Type;
}

/* for_each_tracked's: the code of a suspended generator of the root. */
static int
visit_suspended(PyObject *op, PyObject *found)
{
    if (!is_generator_type(Py_TYPE(op))) return 0;
    PyGenObject *gen = (PyGenObject *)op;
    if (gen->gi_frame_state != FRAME_SUSPENDED || gen->gi_code == NULL || !in_root(gen->gi_code)) return 0;
    return PyList_Append(found, (PyObject *)gen->gi_code) != 0 ? -1 : 0;
}

/* for_each_tracked's: the code of a function or generator. */
static int
visit_code_holder(PyObject *op, PyObject *found)
{
    PyObject *code = NULL;
    if (Py_TYPE(op) == &PyFunction_Type) {
        code = ((PyFunctionObject *)op)->func_code;
    } else if (is_generator_type(Py_TYPE(op))) {
        code = (PyObject *)((PyGenObject *)op)->gi_code;
    }
    return code != NULL && PyList_Append(found, code) != 0 ? -1 : 0;
}

/* The code objects of the root's generators, coroutines and async
 * generators suspended now (a walk of every object the collector tracks;
 * nothing allocated on the way but the list's own items). */
static PyObject *
suspended_now(void)
{
    PyObject *found = PyList_New(0);
    if (found == NULL) return NULL;
    if (for_each_tracked(watching, visit_suspended, found) != 0) {
        Py_DECREF(found);
        return NULL;
    }
    return found;
}

static PyObject *
ste_warm_start(PyObject *self, PyObject *args)
{
    PyObject *given_root, *codes;
    if (!PyArg_ParseTuple(args, "UO:warm_start", &given_root, &codes)) return NULL;
    if (watching != NULL) Py_RETURN_NONE;
    if (watch_index < 0) {
        watch_index = _PyEval_RequestCodeExtraIndex(NULL);
        if (watch_index < 0) {
            PyErr_SetString(PyExc_RuntimeError, "_ste_tracer: no code extra index left");
            return NULL;
        }
    }
    if ((watched = PyList_New(0)) == NULL || (suspended = PyList_New(0)) == NULL) return NULL;
    Py_INCREF(given_root);
    root = given_root;
    /* The code of every function and generator there now (a walk of the
     * collector's lists, into a list first: watching allocates). */
    PyObject *found = PyList_New(0);
    if (found == NULL) return NULL;
    if (for_each_tracked(PyInterpreterState_Get(), visit_code_holder, found) != 0) {
        Py_DECREF(found);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(found); i++) watch(PyList_GET_ITEM(found, i), 0);
    Py_DECREF(found);
    PyObject *iterator = PyObject_GetIter(codes);
    if (iterator == NULL) return NULL;
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        watch(item, 0);
        Py_DECREF(item);
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) return NULL;
    if (PySys_AddAuditHook(audit, NULL) != 0) return NULL;
    watching = PyInterpreterState_Get();
    Py_RETURN_NONE;
}

/* Appends `code` to `taken` unless this generation listed it (its mark
 * `listed`), and marks it. */
static int
list_once(PyObject *taken, PyObject *code, uintptr_t listed)
{
    if (watch_mark(code) == listed) return 0;
    if (PyList_Append(taken, code) != 0) return -1;
    if (_PyCode_SetExtra(code, watch_index, (void *)listed) != 0) PyErr_Clear();
    return 0;
}

static PyObject *
ste_warm_take(PyObject *self, PyObject *args)
{
    int pin = 0;
    if (!PyArg_ParseTuple(args, "|p:warm_take", &pin)) return NULL;
    if (watching == NULL) return PyList_New(0);
    if (warm_failed) {
        PyErr_SetString(PyExc_MemoryError, "_ste_tracer: a code object could not be watched");
        return NULL;
    }
    /* The list made before the pass: nothing in it allocates an object the
     * collector tracks (a collection could run a finalizer, which could
     * make code and so watch it: append to the list walked here). */
    PyObject *taken = PyList_New(0);
    if (taken == NULL) return NULL;
    uintptr_t listed = (generation << 1) | 1;
    int generators_ran = 0, failed_append = 0;
    /* `watched` is compacted in place: a code object kept is not touched
     * but for its counter (read, and set back when it ran). A forked
     * child shares its parent's code objects' pages until it writes one,
     * and a new list of the kept ones would write every refcount. */
    PyObject **items = ((PyListObject *)watched)->ob_item;
    Py_ssize_t n = PyList_GET_SIZE(watched), at = 0, kept = 0;
    PyObject **gone = NULL;  /* pinned or dead: released after the pass */
    Py_ssize_t n_gone = 0, gone_room = 0;
    for (; at < n; at++) {
        PyObject *code = items[at];
        PyCodeObject *co = (PyCodeObject *)code;
        int keep = Py_REFCNT(code) > 1;  /* one nobody else holds can never run again */
        if (co->co_warmup != WARM_COLD) {
            if ((co->co_flags & GENERATOR_FLAGS) && in_root(co)) generators_ran = 1;
            if (list_once(taken, code, listed) != 0) {
                failed_append = 1;
                break;
            }
            if (pin && _PyCode_SetExtra(code, watch_index, (void *)WARM_PINNED) == 0) {
                keep = 0;  /* left as it is (specialised), watched no more */
            } else {
                PyErr_Clear();  /* (unpinned: watched and re-armed, as without pin) */
                rearm(co);
            }
        }
        if (keep) {
            items[kept++] = code;
            continue;
        }
        if (n_gone == gone_room) {
            gone_room = gone_room ? 2 * gone_room : 256;
            PyObject **more = PyMem_Realloc(gone, gone_room * sizeof *gone);
            if (more == NULL) {
                failed_append = 1;
                items[kept++] = code;  /* (kept: released at a later take) */
                at++;
                break;
            }
            gone = more;
        }
        gone[n_gone++] = code;
    }
    /* What the pass did not reach stays; then the released go (a weak
     * reference's callback may run as one goes, and watch new code:
     * appended to the list, whole again by then). */
    while (at < n) items[kept++] = items[at++];
    Py_SET_SIZE(watched, kept);
    for (Py_ssize_t k = 0; k < n_gone; k++) Py_DECREF(gone[k]);
    PyMem_Free(gone);
    if (failed_append) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    /* A generator suspended at the last take may have been thrown into
     * since (no RESUME): listed as having run. */
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(suspended); k++) {
        PyObject *code = PyList_GET_ITEM(suspended, k);
        if (watch_mark(code) == WARM_PINNED) continue;  /* listed for good */
        watch(code, 0);  /* (it is: its function's code was) */
        if (list_once(taken, code, listed) != 0) goto fail;
        /* (Not pinned, even by a pinning take: a pinned code object is
         * never in `watched`, which this one is. Listed again while it
         * stays suspended: more than needed, never less.) */
    }
    /* Which are suspended now: a walk (~5 ns an object the collector
     * tracks) only when one of the root's generators ran since the last
     * take: else none became suspended (one is suspended by running), and
     * those suspended before are listed again (one closed or thrown into
     * since, without a RESUME, stays listed until the next walk). */
    if (generators_ran) {
        PyObject *now = suspended_now();
        if (now == NULL) goto fail;
        Py_SETREF(suspended, now);
    }
    return taken;
fail:
    Py_DECREF(taken);
    return NULL;
}

static PyObject *
ste_warm_intact(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(watching != NULL && !warm_failed &&
                           _PyInterpreterState_GetEvalFrameFunc(watching) == _PyEval_EvalFrameDefault);
}

/* ---- 2. The frame evaluation hook ------------------------------------- */

static PyObject *
ste_eval_frame(PyThreadState *tstate, struct _PyInterpreterFrame *frame, int throwflag)
{
    PyObject *code = (PyObject *)frame->f_code;
    void *mark = NULL;
    if (_PyCode_GetExtra(code, extra_index, &mark) == 0 && (uintptr_t)mark != generation &&
        (uintptr_t)mark != HOOK_PINNED) {
        /* The first run in this generation. An exception may be pending
         * (throwflag: gen.throw()): it is the frame's, kept as it is. */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        if (PyList_Append(seen, code) != 0) {
            failed = 1;  /* take() says so: the tracker stops, no `end` */
        } else if (_PyCode_SetExtra(code, extra_index, (void *)generation) != 0) {
            /* Unmarked: listed again at its next run (take()'s callers
             * deduplicate). */
        }
        PyErr_Clear();
        PyErr_Restore(type, value, traceback);
    }
    return _PyEval_EvalFrameDefault(tstate, frame, throwflag);
}

static PyObject *
ste_install(PyObject *self, PyObject *unused)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    _PyFrameEvalFunction current = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (current == ste_eval_frame) Py_RETURN_TRUE;
    if (current != _PyEval_EvalFrameDefault) Py_RETURN_FALSE;  /* someone else's */
    _PyInterpreterState_SetEvalFrameFunc(interp, ste_eval_frame);
    Py_RETURN_TRUE;
}

static PyObject *
ste_uninstall(PyObject *self, PyObject *unused)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (_PyInterpreterState_GetEvalFrameFunc(interp) == ste_eval_frame) {
        _PyInterpreterState_SetEvalFrameFunc(interp, _PyEval_EvalFrameDefault);
    }
    Py_RETURN_NONE;
}

static PyObject *
ste_installed(PyObject *self, PyObject *unused)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    return PyBool_FromLong(_PyInterpreterState_GetEvalFrameFunc(interp) == ste_eval_frame);
}

static PyObject *
ste_take(PyObject *self, PyObject *args)
{
    int pin = 0;
    if (!PyArg_ParseTuple(args, "|p:take", &pin)) return NULL;
    if (failed) {
        PyErr_SetString(PyExc_MemoryError, "_ste_tracer: a code object could not be listed");
        return NULL;
    }
    PyObject *fresh = PyList_New(0);
    if (fresh == NULL) return NULL;
    PyObject *taken = seen;
    seen = fresh;
    for (Py_ssize_t i = 0; pin && i < PyList_GET_SIZE(taken); i++) {
        /* (Unpinned where it fails: listed again at its next run.) */
        if (_PyCode_SetExtra(PyList_GET_ITEM(taken, i), extra_index, (void *)HOOK_PINNED) != 0) PyErr_Clear();
    }
    return taken;
}

static PyObject *
ste_reset(PyObject *self, PyObject *unused)
{
    generation++;
    /* 0 is "never seen"; the warm-up marks hold the generation shifted. */
    if (generation == 0 || (generation << 1) == 0) generation = 1;
    Py_RETURN_NONE;
}


/* ---- 3. What code names: ste_parts.py's _string_names and _used_names,
 * the same answers in C (they read every code object that ran; in Python
 * they were half of what a test file's records cost). ste_parts.py keeps
 * its own as the definition, and as the answer where this module is not
 * there; tests/integrations/python_defs_tracer_test.py compares the two on
 * every code object of the standard library. -------------------------- */

static unsigned char name_ops[256], binding_ops[256], name_shift[256];
static int op_import_from = -1, op_import_name = -1, op_load_const = -1, op_extended_arg = -1;
static int op_store_name = -1, op_store_global = -1;
static unsigned char global_ops[256];  /* LOAD_GLOBAL, LOAD_NAME, ...: a module's own names */
static int names_ready = 0;

/* table[op] = 1 for each opcode in `ops` (an iterable of ints). */
static int
opcode_table(PyObject *ops, unsigned char *table)
{
    PyObject *it = PyObject_GetIter(ops), *item;
    if (it == NULL) return -1;
    while ((item = PyIter_Next(it)) != NULL) {
        long op = PyLong_AsLong(item);
        Py_DECREF(item);
        if (op >= 0 && op < 256) table[op] = 1;
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

/* names_setup(name_ops, shifts, binding_ops, import_from, import_name,
 * load_const, extended_arg, store_name, store_global, global_ops):
 * ste_parts.setup's tables. */
static PyObject *
ste_names_setup(PyObject *self, PyObject *args)
{
    PyObject *ops, *shifts, *binding, *globals;
    if (!PyArg_ParseTuple(args, "OOOiiiiiiO:names_setup", &ops, &shifts, &binding, &op_import_from,
                          &op_import_name, &op_load_const, &op_extended_arg, &op_store_name,
                          &op_store_global, &globals)) return NULL;
    memset(name_ops, 0, sizeof name_ops);
    memset(binding_ops, 0, sizeof binding_ops);
    memset(name_shift, 0, sizeof name_shift);
    memset(global_ops, 0, sizeof global_ops);
    if (opcode_table(ops, name_ops) != 0 || opcode_table(binding, binding_ops) != 0 ||
        opcode_table(globals, global_ops) != 0) return NULL;
    PyObject *key, *value;
    Py_ssize_t at = 0;
    if (!PyDict_Check(shifts)) {
        PyErr_SetString(PyExc_TypeError, "names_setup: shifts is a dict");
        return NULL;
    }
    while (PyDict_Next(shifts, &at, &key, &value)) {
        long op = PyLong_AsLong(key), shift = PyLong_AsLong(value);
        if (op >= 0 && op < 256 && shift >= 0 && shift < 8) name_shift[op] = (unsigned char)shift;
    }
    if (PyErr_Occurred()) return NULL;
    names_ready = 1;
    Py_RETURN_NONE;
}

/* Every character of s[start:end] but the dots (when `dots`) a letter, a
 * digit or '_', and at least one such: s.replace(".", "") (when `dots`)
 * .replace("_", "a").isalnum(). */
static int
alnum_or_underscore(PyObject *s, int dots)
{
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), counted = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (dots && ch == '.') continue;
        if (ch != '_' && !Py_UNICODE_ISALNUM(ch)) return 0;
        counted++;
    }
    return counted > 0;
}

static int
string_names_in(PyObject *consts, PyObject *direct, PyObject *nested, int depth)
{
    if (depth > 200) {
        PyErr_SetString(PyExc_RecursionError, "string_names: constants nested too deep");
        return -1;
    }
    PyObject *into = depth ? nested : direct;
    PyObject *it = PyObject_GetIter(consts);
    if (it == NULL) return -1;
    PyObject *c;
    int failed = 0;
    while (!failed && (c = PyIter_Next(it)) != NULL) {
        if (PyUnicode_CheckExact(c)) {
            Py_ssize_t n = PyUnicode_GET_LENGTH(c);
            int identifier = PyUnicode_IsIdentifier(c);
            if (identifier < 0) {
                failed = 1;
            } else if (identifier) {
                if (n <= 200 && (PyUnicode_IS_ASCII(c) || alnum_or_underscore(c, 0)) && PySet_Add(into, c) != 0)
                    failed = 1;
            } else if (n <= 200 && PyUnicode_FindChar(c, '.', 0, n, 1) >= 0 && alnum_or_underscore(c, 1)) {
                PyObject *dot = PyUnicode_FromString(".");
                PyObject *parts = dot ? PyUnicode_Split(c, dot, -1) : NULL;
                Py_XDECREF(dot);
                if (parts == NULL) {
                    failed = 1;
                } else {
                    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(parts) && !failed; k++) {
                        PyObject *part = PyList_GET_ITEM(parts, k);
                        int ok = PyUnicode_IsIdentifier(part);
                        if (ok < 0 || (ok && PySet_Add(into, part) != 0)) failed = 1;
                    }
                    Py_DECREF(parts);
                }
            }
        } else if (PyTuple_CheckExact(c) || PyFrozenSet_CheckExact(c)) {
            if (string_names_in(c, direct, nested, depth + 1) != 0) failed = 1;
        }
        Py_DECREF(c);
    }
    Py_DECREF(it);
    return failed || PyErr_Occurred() ? -1 : 0;
}

/* string_names(consts, direct, nested): _string_names(consts, direct,
 * nested) (sets, added to). */
static PyObject *
ste_string_names(PyObject *self, PyObject *args)
{
    PyObject *consts, *direct, *nested;
    if (!PyArg_ParseTuple(args, "OO!O!:string_names", &consts, &PySet_Type, &direct, &PySet_Type, &nested))
        return NULL;
    if (string_names_in(consts, direct, nested, 0) != 0) return NULL;
    Py_RETURN_NONE;
}

/* used_names(code, pairs[, globs]): _used_names(code, pairs, globs):
 * (used, imported), each import's (level, module, name) appended to the
 * list `pairs` (None: not wanted). An import is a use too unless the next
 * instruction stores it as the global or class-body name it imports. With
 * the set `globs`, the names the code loads only as globals go there, not
 * into `used`. */
static PyObject *
ste_used_names(PyObject *self, PyObject *args)
{
    PyObject *code, *pairs, *globs = Py_None;
    if (!PyArg_ParseTuple(args, "O!O|O:used_names", &PyCode_Type, &code, &pairs, &globs)) return NULL;
    if (globs != Py_None && !PySet_Check(globs)) {
        PyErr_SetString(PyExc_TypeError, "used_names: globs is a set or None");
        return NULL;
    }
    if (!names_ready) {
        PyErr_SetString(PyExc_RuntimeError, "used_names before names_setup");
        return NULL;
    }
    if (pairs != Py_None && !PyList_Check(pairs)) {
        PyErr_SetString(PyExc_TypeError, "used_names: pairs is a list or None");
        return NULL;
    }
    PyCodeObject *co = (PyCodeObject *)code;
    PyObject *bytes = PyCode_GetCode(co);  /* co_code: the plain instructions */
    if (bytes == NULL) return NULL;
    PyObject *used = PySet_New(NULL), *imported = PySet_New(NULL), *loaded = NULL;
    PyObject *module = Py_None, *level = Py_None;  /* borrowed */
    Py_INCREF(module);
    Py_INCREF(level);
    if (used == NULL || imported == NULL) goto fail;
    if (globs != Py_None && (loaded = PySet_New(NULL)) == NULL) goto fail;
    const unsigned char *ops = (const unsigned char *)PyBytes_AS_STRING(bytes);
    Py_ssize_t n = PyBytes_GET_SIZE(bytes) & ~(Py_ssize_t)1;
    PyObject *names = co->co_names, *consts = co->co_consts;
    Py_ssize_t n_names = PyTuple_GET_SIZE(names);
    long ext = 0;
    for (Py_ssize_t at = 0; at < n; at += 2) {
        int op = ops[at];
        long arg = ops[at + 1] | ext;
        if (op == op_extended_arg) {
            ext = arg << 8;
            continue;
        }
        ext = 0;
        if (!name_ops[op]) continue;
        long index = arg >> name_shift[op];
        if (index >= n_names) continue;
        PyObject *name = PyTuple_GET_ITEM(names, index);
        if (!binding_ops[op]) {
            if (PySet_Add(loaded != NULL && global_ops[op] ? loaded : used, name) != 0) goto fail;
        } else if (op == op_import_from) {
            if (PySet_Add(imported, name) != 0) goto fail;
            if ((at + 3 >= n || (ops[at + 2] != op_store_name && ops[at + 2] != op_store_global) ||
                 ops[at + 3] != index) && PySet_Add(used, name) != 0) goto fail;
            if (pairs != Py_None) {
                PyObject *pair = PyTuple_Pack(3, level, module, name);
                if (pair == NULL || PyList_Append(pairs, pair) != 0) {
                    Py_XDECREF(pair);
                    goto fail;
                }
                Py_DECREF(pair);
            }
        } else if (op == op_import_name && pairs != Py_None) {
            Py_SETREF(module, Py_NewRef(name));
            Py_SETREF(level, Py_NewRef(Py_None));
            if (at >= 4 && ops[at - 4] == op_load_const && ops[at - 2] == op_load_const &&
                (at < 6 || ops[at - 6] != op_extended_arg) && ops[at - 3] < PyTuple_GET_SIZE(consts)) {
                PyObject *value = PyTuple_GET_ITEM(consts, ops[at - 3]);
                if (PyLong_CheckExact(value)) Py_SETREF(level, Py_NewRef(value));
            }
        }
    }
    if (loaded != NULL) {
        /* a name also loaded otherwise (an attribute) is no module's own */
        PyObject *it = PyObject_GetIter(loaded), *name;
        if (it == NULL) goto fail;
        while ((name = PyIter_Next(it)) != NULL) {
            int also = PySet_Contains(used, name);
            if (also < 0 || PySet_Add(also ? used : globs, name) != 0) {
                Py_DECREF(name);
                Py_DECREF(it);
                goto fail;
            }
            Py_DECREF(name);
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) goto fail;
        Py_CLEAR(loaded);
    }
    Py_DECREF(bytes);
    Py_DECREF(module);
    Py_DECREF(level);
    PyObject *result = PyTuple_Pack(2, used, imported);
    Py_DECREF(used);
    Py_DECREF(imported);
    return result;
fail:
    Py_DECREF(bytes);
    Py_DECREF(module);
    Py_DECREF(level);
    Py_XDECREF(used);
    Py_XDECREF(imported);
    Py_XDECREF(loaded);
    return NULL;
}

/* ---- 4. A module type whose failed lookups are told ----------------------
 * ste_parts.py makes each repository module an instance of a subclass of
 * the module type, to note a name looked up in it and not found (and its
 * namespace read by string: __dir__, __dict__, in Python). Its own
 * __getattr__ in Python made every lookup in such a module a call through
 * a slot wrapper (`m.x` ~9 times as slow as in a plain module, bench/definitions/module_lookup.py: the
 * interpreter calls __getattribute__ first, then __getattr__ when that
 * failed) and every failed one a Python frame and a second lookup. This
 * type's getattro is the module type's own, called directly; only when it
 * fails with AttributeError is on_absent(module, name) called, the error
 * kept aside meanwhile (what on_absent raises is dropped: it notes its own
 * failures). A Python subclass of it that defines no __getattr__ or
 * __getattribute__ inherits this getattro. Still no exact module: the
 * interpreter does not specialise `m.x` on it (nor on a module with its
 * own __getattr__). ------------------------------------------------------- */

static PyObject *on_absent = NULL;
/* Names looked up and found (`looked_up`, a set ste_parts empties at each
 * emission), unless `known` (ste_parts' names already used) holds them,
 * the import system looked them up (`from m import x` and `import *` copy:
 * IMPORT_FROM, IMPORT_STAR; a copy is no use of the value) or code whose
 * file name starts with one of `skipped` did (a list of str ste_parts
 * keeps: importlib's frozen modules, whose _handle_fromlist copies too;
 * the test runners' finders, which look up every name of a test module to
 * find its tests). A lookup with no Python frame to tell is
 * noted. */
static PyObject *looked_up = NULL, *known = NULL, *skipped = NULL;
static int op_import_star = -1;

/* Whether the code running now is the import system copying names, or a
 * skipped directory's. */
static int
skipped_now(void)
{
    PyFrameObject *frame = PyEval_GetFrame();  /* borrowed */
    if (frame == NULL) return 0;
    PyCodeObject *code = PyFrame_GetCode(frame);
    int copying = 0;
    PyObject *filename = code->co_filename;
    if (PyUnicode_Check(filename) && skipped != NULL) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(skipped) && !copying; i++) {
            PyObject *prefix = PyList_GET_ITEM(skipped, i);
            if (PyUnicode_Check(prefix) && PyUnicode_Tailmatch(filename, prefix, 0, PY_SSIZE_T_MAX, -1) == 1)
                copying = 1;
        }
        if (PyErr_Occurred()) PyErr_Clear();
    }
    if (!copying) {
        int lasti = PyFrame_GetLasti(frame);
        PyObject *bytes = PyCode_GetCode(code);
        if (bytes == NULL) {
            PyErr_Clear();
        } else {
            if (lasti >= 0 && lasti < PyBytes_GET_SIZE(bytes)) {
                int op = (unsigned char)PyBytes_AS_STRING(bytes)[lasti];
                copying = op == op_import_from || (op_import_star >= 0 && op == op_import_star);
            }
            Py_DECREF(bytes);
        }
    }
    Py_DECREF(code);
    return copying;
}

static PyObject *
watched_getattro(PyObject *self, PyObject *name)
{
    PyObject *found = PyModule_Type.tp_getattro(self, name);
    if (found == NULL && on_absent != NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *noted = PyObject_CallFunctionObjArgs(on_absent, self, name, NULL);
        if (noted == NULL) {
            PyErr_Clear();
        } else {
            Py_DECREF(noted);
        }
        PyErr_Restore(type, value, traceback);
    } else if (found != NULL && looked_up != NULL && PyUnicode_CheckExact(name)) {
        /* (a set lookup each, for a name already noted or used) */
        int seen = PySet_Contains(known, name);
        if (seen == 0) seen = PySet_Contains(looked_up, name);
        if (seen == 0 && !skipped_now()) seen = PySet_Add(looked_up, name);
        if (seen < 0) PyErr_Clear();  /* (a lost note: ste_parts sees the set's state) */
    }
    return found;
}

/* module_type(on_absent[, looked_up, known, import_star, skipped]) */
static PyObject *
ste_module_type(PyObject *self, PyObject *args)
{
    PyObject *callback, *into = NULL, *used = NULL, *skip = NULL;
    int star = -1;
    if (!PyArg_ParseTuple(args, "O|O!O!iO!:module_type", &callback, &PySet_Type, &into, &PySet_Type, &used, &star,
                          &PyList_Type, &skip))
        return NULL;
    if (!PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "module_type: on_absent must be callable");
        return NULL;
    }
    if ((into == NULL) != (used == NULL)) {
        PyErr_SetString(PyExc_TypeError, "module_type: looked_up and known go together");
        return NULL;
    }
    Py_XSETREF(on_absent, Py_NewRef(callback));
    Py_XSETREF(looked_up, Py_XNewRef(into));
    Py_XSETREF(known, Py_XNewRef(used));
    Py_XSETREF(skipped, Py_XNewRef(skip));
    op_import_star = star;
    PyType_Slot slots[] = {
        {Py_tp_getattro, (void *)watched_getattro},
        {Py_tp_doc, (void *)"A module whose failed lookups are told (_ste_tracer.module_type)."},
        {0, NULL},
    };
    PyType_Spec spec = {
        "_ste_tracer.watched_module", 0, 0,
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots,  /* (the collector's flag and slots: the module type's) */
    };
    return PyType_FromSpecWithBases(&spec, (PyObject *)&PyModule_Type);
}

static PyMethodDef methods[] = {
    {"install", ste_install, METH_NOARGS, "Sets the frame evaluation hook; False if another is set."},
    {"installed", ste_installed, METH_NOARGS, "True while the hook is the interpreter's."},
    {"uninstall", ste_uninstall, METH_NOARGS, "The default frame evaluation again, if ours is set."},
    {"take", ste_take, METH_VARARGS, "The code objects first run since the last take; take(True) pins them."},
    {"reset", ste_reset, METH_NOARGS, "Forgets what was taken: code that runs again is listed again."},
    {"warm_start", ste_warm_start, METH_VARARGS, "Starts the warm-up watch: warm_start(root, codes)."},
    {"warm_take", ste_warm_take, METH_VARARGS,
     "The watched code objects that ran since the last warm_take; warm_take(True) pins them."},
    {"warm_intact", ste_warm_intact, METH_NOARGS, "The warm-up watch is whole."},
    {"names_setup", ste_names_setup, METH_VARARGS, "ste_parts.setup's opcode tables for used_names."},
    {"string_names", ste_string_names, METH_VARARGS, "ste_parts._string_names in C."},
    {"used_names", ste_used_names, METH_VARARGS, "ste_parts._used_names in C."},
    {"module_type", ste_module_type, METH_VARARGS,
     "A subclass of the module type whose failed lookups call on_absent(module, name), and whose lookups "
     "found go into the set looked_up unless the set known holds them or the import system copies them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ste_tracer",
    "Which code objects ran (warm-up counters, or a PEP 523 frame evaluation hook; ste's definition tracker).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__ste_tracer(void)
{
    /* Another 3.x with the same ABI tag would not load this file; a build
     * against other headers of 3.11 might, and must not run. */
    if ((Py_Version >> 16) != (PY_VERSION_HEX >> 16)) {
        PyErr_Format(PyExc_ImportError, "_ste_tracer was built for CPython %d.%d",
                     PY_MAJOR_VERSION, PY_MINOR_VERSION);
        return NULL;
    }
    if (extra_index < 0) {
        extra_index = _PyEval_RequestCodeExtraIndex(NULL);
        if (extra_index < 0) {
            PyErr_SetString(PyExc_ImportError, "_ste_tracer: no code extra index left");
            return NULL;
        }
    }
    if (seen == NULL && (seen = PyList_New(0)) == NULL) return NULL;
    return PyModule_Create(&module);
}
