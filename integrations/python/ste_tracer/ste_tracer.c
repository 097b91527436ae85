/* _ste_tracer: which code objects ran, for ste's definition tracker
 * (integrations/python/ste_site/ste_defs.py, the fast backend on CPython
 * 3.11).
 *
 * A PEP 523 frame evaluation function: every frame CPython evaluates (a
 * call, a module's or class body's code, exec, a generator or coroutine
 * started or resumed, on any thread: the function is the interpreter's)
 * passes here first. The first time a code object is seen in the current
 * generation it is marked (its co_extra slot holds the generation) and
 * appended to a list; then the frame is evaluated by
 * _PyEval_EvalFrameDefault, untouched. Nothing turns on tracing or
 * profiling, so the eval loop keeps its specialised instructions (a
 * profiler on 3.11 puts it in tracing mode: everything slower). The cost
 * that remains: with a frame evaluation function set, a Python-to-Python
 * call is no longer inlined in the eval loop (one C call per Python call,
 * as on 3.10), plus one co_extra read per frame. So Python recursion uses
 * the C stack again (~450 bytes a level): an 8 MiB stack overflows near
 * 17,000 levels, which plain 3.11 allows with a raised recursion limit;
 * ste_defs.py stops the hook (uninstall()) when a program raises the limit
 * past what is safe.
 *
 * The module:
 *   install()    sets the hook; False when another frame evaluation
 *                function is set (a debugger's): the tracker falls back;
 *   installed()  the interpreter's frame evaluation function is still ours;
 *   uninstall()  the default one again, if ours is set;
 *   take()       the code objects first seen since the last take (a list;
 *                each once per generation), in the order they first ran;
 *   reset()      a new generation: code that runs again is listed again.
 * Called with the GIL held, like the hook itself: no lock of its own.
 *
 * Built only for the CPython it is compiled against (CMakeLists.txt beside
 * this file: Debian 12's 3.11); the import fails (ImportError, the tracker
 * falls back) on another minor version, whose frame layout may differ.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "_ste_tracer is for CPython 3.11 (3.12+ use sys.monitoring, ste_defs.py)"
#endif

/* _PyInterpreterFrame's f_code: an internal structure, stable within 3.11. */
#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE

static Py_ssize_t extra_index = -1;
static uintptr_t generation = 1;   /* co_extra 0 (NULL): never seen */
static PyObject *seen = NULL;      /* list: code objects not yet taken */
static int failed = 0;             /* an append failed: the list lacks one */

static PyObject *
ste_eval_frame(PyThreadState *tstate, struct _PyInterpreterFrame *frame, int throwflag)
{
    PyObject *code = (PyObject *)frame->f_code;
    void *mark = NULL;
    if (_PyCode_GetExtra(code, extra_index, &mark) == 0 && (uintptr_t)mark != generation) {
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
ste_take(PyObject *self, PyObject *unused)
{
    if (failed) {
        PyErr_SetString(PyExc_MemoryError, "_ste_tracer: a code object could not be listed");
        return NULL;
    }
    PyObject *fresh = PyList_New(0);
    if (fresh == NULL) return NULL;
    PyObject *taken = seen;
    seen = fresh;
    return taken;
}

static PyObject *
ste_reset(PyObject *self, PyObject *unused)
{
    generation++;
    if (generation == 0) generation = 1;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", ste_install, METH_NOARGS, "Sets the frame evaluation hook; False if another is set."},
    {"installed", ste_installed, METH_NOARGS, "True while the hook is the interpreter's."},
    {"uninstall", ste_uninstall, METH_NOARGS, "The default frame evaluation again, if ours is set."},
    {"take", ste_take, METH_NOARGS, "The code objects first run since the last take."},
    {"reset", ste_reset, METH_NOARGS, "Forgets what was taken: code that runs again is listed again."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ste_tracer",
    "Which code objects ran (a PEP 523 frame evaluation hook; ste's definition tracker).",
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
