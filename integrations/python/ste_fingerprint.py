"""ste's fingerprints of Python definitions (docs/concepts.md, "Definitions").

Run by ste itself, never by a test: `python3 -I -S -B ste_fingerprint.py`
at record time (to name what each test ran) and at select time (for the
changed files only). It imports nothing but the standard library and
executes nothing of the files it reads: it parses them with `ast`.

Protocol. stdin: per file, one line with the byte count, then that many
bytes (the file's content, as ste hashed it). stdout, per file in order:

    file <n>                        (n = 0, 1, ... the file's position)
    error <one line>                it does not parse: no fingerprints
  or
    module <32 hex>                 the module-level fingerprint
    unit <32 hex> <first> <last> <name>   one per definition
    end

A *definition* (unit) is a `def` or `async def` statement directly in the
module's body or directly in the body of a class that is itself a unit's
sibling there (classes nest: "Outer.Inner.method"). Its name is its
qualified name, with "#<k>" added to the k-th (k >= 2) repetition of a name
(a property's setter). <first> is its first line (the first decorator's),
<last> its last; the code objects that start in [first, last] are its.

The unit fingerprint: the statement's ast.dump with line and column
attributes (code that moves changes: tracebacks, warnings and log records
name lines). The module fingerprint: the module's ast.dump without
attributes, after each unit's body is replaced by its docstring (kept:
`__doc__` is read without running the body) and a marker of whether the
body yields or awaits (inspect.isgeneratorfunction and the like are read
without running it). So a change confined to the body of a definition
changes that definition's fingerprint only; anything else (imports,
decorators, signatures, default values, class attributes, a definition
added, removed or renamed, a docstring) changes the module's. Each hash
is BLAKE2b-128 over a tag, the interpreter's name and version, and this
format's version: another interpreter gives other fingerprints (every
definition changes: file level, honest).
"""

import ast
import hashlib
import sys

FORMAT = 1
_SALT = ("ste-fingerprint/%d %s %d.%d" % ((FORMAT, sys.implementation.name) + tuple(sys.version_info[:2]))).encode()


def _digest(tag, text):
    h = hashlib.blake2b(digest_size=16)
    h.update(_SALT)
    h.update(b"\0" + tag + b"\0")
    h.update(text.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _yields(node):
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
    return False


def _docstring(body):
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return [body[0]]
    return []


def fingerprint(source):
    tree = ast.parse(source)
    units = []

    def visit(body, prefix):
        seen = {}
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                seen[name] = seen.get(name, 0) + 1
                if seen[name] > 1:
                    name = "%s#%d" % (name, seen[name])
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                units.append((_digest(b"unit", ast.dump(node, include_attributes=True)), first, node.end_lineno, name))
                marker = ast.Constant(value="ste:yields" if _yields(node) else "ste:body")
                node.body = _docstring(node.body) + [ast.Expr(value=marker)]
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return _digest(b"module", ast.dump(tree)), units


def main():
    stdin = sys.stdin.buffer
    out = sys.stdout
    n = 0
    while True:
        line = stdin.readline()
        if not line:
            break
        size = int(line)
        source = stdin.read(size)
        out.write("file %d\n" % n)
        n += 1
        if len(source) != size:
            out.write("error truncated input\n")
            break
        try:
            module, units = fingerprint(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            out.write("error %s\n" % (" ".join(("%s: %s" % (type(e).__name__, e)).split()) or "unparseable"))
            continue
        out.write("module %s\n" % module)
        for digest, first, last, name in units:
            out.write("unit %s %d %d %s\n" % (digest, first, last, name))
        out.write("end\n")
    out.flush()


if __name__ == "__main__":
    main()
