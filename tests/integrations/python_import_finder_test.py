"""ste's Python startup hook (integrations/python/ste_site/ste_names.py,
sitecustomize.py, and integrations/python/ste_userbase) against CPython's
own FileFinder, site.py and importlib.metadata (ctest PythonImportFinder).

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
3. Early installation through PYTHONUSERBASE: sys.path, site.USER_BASE and
   site.USER_SITE are what a plain run has, the real user site's .pth files
   run (with imports already by name), and site.py's scan of each
   site-packages directory is paused and recorded as the view ste-pth.
4. importlib.metadata: the same answers as without the hook, each scan
   paused and recorded as the view the caller depends on (ste-dists:<name>,
   ste-entry-points:<group> for pluggy's and pytest's plugin loading,
   ste-dists otherwise).

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
USERBASE = os.path.join(os.path.dirname(HOOK_DIR), "ste_userbase")
SUPPORTED = sys.platform.startswith("linux") and (3, 6) <= sys.version_info[:2] <= (3, 13)


def load_hook():
    """The hook module, executed once in this process under another name."""
    spec = importlib.util.spec_from_file_location("ste_names_under_test", os.path.join(HOOK_DIR, "ste_names.py"))
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

    # Without PYTHONUSERBASE (sitecustomize installs the hook, late); the
    # subclass below runs every test again with it (early).
    ENV = {}

    def probe(self, extra_path=(), args=()):
        import json

        with tempfile.TemporaryDirectory() as target:
            write(target + "/probe_target.py")
            write(target + "/other.py")
            pythonpath = os.pathsep.join([HOOK_DIR] + list(extra_path) + [target])
            env = dict(self.ENV)
            env["PYTHONPATH"] = pythonpath
            run = run_python(self.PROBE, env, args)
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
            env = dict(self.ENV)
            env["PYTHONPATH"] = HOOK_DIR
            run = run_python(
                "import sys; print(sorted({type(f).__name__ for f in sys.path_importer_cache.values() if f}))",
                env,
                args,
            )
            self.assertNotIn("ByNameFileFinder", run.stdout, args)


class EarlyInstallationTest(InstallationTest):
    """Every installation test again, with the hook installed by
    ste_userbase's .pth (PYTHONUSERBASE, as ste record sets it)."""

    ENV = {"PYTHONUSERBASE": USERBASE, "STE_PYTHONUSERBASE": ""}


# A module the fake user site's first .pth imports: it wraps os.listdir
# and os.stat first thing, and logs in sys.ste_journal, in order, the
# listings and the stats of control and view paths ("\x01" in them) the
# process makes from then on (site.py's scans of the later site-packages
# directories included).
JOURNAL_MODULE = """import os, sys
journal = sys.__dict__.setdefault("ste_journal", [])
real_listdir, real_stat = os.listdir, os.stat
def listdir(path="."):
    journal.append(("list", str(path)))
    return real_listdir(path)
def stat(path, *args, **kwargs):
    if "\\x01" in str(path):
        journal.append(("stat", str(path)))
    return real_stat(path, *args, **kwargs)
os.listdir, os.stat = listdir, stat
"""


def journal_env(real_base, extra_pythonpath=()):
    return {
        "PYTHONUSERBASE": USERBASE,
        "STE_PYTHONUSERBASE": real_base,
        "PYTHONPATH": os.pathsep.join([HOOK_DIR] + list(extra_pythonpath)),
        "STE_PYTHON_VIEWS": "1",
    }


def user_site(base):
    return os.path.join(base, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")


@unittest.skipUnless(SUPPORTED, "the hook installs only on CPython 3.6-3.13 on Linux")
class EarlyScanTest(unittest.TestCase):
    STATE = (
        "import sys, site, json, importlib.machinery as m\n"
        "us = site.USER_SITE\n"
        "print(json.dumps({'path': sys.path, 'base': site.USER_BASE, 'site': us,\n"
        "  'finder_at_pth': getattr(sys, 'finder_at_pth', None),\n"
        "  'journal': getattr(sys, 'ste_journal', [])}))\n"
    )

    def run_state(self, env):
        import json

        run = run_python(self.STATE, env)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stderr, "")
        return json.loads(run.stdout)

    def test_sys_path_and_user_site_are_a_plain_runs(self):
        with tempfile.TemporaryDirectory() as base:
            site_dir = user_site(base)
            write(site_dir + "/extra.pth", os.path.join(base, "added") + "\n")
            os.makedirs(os.path.join(base, "added"))
            write(site_dir + "/zz_probe.pth", "import sys, os; sys.finder_at_pth = type(sys.path_importer_cache.get(os.path.dirname(os.__file__))).__name__\n")
            plain = self.run_state({"PYTHONUSERBASE": base})
            ours = self.run_state(journal_env(base))
            self.assertIn(site_dir, plain["path"])
            self.assertIn(os.path.join(base, "added"), plain["path"])
            self.assertEqual(ours["path"], plain["path"])
            self.assertEqual(ours["base"], plain["base"])
            self.assertEqual(ours["site"], plain["site"])

    def test_no_real_user_site_is_fine_too(self):
        with tempfile.TemporaryDirectory() as base:
            plain = self.run_state({"PYTHONUSERBASE": base})
            ours = self.run_state(journal_env(base))
            self.assertEqual(ours["path"], plain["path"])
            self.assertEqual(ours["site"], plain["site"])

    def test_pth_files_of_the_real_user_site_import_by_name(self):
        with tempfile.TemporaryDirectory() as base:
            site_dir = user_site(base)
            write(site_dir + "/probe_mod.py", "import sys\nsys.finder_at_pth = type(sys.path_importer_cache[__file__.rsplit('/', 1)[0]]).__name__\n")
            write(site_dir + "/probe.pth", "import probe_mod\n")
            got = self.run_state(journal_env(base))
            self.assertEqual(got["finder_at_pth"], "ByNameFileFinder")

    def test_each_site_packages_scan_is_paused_and_recorded_as_a_view(self):
        with tempfile.TemporaryDirectory() as base:
            site_dir = user_site(base)
            write(site_dir + "/ste_journal_probe.py", JOURNAL_MODULE)
            write(site_dir + "/00_journal.pth", "import ste_journal_probe\n")
            got = self.run_state(journal_env(base))
            journal = [tuple(e) for e in got["journal"]]
            import site

            # The directories site.py scans after the user site: the real
            # user site's scan ran before its first .pth (the journal) was
            # there; every later one must be paused and viewed.
            later = [d for d in site.getsitepackages() if os.path.isdir(d)]
            self.assertTrue(later, "no site-packages directory to check")
            for d in later:
                i = journal.index(("list", d))
                self.assertEqual(journal[i - 1], ("stat", "/\x01ste/pause-listings"), journal)
                self.assertEqual(journal[i + 1], ("stat", "/\x01ste/resume-listings"), journal)
                self.assertEqual(journal[i + 2], ("stat", os.path.join(d, "\x01ste-pth")), journal)


@unittest.skipUnless(SUPPORTED, "the hook installs only on CPython 3.6-3.13 on Linux")
class MetadataViewTest(unittest.TestCase):
    """importlib.metadata answers as without the hook; each scan of a
    directory is paused and recorded as the view its caller depends on."""

    # Run in a fresh interpreter; prints the answers and the journal of
    # listings and view stats made by the calls.
    PROBE = (
        "import sys, os, json\n"
        "j = []\n"
        "rl, rs = os.listdir, os.stat\n"
        "def ld(p='.'):\n j.append(('list', str(p))); return rl(p)\n"
        "def st(p, *a, **k):\n"
        " if '\\x01' in str(p): j.append(('stat', str(p)))\n"
        " return rs(p, *a, **k)\n"
        "os.listdir, os.stat = ld, st\n"
        "import importlib.metadata as md\n"
        "out = {}\n"
        "def step(name, f):\n"
        "  del j[:]\n"
        "  try: value = f()\n"
        "  except Exception as e: value = 'raised ' + type(e).__name__\n"
        "  out[name] = {'value': value, 'journal': list(j)}\n"
        "step('version', lambda: md.version('Foo.Bar'))\n"
        "step('names', lambda: sorted(d.metadata['Name'] for d in md.distributions(path=[sys.argv[1]])))\n"
        "step('eps', lambda: sorted(e.name for e in md.entry_points().select(group='myplugins')))\n"
        "import pluggy\n"
        "class Spec: pass\n"
        "pm = pluggy.PluginManager('probe')\n"
        "step('pluggy', lambda: pm.load_setuptools_entrypoints('myplugins'))\n"
        "import types, _pytest.config as pc\n"
        "marked = []\n"
        "fake = types.SimpleNamespace(pluginmanager=types.SimpleNamespace())\n"
        "hook = types.SimpleNamespace(mark_rewrite=marked.append)\n"
        "step('pytest', lambda: pc.Config._mark_plugins_for_rewrite(fake, hook) or sorted(marked))\n"
        "print(json.dumps(out))\n"
    )

    def layout(self, root):
        write(root + "/Foo.Bar-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: Foo.Bar\nVersion: 1.0\n")
        write(root + "/foo_bar_plugin.py", "")
        write(root + "/plug-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: plug\nVersion: 2.0\n")
        write(root + "/plug-2.0.dist-info/entry_points.txt", "[myplugins]\nplug = foo_bar_plugin\n[pytest11]\nplug = foo_bar_plugin\n")
        write(root + "/plug-2.0.dist-info/RECORD", "foo_bar_plugin.py,,\n")
        write(root + "/notes.txt", "")

    def run_probe(self, root, env):
        import json

        environ = dict(env)
        environ["PYTHONPATH"] = os.pathsep.join([p for p in (environ.get("PYTHONPATH"), root) if p])
        run = subprocess.run(
            [sys.executable, "-c", self.PROBE, root], env=dict(os.environ, **environ),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=self.cwd,
        )
        self.assertEqual(run.returncode, 0, run.stderr)
        return json.loads(run.stdout)

    def test_without_an_ste_that_understands_views_nothing_is_paused(self):
        try:
            import pluggy  # noqa: F401
            import _pytest.config  # noqa: F401
        except ImportError:
            self.skipTest("needs Debian's python3-pytest (pluggy, _pytest)")
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as cwd:
            self.cwd = cwd
            self.layout(root)
            with tempfile.TemporaryDirectory() as base:
                env = journal_env(base)
                del env["STE_PYTHON_VIEWS"]
                ours = self.run_probe(root, env)
            for step, got in ours.items():
                self.assertNotIn(["stat", "/\x01ste/pause-listings"], got["journal"], step)

    def test_answers_are_the_same_and_each_scan_is_a_view(self):
        try:
            import pluggy  # noqa: F401
            import _pytest.config  # noqa: F401
        except ImportError:
            self.skipTest("needs Debian's python3-pytest (pluggy, _pytest)")
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as cwd:
            self.cwd = cwd
            self.layout(root)
            plain = self.run_probe(root, {})
            with tempfile.TemporaryDirectory() as base:
                ours = self.run_probe(root, journal_env(base))
            for step in plain:
                self.assertEqual(ours[step]["value"], plain[step]["value"], step)
            self.assertEqual(plain["version"]["value"], "1.0")
            self.assertEqual(plain["pluggy"]["value"], 1)
            self.assertIn("foo_bar_plugin", plain["pytest"]["value"])
            expected_view = {
                "version": "ste-dists:foo_bar",
                "names": "ste-dists",
                "eps": "ste-dists",
                "pluggy": "ste-entry-points:myplugins",
                "pytest": "ste-entry-points:pytest11",
            }
            for step, view in expected_view.items():
                journal = [tuple(e) for e in ours[step]["journal"]]
                views = [p for kind, p in journal if kind == "stat" and "\x01ste-" in p]
                self.assertIn(os.path.join(root, "\x01" + view), views, (step, journal))
                self.assertEqual({p.rsplit("\x01", 1)[1] for p in views}, {view}, (step, journal))
                # Every listing of a directory the step made was paused (a
                # sys.path entry that is no directory fails to list: an
                # absent, recorded as such).
                depth = 0
                for kind, p in journal:
                    if p == "/\x01ste/pause-listings":
                        depth += 1
                    elif p == "/\x01ste/resume-listings":
                        depth -= 1
                    elif kind == "list" and os.path.isdir(p):
                        self.assertGreater(depth, 0, (step, p, journal))


if __name__ == "__main__":
    unittest.main()
