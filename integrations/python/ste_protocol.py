"""What ste's Python batch runners share (the protocol: integrations/README.md).

* SteScopes: ste_scope_push/ste_scope_pop of libste_preload.so, resolved at
  run time with ctypes; absent when the process is not under ste, and then
  every call is a no-op.
* append_result: the line per test file in $STE_RESULTS.
* preload_files: $STE_PRELOAD_FILES, imported in the root scope.
* leave_the_tree_alone: no __pycache__/ written while recording.
* case_scope_name: a test case's name made a valid scope name.
* encode/send/frames: the parent-child messages (length-prefixed pickles
  of plain data: both ends run this same code).
* fork_child: fork, run a function in the child, never return there.
"""

import ctypes
import json
import os
import pickle
import struct
import sys


class SteScopes:
    """ste_scope_push/pop resolved at run time; no-ops when not under ste."""

    def __init__(self):
        self._push = self._pop = None
        try:
            lib = ctypes.CDLL(None, use_errno=True)
            push, pop = lib.ste_scope_push, lib.ste_scope_pop
        except (OSError, AttributeError):
            return
        push.argtypes, push.restype = [ctypes.c_char_p], ctypes.c_int
        pop.argtypes, pop.restype = [], ctypes.c_int
        self._push, self._pop = push, pop

    @property
    def available(self):
        return self._push is not None

    def push(self, name):
        """Enters scope current + "/" + name (str or bytes). Returns None, or
        the error's text (the scope is then unchanged; see ste/scope.h)."""
        if self._push is None:
            return None
        _definitions("scope_changed")
        if self._push(os.fsencode(name)) == 0:
            _definitions("entered_scope")
            return None
        return os.strerror(ctypes.get_errno())

    def pop(self):
        if self._pop is not None:
            _definitions("scope_changed")
            if self._pop() == 0:
                _definitions("left_scope")


def _definitions(what):
    """Calls ste_defs.<what>() when the definition tracker runs in this
    process (ste_site/ste_defs.py: what ran is recorded in the scope it ran
    in), and on a scope change ste_names.scope_changed() (the environment
    variables read are recorded again in the new scope)."""
    names = sys.modules.get("ste_names")
    if what == "scope_changed" and names is not None and hasattr(names, "scope_changed"):
        names.scope_changed()
    defs = sys.modules.get("ste_defs")
    if defs is not None:
        getattr(defs, what)()


def under_ste(scopes):
    return scopes.available or bool(os.environ.get("STE_RESULTS"))


def leave_the_tree_alone():
    """When recording ($STE_RESULTS set): write no bytecode (__pycache__/),
    here nor in the processes the tests start. A .pyc written during a
    record appears after ste hashed the tree, so the next selection would
    see it as a change (and it is derived from its source, which is a
    dependency already)."""
    if os.environ.get("STE_RESULTS"):
        sys.dont_write_bytecode = True
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


def jobs():
    """$STE_JOBS: children at a time (default 1)."""
    try:
        return max(1, int(os.environ.get("STE_JOBS", "1")))
    except ValueError:
        return 1


def case_scopes_enabled():
    return os.environ.get("STE_CASE_SCOPES") == "1"


def file_scope_name(path):
    """The scope of a test file: its path relative to the working directory
    (the repository root under ste), normalised."""
    return os.path.normpath(os.path.relpath(os.path.abspath(path)))


CASE_SCOPE_MAX_BYTES = 512


def case_scope_name(name):
    """`name` (a test case's id below its file) as a scope name, in bytes,
    by the rule of integrations/README.md ("Case scope names"): the UTF-8
    bytes with '%', '/', 0x00-0x1F and 0x7F percent-encoded; "" -> "%";
    over 512 bytes: a prefix of at most 494 bytes, not cut inside an escape
    or a UTF-8 sequence, + "%~" + the FNV-1a 64 hash of the name's bytes."""
    if isinstance(name, bytes):
        raw = name
    else:
        try:
            raw = name.encode("utf-8", "surrogateescape")  # os.fsdecode bytes back
        except UnicodeEncodeError:  # a lone surrogate from Python source
            raw = name.encode("utf-8", "surrogatepass")
    if not raw:
        return b"%"
    out = bytearray()
    for b in raw:
        if b < 0x20 or b in b"%/\x7f":
            out += b"%%%02X" % b
        else:
            out.append(b)
    if len(out) <= CASE_SCOPE_MAX_BYTES:
        return bytes(out)
    cut = CASE_SCOPE_MAX_BYTES - 18
    while cut > 0 and (0x80 <= out[cut] <= 0xBF or b"%" in out[max(0, cut - 2) : cut]):
        cut -= 1  # not inside a UTF-8 sequence nor a %XX escape
    h = 0xCBF29CE484222325  # FNV-1a 64
    for b in raw:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return bytes(out[:cut]) + b"%%~%016x" % h


def outcome_of(exit_code):
    """A child's exit status as the protocol's outcome."""
    return {0: "passed", 1: "failed"}.get(exit_code, "error")


def append_result(exit_code, seconds, path):
    """Appends "<outcome>\\t<exit code>\\t<seconds>\\t<path>\\n" to $STE_RESULTS
    (one write, O_APPEND); nothing when it is unset."""
    results = os.environ.get("STE_RESULTS")
    if not results:
        return
    line = "%s\t%d\t%.3f\t%s\n" % (outcome_of(exit_code), exit_code, seconds, path)
    fd = os.open(results, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line.encode("utf-8", "surrogateescape"))
    finally:
        os.close(fd)


def preload_files():
    """Imports the $STE_PRELOAD_FILES entries (one per line: a file path,
    imported under its dotted name when sys.path reaches it, else by path;
    or a module name) in the current scope, the root one. A failure is
    reported and skipped: a test that needs the module imports it itself."""
    import importlib
    import importlib.util

    for entry in os.environ.get("STE_PRELOAD_FILES", "").splitlines():
        entry = entry.strip()
        if not entry:
            continue
        try:
            if entry.endswith(".py") or os.sep in entry:
                path = os.path.abspath(entry)
                name = importable_name(path)
                if name:
                    importlib.import_module(name)
                    continue
                name = os.path.splitext(os.path.basename(path))[0]
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules.setdefault(name, module)
                spec.loader.exec_module(module)
            else:
                importlib.import_module(entry)
        except Exception as e:
            sys.stderr.write("ste: could not preload %s: %r\n" % (entry, e))


def importable_name(path):
    """The dotted name under which the file `path` is importable from
    sys.path, or None."""
    for base in sys.path:
        base = os.path.abspath(base or os.getcwd())
        if not path.startswith(base + os.sep):
            continue
        parts = os.path.splitext(os.path.relpath(path, base))[0].split(os.sep)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            return ".".join(parts)
    return None


def exit_code_of(status):
    """A waitpid status as an exit code, 128+N for signal N."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def describe_exit(code):
    if code > 128:
        import signal

        try:
            return "signal %s" % signal.Signals(code - 128).name
        except ValueError:
            return "signal %d" % (code - 128)
    return "exit status %d" % code


def encode(message):
    """One message as it goes to the parent: a 4-byte length and a pickle of
    plain data (pickle keeps tuples; JSON with repr() for what it cannot
    take)."""
    try:
        data = pickle.dumps(message, protocol=4)
    except Exception:
        data = pickle.dumps(json.loads(json.dumps(message, default=repr)), protocol=4)
    return struct.pack("<I", len(data)) + data


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data) :]


def send(fd, message):
    """Sends one message to the parent now."""
    write_all(fd, encode(message))


def frames(buffer):
    """Splits the complete messages off `buffer`: (messages, rest)."""
    messages = []
    while len(buffer) >= 4:
        (size,) = struct.unpack_from("<I", buffer)
        if len(buffer) < 4 + size:
            break
        messages.append(pickle.loads(buffer[4 : 4 + size]))
        buffer = buffer[4 + size :]
    return messages, buffer


def fork_child(run):
    """Forks. In the child, calls run(write_fd) and exits with its result
    (3 and a message {"kind": "internalerror"} if it raises): the child never
    returns. In the parent, returns (read_fd, pid); the pipe is close-on-exec,
    so what a test execs does not hold it open."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return read_fd, pid
    code = 3
    try:
        os.close(read_fd)
        code = run(write_fd)
    except BaseException:
        try:
            import traceback

            send(write_fd, {"kind": "internalerror", "text": traceback.format_exc()})
        except BaseException:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            _definitions("finish")
            os._exit(code)


def run_children(items, start, on_message, on_exit, jobs):
    """Runs a child per item, at most `jobs` at a time, started in order:
    start(item) forks it (returns fork_child's (read_fd, pid), or None to
    skip the item); on_message(item, message) for each message it sends;
    on_exit(item, exit_code, seconds) once it has ended. On an exception
    here (KeyboardInterrupt, say) the running children get SIGTERM and are
    reaped before it propagates."""
    import gc
    import selectors
    import time

    gc.collect()
    gc.freeze()  # the children share the parent's pages (refcounts aside)
    selector = selectors.DefaultSelector()
    running = {}  # read fd -> [item, pid, started, pending bytes]
    pending = list(items)
    try:
        while pending or running:
            while pending and len(running) < jobs:
                item = pending.pop(0)
                started = start(item)
                if started is None:
                    continue
                fd, pid = started
                running[fd] = [item, pid, time.monotonic(), b""]
                selector.register(fd, selectors.EVENT_READ)
            if not running:
                continue
            for key, _ in selector.select():
                entry = running[key.fd]
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    messages, entry[3] = frames(entry[3] + chunk)
                    for message in messages:
                        on_message(entry[0], message)
                    continue
                selector.unregister(key.fd)
                os.close(key.fd)
                del running[key.fd]
                _, status = os.waitpid(entry[1], 0)
                on_exit(entry[0], exit_code_of(status), time.monotonic() - entry[2])
    except BaseException:
        for entry in running.values():
            try:
                os.kill(entry[1], 15)
                os.waitpid(entry[1], 0)
            except OSError:
                pass
        raise
    finally:
        selector.close()
        gc.unfreeze()
