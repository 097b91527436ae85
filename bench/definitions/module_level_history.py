#!/usr/bin/python3
"""What a real Python history's module-level edits are, and which imports
could be narrowed at all (issue 24: what is left after the finer parts).

  bench/definitions/module_level_history.py kinds REPO N [UNDER]
  bench/definitions/module_level_history.py imports REPO PKG COMMIT...

`kinds`: for the last N non-merge first-parent commits, every modified
non-test .py file (under the folder UNDER, when given: a project whose
tests are a folder of their own, `src` or `lib/pkg`) whose module fingerprint (integrations/python/
ste_fingerprint.py of this tree) changed is classified by what changed at
its top level (a file counts once per kind): imports, top-level
definitions added or removed, a decorated function's header, a plain
function's header that stays module-level (a default or annotation that
may fail or run code), class members added or removed or changed, class
bases, other top-level statements.

`imports`: for each COMMIT (a merge is diffed against its first parent),
each import added or removed at the top level of a non-test module of PKG
is checked against the load order of `import PKG` at the parent: the
imported module (and the imported name, when it is a submodule) was fully
loaded before the importer's import began. Only then can the change bind a
name and nothing more (no module loads earlier, later, or for the first
time; no partially initialized module is read). Runs `import PKG` of the
parent's tree in a git worktree; nothing else of the repository runs.
"""
import ast
import collections
import importlib.abc
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "integrations", "python"))
import ste_fingerprint  # noqa: E402


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=False).stdout


def changed_sources(repo, commit, first_parent=False, under=""):
    """Modified non-test .py files of `commit` (against its first parent),
    under the folder `under` if not empty."""
    args = ["diff-tree", "--no-commit-id", "-r", "--name-status"] + ([commit + "^1", commit] if first_parent else [commit])
    for line in git(repo, *args).decode().split("\n"):
        parts = line.split("\t")
        if len(parts) == 2 and parts[0] == "M" and parts[1].endswith(".py") and "/tests/" not in parts[1] and \
                parts[1].startswith(under.rstrip("/") + "/" if under else ""):
            yield parts[1]


def top_level(src):
    """The shape of a module's top level, bodies left out."""
    out = []
    for s in ast.parse(src).body:
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            out.append(("import", ast.dump(s)))
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(("def", s.name, ast.dump(s.args), tuple(ast.dump(d) for d in s.decorator_list)))
        elif isinstance(s, ast.ClassDef):
            members = tuple(("method", m.name, ast.dump(m.args), tuple(ast.dump(d) for d in m.decorator_list))
                            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) else ("attr", ast.dump(m))
                            for m in s.body if not (isinstance(m, ast.Expr) and isinstance(m.value, ast.Constant)))
            out.append(("class", s.name, tuple(ast.dump(b) for b in s.bases), members))
        elif not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
            out.append(("other", ast.dump(s)))
    return out


def kinds(repo, n, under=""):
    commits = git(repo, "log", "--no-merges", "--first-parent", "-n", str(n), "--format=%H", "HEAD").decode().split()
    counts, files = collections.Counter(), 0
    for c in commits:
        for path in changed_sources(repo, c, under=under):
            old, new = git(repo, "show", "%s^:%s" % (c, path)), git(repo, "show", "%s:%s" % (c, path))
            try:
                if ste_fingerprint.fingerprint(old)[0] == ste_fingerprint.fingerprint(new)[0]:
                    continue
                a, b = top_level(old), top_level(new)
            except (SyntaxError, ValueError):
                continue
            files += 1
            found = set()
            if {x for x in a if x[0] == "import"} != {x for x in b if x[0] == "import"}:
                found.add("imports added, removed or changed")
            da = {x[1]: x for x in a if x[0] in ("def", "class")}
            db = {x[1]: x for x in b if x[0] in ("def", "class")}
            if set(da) != set(db):
                found.add("top-level definitions added or removed")
            for name in set(da) & set(db):
                x, y = da[name], db[name]
                if x == y:
                    continue
                if x[0] == "class" and y[0] == "class":
                    if x[2] != y[2]:
                        found.add("a class's bases")
                    mx, my = {m[1]: m for m in x[3]}, {m[1]: m for m in y[3]}
                    found.add("class members added or removed" if set(mx) != set(my) else "a class member changed")
                elif x[0] == "def" and y[0] == "def":
                    found.add("a decorated function's header" if x[3] or y[3]
                              else "a plain function's header that stays module-level")
            if [x for x in a if x[0] == "other"] != [x for x in b if x[0] == "other"]:
                found.add("other top-level statements")
            for k in found or {"other (a docstring added or removed, a body that now yields)"}:
                counts[k] += 1
    print("%d commits: %d non-test files with a module-level change" % (len(commits), files))
    for k, v in counts.most_common():
        print("%5d  %s" % (v, k))


def load_order(tree, pkg):
    """{module: [modules fully loaded when its import began]} for `import pkg`."""
    probe = r'''
import importlib.abc, json, sys
pkg = sys.argv[2]
before = {}
class Probe(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == pkg and name not in before:
            before[name] = [n for n, m in list(sys.modules.items()) if n.split(".")[0] == pkg and m is not None
                            and getattr(m, "__spec__", None) is not None and not getattr(m.__spec__, "_initializing", False)]
sys.path.insert(0, sys.argv[1])
sys.meta_path.insert(0, Probe())
__import__(pkg)
print(json.dumps(before))
'''
    done = subprocess.run(["/usr/bin/python3", "-c", probe, tree, pkg], capture_output=True, cwd=tree)
    return json.loads(done.stdout) if done.returncode == 0 else None


def imported(src, me, is_package):
    """(module, name or None) of each top-level import, made absolute."""
    out = set()
    for s in ast.parse(src).body:
        if isinstance(s, ast.Import):
            out.update((a.name, None) for a in s.names)
        elif isinstance(s, ast.ImportFrom):
            base = s.module or ""
            if s.level:
                parts = me.split(".")[: None if is_package else -1]
                parts = parts[: len(parts) - (s.level - 1)]
                base = ".".join(parts + ([s.module] if s.module else []))
            out.update((base, a.name) for a in s.names)
    return out


def imports(repo, pkg, commits):
    total, inert = 0, 0
    for c in commits:
        tree = tempfile.mkdtemp()
        subprocess.run(["git", "-C", repo, "worktree", "add", "-q", "--detach", tree, c + "^1"], check=True)
        try:
            before = load_order(tree, pkg)
        finally:
            subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", tree], check=True)
        if before is None:
            print(c[:10], "`import %s` fails at the parent: skipped" % pkg)
            continue
        for path in changed_sources(repo, c, first_parent=True):
            if not path.startswith(pkg + "/"):
                continue
            me = path[:-3].replace("/", ".")
            is_package = me.endswith(".__init__")
            me = me[: -len(".__init__")] if is_package else me
            old = imported(git(repo, "show", "%s^1:%s" % (c, path)), me, is_package)
            new = imported(git(repo, "show", "%s:%s" % (c, path)), me, is_package)
            for module, name in sorted(old ^ new, key=str):
                total += 1
                if module.split(".")[0] != pkg:
                    verdict = "outside the package"
                else:
                    loaded = set(before.get(me, []))
                    targets = [module] + ([module + "." + name] if name and module + "." + name in before else [])
                    ok = me in before and all(t in loaded for t in targets)
                    inert += ok
                    verdict = "binds only" if ok else "loads or reads a module not yet loaded"
                print("%s %s %s %s %s: %s" % (c[:10], path, "+" if (module, name) in new else "-", module, name or "",
                                             verdict))
    print("%d imports added or removed; %d of the package's bind a name only" % (total, inert))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "kinds":
        kinds(sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "")
    elif len(sys.argv) >= 5 and sys.argv[1] == "imports":
        imports(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
