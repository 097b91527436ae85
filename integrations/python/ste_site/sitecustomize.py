"""ste's Python startup hook: imports looked up by name, not by listing.

`ste record` puts this folder first on PYTHONPATH of every test it runs
(runner.python_imports = "names", the default), so every Python process of
a test -- the runner, and any Python the test starts -- imports this module
at startup (site.py imports `sitecustomize`). This folder holds nothing else
that can be imported (see the file named __pycache__ beside: no bytecode is
cached here, so what ste records of this folder never changes).

The problem it solves: CPython's path-entry finder for directories
(importlib.machinery.FileFinder) lists each sys.path directory once
(os.listdir) and answers every lookup from that listing. Under ste a listing
is a dependency on *every* entry of the directory, so adding any file to the
repository root, src/ or tests/ would select every test.

What it does, once, at startup:

1. Replaces CPython's FileFinder path hook in sys.path_hooks, at the same
   position, by one making a ByNameFileFinder, and drops the FileFinders
   already cached in sys.path_importer_cache (they are made again, by name).
   ByNameFileFinder resolves exactly as FileFinder.find_spec (CPython
   3.6-3.13, the same code in all of them): the package directory
   `name/` with `__init__` + each suffix in the order of the loaders
   (extension modules, source, bytecode), then the module files
   `name` + each suffix, then a namespace portion `name/`; same loaders,
   same specs. It differs only in how it knows a candidate exists: it
   stats it (os.stat, which ste records as `content` when it exists,
   `absent` when it does not) instead of looking for its name in a
   listing. So a new file selects only the tests that looked for its name
   there. It caches nothing, so it is never stale (FileFinder can miss a
   file created in the same mtime tick as its listing until
   importlib.invalidate_caches()).
   What lists stays a listing: pkgutil.iter_modules (pkgutil's FileFinder
   handler, and iter_modules() here, os.listdir the directory), glob,
   os.listdir, importlib.metadata's scan for *.dist-info.
2. Takes this folder off sys.path (a plain run does not have it there).
3. Runs the `sitecustomize` that would have been imported without ste (the
   next one on sys.path, e.g. Debian's /usr/lib/python3.X/sitecustomize.py)
   under the name `sitecustomize`, as site.py would have.

Step 1 is skipped (Python imports are then listings, as without this hook:
coarser, honest) when the interpreter is not CPython 3.6-3.13 on Linux, or
when sys.path_hooks holds no CPython FileFinder hook (something replaced
it); steps 2 and 3 happen on any Python 3. The syntax is Python 2's too, so
that a Python 2 finding this file does nothing (and loses its own
sitecustomize, if it has one).
"""

import sys


def _supported():
    implementation = getattr(sys, "implementation", None)
    return (
        implementation is not None
        and implementation.name == "cpython"
        and sys.platform.startswith("linux")
        and (3, 6) <= sys.version_info[:2] <= (3, 13)
    )


if _supported():
    from importlib import _bootstrap
    from importlib import _bootstrap_external
    from importlib import machinery as _machinery

    def _could_be_an_entry(name):
        """True if `name` could be a directory entry's name: a listing never
        holds "", ".", "..", nor a name with "/" or NUL, and a stat of such a
        name would find something FileFinder would not."""
        return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name

    class ByNameFileFinder(_machinery.FileFinder):
        """A FileFinder that stats each candidate instead of listing the
        directory (see the top of this file)."""

        def find_spec(self, fullname, target=None):
            # FileFinder.find_spec of CPython 3.6-3.13, with "name in the
            # directory's listing and a file/directory" as a stat of it.
            is_namespace = False
            tail_module = fullname.rpartition(".")[2]
            if _could_be_an_entry(tail_module):
                base_path = _bootstrap_external._path_join(self.path, tail_module)
                # One stat when there is no such directory, instead of one
                # per __init__ suffix.
                if _bootstrap_external._path_isdir(base_path):
                    for suffix, loader_class in self._loaders:
                        full_path = _bootstrap_external._path_join(base_path, "__init__" + suffix)
                        if _bootstrap_external._path_isfile(full_path):
                            return self._get_spec(loader_class, fullname, full_path, [base_path], target)
                    is_namespace = True
            for suffix, loader_class in self._loaders:
                try:
                    full_path = _bootstrap_external._path_join(self.path, tail_module + suffix)
                except ValueError:
                    return None
                _bootstrap._verbose_message("trying {}", full_path, verbosity=2)
                if _could_be_an_entry(tail_module + suffix) and _bootstrap_external._path_isfile(full_path):
                    return self._get_spec(loader_class, fullname, full_path, None, target)
            if is_namespace:
                _bootstrap._verbose_message("possible namespace for {}", base_path)
                spec = _bootstrap.ModuleSpec(fullname, None)
                spec.submodule_search_locations = [base_path]
                return spec
            return None

        def invalidate_caches(self):
            """Nothing is cached: every lookup stats anew."""

        def iter_modules(self, prefix=""):
            """The modules here, as pkgutil.iter_modules lists them (it lists
            the directory: an honest listing dependency)."""
            import pkgutil

            return pkgutil._iter_file_finder_modules(self, prefix)

    def _stock_loader_details(hook):
        """The loader details of CPython's FileFinder.path_hook closure, or
        None if `hook` is not one."""
        code = getattr(hook, "__code__", None)
        if code is None or getattr(hook, "__qualname__", "") != "FileFinder.path_hook.<locals>.path_hook_for_FileFinder":
            return None
        cells = dict(zip(code.co_freevars, (c.cell_contents for c in hook.__closure__ or ())))
        if cells.get("cls") is not _machinery.FileFinder or "loader_details" not in cells:
            return None
        return cells["loader_details"]

    def _install():
        """Puts ByNameFileFinder in place of CPython's FileFinder hook, if
        there is one."""
        for i, hook in enumerate(sys.path_hooks):
            loader_details = _stock_loader_details(hook)
            if loader_details is not None:
                break
        else:
            return

        def path_hook_for_FileFinder(path):
            """Path hook for ste's ByNameFileFinder (FileFinder's, by name)."""
            if not _bootstrap_external._path_isdir(path):
                raise ImportError("only directories are supported", path=path)
            return ByNameFileFinder(path, *loader_details)

        sys.path_hooks[i] = path_hook_for_FileFinder
        for entry, finder in list(sys.path_importer_cache.items()):
            if type(finder) is _machinery.FileFinder:
                del sys.path_importer_cache[entry]


    _install()


def _chain():
    """Leaves sys.path as it would be without ste, and runs the
    sitecustomize that would have been imported (any Python 3)."""
    import os
    from importlib import _bootstrap, machinery

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None or spec.origin == __file__:
        return
    module = _bootstrap.module_from_spec(spec)
    sys.modules["sitecustomize"] = module  # what `import sitecustomize` returns
    spec.loader.exec_module(module)


if sys.version_info >= (3, 5):
    _chain()
