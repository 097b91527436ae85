"""Prints what integrations/python/ste_protocol.py makes of test case names.

    python3 print_case_scope_names.py [--push] NAMES_FILE

NAMES_FILE holds one name per line, in hex (an empty line: the empty name).
Prints, per name, the hex of case_scope_name(name) (the name given as the
str a runner has: its bytes decoded as UTF-8, undecodable ones escaped as
the os module does). With --push it also enters that scope and leaves it
again (under `ste run`) and prints "\tok" or "\t<the error>" after it.
Read by case_scope_name_test.cc.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integrations", "python"))

import ste_protocol  # noqa: E402


def main(argv):
    push = "--push" in argv
    scopes = ste_protocol.SteScopes() if push else None
    if push and not scopes.available:
        sys.exit("not under ste: ste_scope_push is absent")
    with open(argv[-1]) as f:
        names = [bytes.fromhex(line.strip()) for line in f.read().split("\n")[:-1]]
    for name in names:
        scope = ste_protocol.case_scope_name(name.decode("utf-8", "surrogateescape"))
        line = scope.hex()
        if push:
            error = scopes.push(scope)
            if error is None:
                scopes.pop()
            line += "\t" + (error or "ok")
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
