"""ste's Python import hook (integrations/python/ste_site/sitecustomize.py)
against CPython's own FileFinder (ctest PythonImportFinder).

    python3 tests/integrations/python_import_finder_test.py

1. Equivalence: in directories full of awkward entries (a package beside a
   module of the same name, namespace portions, every suffix, symlinks,
   dangling ones, names that are not identifiers, ".py" itself...), every
   name is looked up by both finders; the specs must be the same (name,
   origin, loader class and path, search locations, cached, parent).
2. Installation, in fresh interpreters: the hook replaces FileFinder's in
   place, takes its folder off sys.path, runs the next sitecustomize under
   that name, leaves pkgutil.iter_modules and importlib.invalidate_caches
   working, and is absent with -S / -I.

Runs with any CPython 3.6+ (the hook's range is 3.6-3.13); no pytest needed.
"""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "integrations", "python", "ste_site")


def load_hook():
    """The hook module, executed once in this process under another name."""
    spec = importlib.util.spec_from_file_location("ste_site_under_test", os.path.join(HOOK_DIR, "sitecustomize.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stock_loader_details():
    from importlib import _bootstrap_external

    return _bootstrap_external._get_supported_file_loaders()


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def describe(spec):
    if spec is None:
        return None
    loader = spec.loader
    return {
        "name": spec.name,
        "origin": spec.origin,
        "loader": type(loader).__name__ if loader is not None else None,
        "loader_path": getattr(loader, "path", None),
        "locations": list(spec.submodule_search_locations) if spec.submodule_search_locations is not None else None,
        "cached": spec.cached if spec.has_location else None,
        "parent": spec.parent,
        "has_location": spec.has_location,
    }


class EquivalenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hook = load_hook()
        if not hasattr(cls.hook, "ByNameFileFinder"):
            raise unittest.SkipTest("the hook does not install on %s" % sys.version.split()[0])

    def layout(self, root):
        ext = importlib.machinery.EXTENSION_SUFFIXES
        write(root + "/mod.py")
        write(root + "/pkg/__init__.py")
        write(root + "/pkg/sub.py")
        os.makedirs(root + "/ns/inner")  # namespace portion, nested one
        write(root + "/both/__init__.py")  # a package beats a module
        write(root + "/both.py")
        os.makedirs(root + "/nsmod")  # a module beats a namespace portion
        write(root + "/nsmod.py")
        write(root + "/onlypyc.pyc")
        write(root + "/srcpyc.py")
        write(root + "/srcpyc.pyc")
        for i, suffix in enumerate(ext):  # each extension suffix, and before .py
            write(root + "/ext%d%s" % (i, suffix))
            write(root + "/ext%d.py" % i)
            write(root + "/extpkg%d/__init__%s" % (i, suffix))
            write(root + "/extpkg%d/__init__.py" % i)
        write(root + "/ext_all" + ext[-1])
        write(root + "/ext_all" + ext[0])
        write(root + "/initpyc/__init__.pyc")
        write(root + "/initpyc/__init__.py")
        write(root + "/noext")  # a file without suffix: not a module
        os.makedirs(root + "/dir.py")  # a directory named like a module file
        os.makedirs(root + "/initdir/__init__.py")  # __init__.py a directory
        os.symlink("mod.py", root + "/link.py")
        os.symlink("nowhere.py", root + "/dangle.py")
        os.symlink("pkg", root + "/linkpkg")
        os.symlink("nowhere", root + "/danglepkg")
        write(root + "/Case.py")
        write(root + "/mod\u00e9.py")
        write(root + "/.py")  # what "" + ".py" names
        write(root + "/..py")
        write(root + "/...py")
        write(root + "/__init__.py")
        write(root + "/sub/deep.py")
        return [
            "mod", "pkg", "ns", "both", "nsmod", "onlypyc", "srcpyc", "ext_all", "initpyc", "noext",
            "dir", "initdir", "link", "dangle", "linkpkg", "danglepkg", "Case", "case", "mod\u00e9",
            "", ".", "..", "__init__", "sub", "sub/deep", "deep", "missing", "x\0y", "a.b.mod",
            "pkg.sub", "ns.inner", "dir.py",
        ] + ["ext%d" % i for i in range(len(ext))] + ["extpkg%d" % i for i in range(len(ext))]

    def test_every_name_resolves_as_with_filefinder(self):
        with tempfile.TemporaryDirectory() as root:
            names = self.layout(root)
            details = stock_loader_details()
            for path in (root, root + "/pkg", root + "/ns", root + "/missing_dir"):
                stock = importlib.machinery.FileFinder(path, *details)
                ours = self.hook.ByNameFileFinder(path, *details)
                for name in names:
                    self.assertEqual(describe(ours.find_spec(name)), describe(stock.find_spec(name)), (path, name))
                    self.assertEqual(describe(ours.find_spec(name, None)), describe(stock.find_spec(name, None)))

    def test_a_file_created_later_is_found_without_invalidating(self):
        with tempfile.TemporaryDirectory() as root:
            ours = self.hook.ByNameFileFinder(root, *stock_loader_details())
            self.assertIsNone(ours.find_spec("late"))
            write(root + "/late.py")
            self.assertEqual(ours.find_spec("late").origin, root + "/late.py")
            ours.invalidate_caches()  # a no-op, but there

    def test_iter_modules_lists_like_pkgutil(self):
        import pkgutil

        with tempfile.TemporaryDirectory() as root:
            self.layout(root)
            details = stock_loader_details()
            stock = sorted(pkgutil.iter_importer_modules(importlib.machinery.FileFinder(root, *details)))
            ours = self.hook.ByNameFileFinder(root, *details)
            self.assertEqual(sorted(pkgutil.iter_importer_modules(ours)), stock)
            self.assertEqual(sorted(ours.iter_modules()), stock)


def run_python(code, env=None, args=()):
    environ = dict(os.environ)
    environ.pop("PYTHONSTARTUP", None)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable] + list(args) + ["-c", code],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
    )


class InstallationTest(unittest.TestCase):
    PROBE = (
        "import sys, os, json\n"
        "import importlib, pkgutil, importlib.machinery\n"
        "import probe_target\n"
        "importlib.invalidate_caches()\n"
        "finder = sys.path_importer_cache[os.path.dirname(probe_target.__file__)]\n"
        "hooks = [getattr(h, '__qualname__', repr(h)) for h in sys.path_hooks]\n"
        "sc = sys.modules.get('sitecustomize')\n"
        "print(json.dumps({'finder': type(finder).__name__,\n"
        "  'is_filefinder': isinstance(finder, importlib.machinery.FileFinder),\n"
        "  'hooks': hooks, 'path': sys.path,\n"
        "  'stock_left': sorted({type(f).__name__ for f in sys.path_importer_cache.values() if f is not None}),\n"
        "  'modules': sorted(m.name for m in pkgutil.iter_modules([os.path.dirname(probe_target.__file__)])),\n"
        "  'sitecustomize': getattr(sc, '__file__', None), 'chained': getattr(sc, 'CHAINED', None)}))\n"
    )

    def probe(self, extra_path=(), args=()):
        import json

        with tempfile.TemporaryDirectory() as target:
            write(target + "/probe_target.py")
            write(target + "/other.py")
            pythonpath = os.pathsep.join([HOOK_DIR] + list(extra_path) + [target])
            run = run_python(self.PROBE, {"PYTHONPATH": pythonpath}, args)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stderr, "")
            return json.loads(run.stdout)

    def test_the_hook_replaces_filefinder_in_place_and_leaves_no_trace_on_sys_path(self):
        got = self.probe()
        plain = run_python("import sys; print([getattr(h, '__qualname__', repr(h)) for h in sys.path_hooks])")
        if sys.platform.startswith("linux") and (3, 6) <= sys.version_info[:2] <= (3, 13):
            self.assertEqual(got["finder"], "ByNameFileFinder")
            self.assertEqual(got["stock_left"].count("FileFinder"), 0, got["stock_left"])
            self.assertEqual(len(got["hooks"]), len(eval(plain.stdout)))
        self.assertTrue(got["is_filefinder"])
        self.assertNotIn(HOOK_DIR, got["path"])
        self.assertEqual(got["modules"], ["other", "probe_target"])

    def test_the_next_sitecustomize_runs_under_its_name(self):
        with tempfile.TemporaryDirectory() as other:
            write(other + "/sitecustomize.py", "CHAINED = 'yes'\n")
            got = self.probe(extra_path=[other])
            self.assertEqual(got["chained"], "yes")
            self.assertEqual(got["sitecustomize"], other + "/sitecustomize.py")

    def test_without_another_sitecustomize_the_plain_one_is_kept(self):
        plain = run_python("import sys; print(getattr(sys.modules.get('sitecustomize'), '__file__', None))")
        got = self.probe()
        if plain.stdout.strip() != "None":  # e.g. Debian's /usr/lib/python3.X/sitecustomize.py
            self.assertEqual(got["sitecustomize"], plain.stdout.strip())

    def test_no_site_or_isolated_means_no_hook(self):
        for args in (["-S"], ["-I"]):
            run = run_python(
                "import sys; print(sorted({type(f).__name__ for f in sys.path_importer_cache.values() if f}))",
                {"PYTHONPATH": HOOK_DIR},
                args,
            )
            self.assertNotIn("ByNameFileFinder", run.stdout, args)


if __name__ == "__main__":
    unittest.main()
