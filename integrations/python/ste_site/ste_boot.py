"""ste's Python start-up, first step: ste's own modules from bytecode
compiled when ste was built.

ste_userbase's ste_hook.pth and this folder's sitecustomize.py call early()
and late() here, which call ste_names's (read its top). Each Python process
of a test imports ste_names, and with the definition tracker ste_defs,
ste_parts and ste_tracers: compiled from source at every start, ~15 ms of
a tracked process's start-up (this folder caches no bytecode: see the
file named __pycache__ beside). So while early() and late() run, a finder
first in sys.meta_path answers those names (nothing else) from the
bytecode the build compiled: python/ste_site/<name>.<cache tag>.pyc beside
the interceptor (LD_PRELOAD names it: build/ in the build tree, lib/ste/
installed), checked-hash pycs (PEP 552). The source is read and hashed as
Python's own loader does for those: bytecode that is not this source's, of
another interpreter or unreadable is not used, the source is compiled as
before, and nothing is ever written. The finder is gone when they return.

Python 2's syntax too (as sitecustomize.py): a Python 2 finding this file
through the .pth does nothing.
"""

import sys

_NAMES = ("ste_names", "ste_defs", "ste_parts", "ste_tracers")


def interceptor_folders():
    """The folders of the interceptors LD_PRELOAD names (build/ in the
    build tree, lib/ste/ installed): what ste compiled for Python is in
    python/ there (this bytecode; ste_tracers.py's _ste_tracer)."""
    import os

    suffix = "/libste_preload.so"
    tokens = os.environ.get("LD_PRELOAD", "").replace(":", " ").split()
    return [t[: -len(suffix)] for t in tokens if t.endswith(suffix)]


def _bytecode_dir():
    """python/ste_site/ beside the interceptor, or None."""
    import os

    for folder in interceptor_folders():
        if os.path.isdir(folder + "/python/ste_site"):
            return folder + "/python/ste_site"
    return None


def _finder():
    """A meta path finder for _NAMES from the build's bytecode, or None."""
    tag = getattr(getattr(sys, "implementation", None), "cache_tag", None)
    bytecode = _bytecode_dir() if tag else None
    if bytecode is None:
        return None
    import os
    import _imp
    from importlib import _bootstrap_external as bx

    here = os.path.dirname(os.path.abspath(__file__))
    # PEP 552: the flags of a pyc whose source's hash is checked.
    checked_hash = b"\x03\x00\x00\x00"

    class Loader(bx.SourceFileLoader):
        def get_code(self, fullname):
            source_path = self.get_filename(fullname)
            source = self.get_data(source_path)
            pyc = os.path.join(bytecode, "%s.%s.pyc" % (fullname, tag))
            try:
                with open(pyc, "rb") as f:
                    data = f.read()
                if (
                    data[:4] == bx.MAGIC_NUMBER
                    and data[4:8] == checked_hash
                    and data[8:16] == _imp.source_hash(bx._RAW_MAGIC_NUMBER, source)
                ):
                    return bx._compile_bytecode(memoryview(data)[16:], fullname, pyc, source_path)
            except Exception:
                pass  # compiled from source, as without it
            return self.source_to_code(source, source_path)

    class Finder(object):
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if path is not None or name not in _NAMES:
                return None
            source_path = os.path.join(here, name + ".py")
            return bx.spec_from_file_location(name, source_path, loader=Loader(name, source_path))

    return Finder


def _with_bytecode(call):
    finder = None
    try:
        finder = _finder()
    except Exception:
        finder = None
    if finder is not None:
        sys.meta_path.insert(0, finder)
    try:
        call()
    finally:
        if finder is not None:
            try:
                sys.meta_path.remove(finder)
            except ValueError:
                pass


def early(known_paths=None):
    """ste_hook.pth: ste_names.early()."""

    def call():
        import ste_names

        ste_names.early(known_paths)

    _with_bytecode(call)


def late():
    """sitecustomize.py: ste_names.late()."""

    def call():
        import ste_names

        ste_names.late()

    _with_bytecode(call)
