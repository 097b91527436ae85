"""importlib.metadata's directory scans recorded as views (part 3 of ste's
Python startup hook: read the top of ste_names.py). Imported by ste_names
when a process imports importlib.metadata, and patch() run on that module
right after it executed."""

import os
import sys


def _code_objects(function):
    """`function`'s code and the code objects nested in it (generator
    expressions), or () if it is not a Python function."""
    code = getattr(function, "__code__", None)
    if code is None:
        return ()
    nested = [c for c in code.co_consts if type(c) is type(code)]
    return [code] + nested


def _plugin_group(frame):
    """The entry-point group when the first frame above importlib.metadata's
    own is a plugin loader that looks at nothing of the distributions but
    that group's entry points (and files of the distributions that have
    some, which ste records as they are read): pluggy's
    PluginManager.load_setuptools_entrypoints(group), or the generator in
    pytest's Config._mark_plugins_for_rewrite (group "pytest11"). None
    otherwise."""
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("importlib.metadata"):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    manager = getattr(sys.modules.get("pluggy._manager"), "PluginManager", None)
    loader = getattr(manager, "load_setuptools_entrypoints", None)
    if loader is not None and code is getattr(loader, "__code__", None):
        group = frame.f_locals.get("group")
        return group if isinstance(group, str) and group else None
    config = getattr(sys.modules.get("_pytest.config"), "Config", None)
    rewrite = getattr(config, "_mark_plugins_for_rewrite", None)
    if rewrite is not None and code.co_name == "<genexpr>" and _mentions(code, "pytest11"):
        if any(code is c for c in _code_objects(rewrite)):
            return "pytest11"
    return None


def _mentions(code, constant):
    """True if `constant` is among the constants of `code` or of the code
    objects nested in it."""
    for c in code.co_consts:
        if c == constant or (type(c) is type(code) and _mentions(c, constant)):
            return True
    return False


def _metadata_view(prepared, caller):
    """The view of a directory that FastPath.search(prepared) depends on."""
    if prepared:
        normalized = getattr(prepared, "normalized", None)
        if isinstance(normalized, str) and normalized and "/" not in normalized:
            return "ste-dists:" + normalized
        return "ste-dists"
    group = _plugin_group(caller)
    if group is not None and "/" not in group:
        return "ste-entry-points:" + group
    return "ste-dists"


def patch(module, record_view, listings_paused):
    """Makes importlib.metadata's directory scan record a view (see the
    top). Does nothing if FastPath.search is not what it was in CPython
    3.8-3.13."""
    fast_path = getattr(module, "FastPath", None)
    original = getattr(fast_path, "search", None)
    if original is None or getattr(original, "_ste_view", False):
        return

    def search(self, name):
        root = getattr(self, "root", None)
        if isinstance(root, str) and os.path.isdir(root or "."):
            record_view(root or ".", _metadata_view(name, sys._getframe(1)))
            with listings_paused():
                return original(self, name)
        return original(self, name)

    search._ste_view = True
    search.__doc__ = original.__doc__
    fast_path.search = search
