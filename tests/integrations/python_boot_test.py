#!/usr/bin/python3
"""ste_boot.py (integrations/python/ste_site/): ste's start-up modules come
from the bytecode the build compiled, beside the interceptor, and only
when it is exactly their source's; nothing is written; the finder is gone
once Python has started.

    python_boot_test.py INTEGRATIONS_DIR PRELOAD_LIBRARY

Real interpreters in a copy of the integrations folder: the user site's
.pth (early) and sitecustomize (late, with -s). Which code ran is told by a
docstring the test changes in the compiled bytecode only.
"""

import marshal
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import unittest

PY = "/usr/bin/python3"
NAMES = ("ste_names", "ste_defs", "ste_parts", "ste_tracers")
PROBE = r"""
import sys
for n in %r:
    m = sys.modules.get(n)
    print(n, (m.__doc__ or "")[:8].replace(" ", "_") if m else "-", type(m.__loader__).__name__ if m else "-")
print("finders", " ".join(type(f).__name__ if not isinstance(f, type) else f.__name__ for f in sys.meta_path))
""" % (NAMES,)


class BootTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ste-boot-")
        self.python = os.path.join(self.tmp, "python")
        shutil.copytree(os.path.join(INTEGRATIONS, "python", "ste_site"), os.path.join(self.python, "ste_site"))
        shutil.copytree(os.path.join(INTEGRATIONS, "python", "ste_userbase"), os.path.join(self.python, "ste_userbase"))
        self.lib = os.path.join(self.tmp, "lib")
        os.makedirs(os.path.join(self.lib, "python", "ste_site"))
        shutil.copy(PRELOAD, os.path.join(self.lib, "libste_preload.so"))
        for name in NAMES:
            self.compile(name)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def pyc(self, name):
        return os.path.join(self.lib, "python", "ste_site", "%s.%s.pyc" % (name, sys.implementation.cache_tag))

    def compile(self, name):
        """The build's checked-hash pyc of `name`, its docstring made
        "FROM PYC" (the header, the source's hash, unchanged)."""
        path = self.pyc(name)
        py_compile.compile(
            os.path.join(self.python, "ste_site", name + ".py"),
            cfile=path,
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )
        with open(path, "rb") as f:
            data = f.read()
        code = marshal.loads(data[16:])
        consts = list(code.co_consts)
        self.assertIsInstance(consts[0], str, name)  # the module docstring
        consts[0] = "FROM PYC " + name
        with open(path, "wb") as f:
            f.write(data[:16] + marshal.dumps(code.replace(co_consts=tuple(consts))))

    def run_python(self, *flags):
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.path.join(self.python, "ste_site"),
            "PYTHONUSERBASE": os.path.join(self.python, "ste_userbase"),
            "LD_PRELOAD": os.path.join(self.lib, "libste_preload.so"),
            "STE_DEFINITIONS": self.tmp,  # the tracker too: ste_defs, ste_parts, ste_tracers
        }
        done = subprocess.run([PY] + list(flags) + ["-c", PROBE], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
        return lines

    def listing(self):
        out = []
        for top in (os.path.join(self.python, "ste_site"), os.path.join(self.lib, "python")):
            for d, dirs, files in os.walk(top):
                out += [os.path.join(d, x) for x in dirs + files]
        return sorted(out)

    def test_early_and_late_load_the_compiled_modules(self):
        before = self.listing()
        for flags in ((), ("-s",)):  # the .pth (early), sitecustomize (late)
            lines = self.run_python(*flags)
            for name in NAMES:
                self.assertEqual(lines[name], "FROM_PYC Loader", (flags, name, lines))
            self.assertNotIn("Finder", lines["finders"].split(), lines["finders"])
        self.assertEqual(self.listing(), before, "nothing written")

    def test_bytecode_of_other_bytes_is_not_used(self):
        # The source changed after the build: its hash differs.
        with open(os.path.join(self.python, "ste_site", "ste_parts.py"), "a") as f:
            f.write("\n# edited\n")
        # Another interpreter's magic number.
        path = self.pyc("ste_tracers")
        with open(path, "rb") as f:
            data = bytearray(f.read())
        data[0] ^= 0xFF
        with open(path, "wb") as f:
            f.write(bytes(data))
        # Not a pyc at all.
        with open(self.pyc("ste_defs"), "wb") as f:
            f.write(b"\x00" * 7)
        lines = self.run_python()
        self.assertEqual(lines["ste_names"], "FROM_PYC Loader")
        for name in ("ste_parts", "ste_tracers", "ste_defs"):
            self.assertNotIn("FROM_PYC", lines[name], name)
            self.assertTrue(lines[name].endswith(" Loader"), lines[name])

    def test_without_the_bytecode_the_source_is_compiled(self):
        shutil.rmtree(os.path.join(self.lib, "python"))
        before = self.listing()
        lines = self.run_python()
        for name in NAMES:
            self.assertNotIn("FROM_PYC", lines[name], name)
            self.assertTrue(lines[name].endswith("SourceFileLoader") or lines[name].endswith(" -"), lines[name])
        self.assertEqual(self.listing(), before, "nothing written")


if __name__ == "__main__":
    INTEGRATIONS, PRELOAD = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
