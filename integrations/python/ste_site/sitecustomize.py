"""ste's sitecustomize: the late half of ste's Python startup hook.

`ste record` puts this folder first on PYTHONPATH of every test it runs
(runner.python_imports = "names", the default), so every Python process of
a test imports this module at startup (site.py imports `sitecustomize`).
The hook itself is ste_names.py beside it (read its top); this file only
calls its late() (through ste_boot.py, which loads ste's modules from the
bytecode the build compiled): install the hook if ste_userbase's .pth did not already
(the user site is disabled), take this folder off sys.path (a plain run
does not have it there), and run the `sitecustomize` that would have been
imported without ste (the next one on sys.path, e.g. Debian's
/usr/lib/python3.X/sitecustomize.py) under that name, as site.py would
have.

This folder holds nothing else that can be imported (see the file named
__pycache__ beside: no bytecode is cached here, so what ste records of this
folder never changes). The syntax is Python 2's too, so that a Python 2
finding this file does nothing (and loses its own sitecustomize, if it has
one).
"""

import sys

if sys.version_info >= (3, 5):
    import ste_boot

    ste_boot.late()
