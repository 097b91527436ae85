"""ste's Python startup hook: what Python looks for, recorded by name.

Under ste every file a process opens, every path it looks up and every
directory it lists is a dependency of the running test. A *listing* is a
dependency on every entry of the directory, and CPython lists a lot:

- its path-entry finder (importlib.machinery.FileFinder) lists each
  sys.path directory once and answers every import from that listing;
- site.py lists each site-packages directory for its *.pth files;
- importlib.metadata lists each sys.path directory for *.dist-info (pytest
  and pluggy enumerate every installed distribution to load plugins).

So a note file dropped at the repository root, or any package installed on
the machine, would select every test. This module makes each of these
record what Python actually looked at:

1. Imports: CPython's FileFinder path hook is replaced, at the same place in
   sys.path_hooks, by one making ByNameFileFinder, which resolves exactly as
   FileFinder.find_spec (CPython 3.6-3.13, the same code in all of them) but
   stats each candidate (`name/__init__.py`, `name.py`, `name.*.so`, ...)
   instead of looking it up in a listing: ste records each stat as content
   (it exists) or absent (it does not), so a new file selects only the
   tests that looked for its name there. It caches nothing, so it is never
   stale.
2. site.py's *.pth scan of the site-packages directories: listed with the
   interceptor's listing recording paused, recorded as the view `ste-pth`
   of the directory (its names ending in .pth).
3. importlib.metadata's directory scan (FastPath.search): listed paused,
   recorded as a view: `ste-dists:<name>` for a lookup by name
   (`version("x")`), `ste-entry-points:<group>` when the enumeration is
   pluggy's or pytest's plugin loading for that entry-point group, and
   `ste-dists` (every *.dist-info / *.egg-info name) for any other
   enumeration.

A *view* is recorded as a stat of `<dir>/\\x01<view>` (never an existing
path: the interceptor records it as absent, and ste turns it into a
dependency on that view of the directory, computed by ste's inventory; see
docs/concepts.md). The pause is a stat of the control paths of
interceptor/include/ste/control.h. Outside ste both are failing stats.

What still lists stays an honest listing dependency: pkgutil.iter_modules,
os.listdir, os.scandir, glob, importlib.resources, the `importlib_metadata`
backport. What happens before this module runs is CPython's own: the
imports of the interpreter's start (encodings, from the standard library)
list the PYTHONPATH directories they pass; those listings are recorded.

How it gets in early: ste sets PYTHONUSERBASE to integrations/python/
ste_userbase, whose site-packages holds only `ste_hook.pth`; site.py
processes the user site first, so that .pth runs `early()` before any
other site-packages directory is scanned or any .pth file of the machine
runs. early() then adds the real user site (PYTHONUSERBASE as it was, in
$STE_PYTHONUSERBASE, else ~/.local) where site.py would have, and sets
site.USER_BASE / site.USER_SITE back. When the user site is disabled (-s,
PYTHONNOUSERSITE, a venv without system site packages, setuid), the .pth
does not run and sitecustomize (ste_site/, first on PYTHONPATH) calls
`late()`, which installs 1 and 3 after site.py has listed (coarser, honest).

4. Environment variables: os.environ is a copy made at start-up, so the
   interceptor's getenv hook never sees what Python code reads. Every read
   through os.environ or os.environb (`[]`, get, os.getenv, `in`, pop,
   setdefault, and so iterating items or values) is recorded as a stat of
   "/\x01ste-env:<name>" ('%' written %25, '/' %2F), which ste turns into a
   dependency on the variable's value (indexer's ste/environment.h). Not a
   read: os.environ.copy() (how an environment is handed to a child, whose
   own reads are recorded), a write, and STE_* (ste's own). Reads made
   before this hook ran (site.py's) are not seen. Any CPython 3.
5. pytest's read of a pyproject.toml (its configuration discovery, for the
   [tool.pytest.ini_options] table): recorded as the view ste-pytest-ini
   of the file; any other opening of a pyproject.toml by the process's
   Python code after it leaves the mark "<file>/\x01ste-file-read" (the
   file then counts whole). Installed with 3, when pytest's
   _pytest.config.findpaths loads.

Steps 1, 3 and 5 are skipped (Python then lists, as without this hook) when the
interpreter is not CPython 3.6-3.13 on Linux, or when sys.path_hooks holds
no CPython FileFinder hook (something replaced it).
"""

import os
import sys

# The interceptor's control paths (interceptor/include/ste/control.h).
_PAUSE_LISTINGS = "/\x01ste/pause-listings"
_RESUME_LISTINGS = "/\x01ste/resume-listings"

installed = False
_early_done = False


def _supported():
    implementation = getattr(sys, "implementation", None)
    return (
        implementation is not None
        and implementation.name == "cpython"
        and sys.platform.startswith("linux")
        and (3, 6) <= sys.version_info[:2] <= (3, 13)
    )


def _stat_quietly(path):
    try:
        os.stat(path)
    except (OSError, ValueError):
        pass


def record_view(directory, view):
    """Records a dependency on `view` of `directory` (see the top)."""
    _stat_quietly(os.path.join(directory, "\x01" + view))


# The ste that runs this process turns views into dependencies (it says so
# with STE_PYTHON_VIEWS=1): only then may a listing be paused, since the
# view recorded instead is all that is left of it. An ste that does not
# (an older binary with these integrations) keeps every listing.
_VIEWS_UNDERSTOOD = os.environ.get("STE_PYTHON_VIEWS") == "1"


class _ListingsPaused(object):
    """`with _ListingsPaused():` this thread's listings are not recorded
    (when the running ste understands views; else they are, as before)."""

    def __enter__(self):
        if _VIEWS_UNDERSTOOD:
            _stat_quietly(_PAUSE_LISTINGS)
        return self

    def __exit__(self, *exc):
        if _VIEWS_UNDERSTOOD:
            _stat_quietly(_RESUME_LISTINGS)
        return False


# ---- 1. imports by name ------------------------------------------------------

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

    def _install_finder():
        """Puts ByNameFileFinder in place of CPython's FileFinder hook; False
        if there is none."""
        for i, hook in enumerate(sys.path_hooks):
            loader_details = _stock_loader_details(hook)
            if loader_details is not None:
                break
        else:
            return False

        def path_hook_for_FileFinder(path):
            """Path hook for ste's ByNameFileFinder (FileFinder's, by name)."""
            if not _bootstrap_external._path_isdir(path):
                raise ImportError("only directories are supported", path=path)
            return ByNameFileFinder(path, *loader_details)

        sys.path_hooks[i] = path_hook_for_FileFinder
        for entry, finder in list(sys.path_importer_cache.items()):
            if type(finder) is _machinery.FileFinder:
                del sys.path_importer_cache[entry]
        return True


# ---- 3. importlib.metadata's scans as views -----------------------------------
#
# The code is in ste_metadata.py, imported only by a process that imports
# importlib.metadata (no bytecode is cached in this folder: every start
# compiles what it imports).


def _patch_metadata(module):
    # By its path: this folder is off sys.path by then (late()).
    from importlib import machinery

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ste_metadata.py")
    loader = machinery.SourceFileLoader("ste_metadata", path)
    code = loader.get_code("ste_metadata")
    namespace = {"__name__": "ste_metadata", "__file__": path}
    exec(code, namespace)
    namespace["patch"](module, record_view, _ListingsPaused)


class _PatchAfterImport(object):
    """A meta-path finder that, for the modules in `patches`, lets the other
    finders find them and runs the patch right after the module executed."""

    def __init__(self, patches):
        self.patches = patches
        self.busy = set()

    def find_spec(self, fullname, path=None, target=None):
        patch = self.patches.get(fullname)
        if patch is None or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self.busy.discard(fullname)
        loader = spec.loader
        execute = getattr(loader, "exec_module", None)
        if execute is None:
            return spec

        def exec_module(module):
            execute(module)
            try:
                patch(module)
            except Exception:
                pass  # the module stays as it was: its scans are listings

        try:
            loader.exec_module = exec_module  # this module's own loader
        except (AttributeError, TypeError):
            pass
        return spec

    def invalidate_caches(self):
        pass


def _install_patches_after_import():
    patches = {"importlib.metadata": _patch_metadata, "_pytest.config.findpaths": _patch_pytest_config}
    for name, patch in patches.items():
        already = sys.modules.get(name)
        if already is not None:
            patch(already)
    sys.meta_path.insert(0, _PatchAfterImport(patches))


# ---- 5. pytest's read of pyproject.toml as a view --------------------------------
#
# pytest's configuration discovery reads each pyproject.toml it finds for
# its [tool.pytest.ini_options] table (_pytest/config/findpaths.py,
# load_config_dict_from_file): every test would depend on the whole file,
# and a version or a dependency bumped there would select them all. Around
# that read the view ste-pytest-ini of the file is recorded (ste computes
# it: the [tool.pytest] table, or whether the file parses), and from then
# on any other opening of a file named pyproject.toml by this process's
# Python code (open, io.open, os.open, pathlib's) stats "<file>/\x01ste-
# file-read": ste drops the process's `content` record of the file only
# without that mark (docs/concepts.md, "Views"). Not seen: a read before
# pytest's (a .pth hook), by C code, or through os.stat's size or times.

_PYPROJECT = "pyproject.toml"
_FILE_READ = "\x01ste-file-read"
_pytest_reading = [None]  # the thread in pytest's read, while it reads


def _patch_pytest_config(module):
    original = getattr(module, "load_config_dict_from_file", None)
    if original is None or getattr(original, "_ste_view", False) or not _VIEWS_UNDERSTOOD:
        return

    def load_config_dict_from_file(filepath):
        try:
            path = os.path.abspath(os.fspath(filepath))
        except (TypeError, ValueError):
            return original(filepath)
        if os.path.basename(path) != _PYPROJECT:
            return original(filepath)
        _note_other_reads()
        record_view(path, "ste-pytest-ini")
        import _thread

        before = _pytest_reading[0]
        _pytest_reading[0] = _thread.get_ident()
        try:
            return original(filepath)
        finally:
            _pytest_reading[0] = before

    load_config_dict_from_file._ste_view = True
    load_config_dict_from_file.__doc__ = original.__doc__
    load_config_dict_from_file.__wrapped__ = original
    module.load_config_dict_from_file = load_config_dict_from_file


def _note_read(file):
    """Stats "<file>/\x01ste-file-read" when `file` names a pyproject.toml
    and this is not pytest's own read of it."""
    if type(file) is int:
        return
    try:
        name = os.fspath(file)
        if type(name) is bytes:
            name = os.fsdecode(name)
        if not name.endswith(_PYPROJECT) or os.path.basename(name) != _PYPROJECT:
            return
        if _pytest_reading[0] is not None:
            import _thread

            if _pytest_reading[0] == _thread.get_ident():
                return
        _stat_quietly(os.path.join(os.path.abspath(name), _FILE_READ))
    except Exception:
        pass


_reads_noted = [False]


def _note_other_reads():
    """Wraps open, io.open and os.open (once) to note the openings of a
    pyproject.toml (_note_read)."""
    if _reads_noted[0]:
        return
    _reads_noted[0] = True
    import builtins
    import io

    def noting(original):
        def wrapper(file, *args, **kwargs):
            _note_read(file)
            return original(file, *args, **kwargs)

        wrapper.__doc__ = original.__doc__
        wrapper.__name__ = original.__name__
        wrapper.__wrapped__ = original
        return wrapper

    # (builtins.open may be another wrapper already: the definition
    # tracker's. Each is wrapped as it is.)
    builtins.open = noting(builtins.open)
    io.open = noting(io.open)
    os.open = same_os_support(os.open, noting(os.open))


def same_os_support(original, wrapper):
    """`wrapper`, put in each of os.supports_dir_fd, supports_fd,
    supports_follow_symlinks and supports_effective_ids that holds
    `original`: code asks those sets about os's functions (`os.open in
    os.supports_dir_fd`: shutil.rmtree's protection from symlink attacks,
    os.fwalk), and a wrapper missing from them would change its answer."""
    for name in ("supports_dir_fd", "supports_fd", "supports_follow_symlinks", "supports_effective_ids"):
        supported = getattr(os, name, None)
        if isinstance(supported, set) and original in supported:
            supported.add(wrapper)
    return wrapper


# ---- 2. site.py's *.pth scan as a view -----------------------------------------


def _pth_scan_as_view(addsitedir):
    """site.addsitedir, with its listing of the directory (the first
    os.listdir it makes, before any .pth file runs) paused and recorded as
    the view ste-pth."""

    def addsitedir_by_pth(sitedir, known_paths=None):
        real = os.listdir
        armed = [True]

        def listdir(path="."):
            if not armed[0]:
                return real(path)
            armed[0] = False
            os.listdir = real
            with _ListingsPaused():
                names = real(path)
            if isinstance(path, str):
                record_view(path, "ste-pth")
            return names

        os.listdir = listdir
        try:
            return addsitedir(sitedir, known_paths)
        finally:
            if os.listdir is listdir:
                os.listdir = real

    addsitedir_by_pth._ste_original = addsitedir
    addsitedir_by_pth.__doc__ = addsitedir.__doc__
    return addsitedir_by_pth


_ENV_PREFIX = b"/\x01ste-env:"
_env_seen = set()  # names recorded in the current scope (scope_changed empties it)


def scope_changed():
    """Called by ste_protocol.py on a scope push or pop: a variable read
    again is recorded again, in the new scope."""
    _env_seen.clear()


def _note_env(key):
    name = key if isinstance(key, bytes) else os.fsencode(key) if isinstance(key, str) else None
    if not name or name in _env_seen or name.startswith(b"STE_") or b"=" in name:
        return
    _env_seen.add(name)
    _stat_quietly(_ENV_PREFIX + name.replace(b"%", b"%25").replace(b"/", b"%2F"))


def _install_env_reads():
    """Step 4 (see the top): os._Environ's reads recorded, copy() not."""
    environ_type = type(os.environ)
    if getattr(environ_type, "_ste_env_reads", False):
        return
    import _thread

    getitem, copy = environ_type.__getitem__, environ_type.copy
    copying = set()  # threads inside copy()

    def __getitem__(self, key):
        if _thread.get_ident() not in copying:
            try:
                _note_env(key)
            except Exception:
                pass
        return getitem(self, key)

    def environ_copy(self):
        ident = _thread.get_ident()
        if ident in copying:
            return copy(self)
        copying.add(ident)
        try:
            return copy(self)
        finally:
            copying.discard(ident)

    environ_type.__getitem__ = __getitem__
    environ_type.copy = environ_copy
    environ_type._ste_env_reads = True


def _user_site(base):
    return os.path.join(base, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")


def _install():
    global installed
    if installed:
        return
    installed = True
    try:
        _install_env_reads()
    except Exception:
        pass  # Python's reads of the environment are not recorded
    if os.environ.get("STE_DEFINITIONS"):
        try:
            import ste_defs

            ste_defs.start()
        except Exception:
            pass  # not tracked: no `end` marker, file level
    if _supported() and _install_finder():
        _install_patches_after_import()


def early(known_paths=None):
    """Run by ste_userbase's ste_hook.pth, while site.py adds the user site:
    installs the hook, makes site.py scan the other site-packages
    directories by *.pth, and puts the real user site in ours' place."""
    global _early_done
    if _early_done:
        return
    _early_done = True
    try:
        import site

        _install()
        ours = _user_site(os.environ.get("PYTHONUSERBASE", ""))
        real_base = os.environ.get("STE_PYTHONUSERBASE") or os.path.expanduser(os.path.join("~", ".local"))
        real_site = _user_site(real_base)
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != os.path.abspath(ours)]
        site.USER_BASE = real_base
        site.USER_SITE = real_site
        if not getattr(site.addsitedir, "_ste_original", None):
            site.addsitedir = _pth_scan_as_view(site.addsitedir)
        same = os.path.abspath(real_site) == os.path.abspath(ours)
        if getattr(site, "ENABLE_USER_SITE", False) and not same and os.path.isdir(real_site):
            site.addsitedir(real_site, known_paths)
    except Exception:
        pass  # whatever failed stays as CPython does it: listings


def late():
    """Run by ste_site's sitecustomize: installs the hook if early() did not
    run (the user site is disabled), takes ste's folders off sys.path, and
    runs the sitecustomize that would have been imported without ste."""
    _install()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    from importlib import _bootstrap, machinery

    spec = machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None or spec.origin == os.path.join(here, "sitecustomize.py"):
        return
    module = _bootstrap.module_from_spec(spec)
    sys.modules["sitecustomize"] = module  # what `import sitecustomize` returns
    spec.loader.exec_module(module)
