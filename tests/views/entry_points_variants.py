#!/usr/bin/python3
"""Variants of site directories with entry_points.txt files, and what
CPython reads from each: the oracle of ste's ste-entry-points view
(indexer/src/inventory_view_crosscheck_test.cc runs this).

    entry_points_variants.py OUT_DIR SEED COUNT GROUP

Writes OUT_DIR/v<i>/site/ for i < COUNT, in families of ten (a base and
nine variants one or two small edits away): up to three distributions
(a-1.0.dist-info, b-2.0.dist-info, C_pkg.egg-info), each missing, without
an entry_points.txt, with a directory of that name, or with a generated
file (random sections, spacing, comments, "[[x]]", missing "=", CR/LF
mixes, form feeds, a section named like GROUP with spaces, non-ASCII,
indented lines, '%', DEFAULT, duplicates...).
Prints one line per variant:

    <site dir> TAB <clean 0|1> TAB <modern key> TAB <both key>

- modern: the (distribution, name, value) of GROUP's entry points across
  the distributions (sorted by name) as this Python's importlib.metadata
  gives them (Distribution.entry_points: Sectioned, EntryPoints._from_text),
  with (distribution, "raise", type) for one whose entry points raise;
- legacy: the same as CPython 3.8-3.9 read it (a ConfigParser with
  delimiters "=" and optionxform = str, then items() of each section);
- both key: a digest of (modern, legacy); modern key: of modern alone.
- clean: every file was generated from the "clean" grammar (what ste
  reads pair by pair; for those, modern and legacy must agree).

The test checks that equal view hashes mean equal both keys (a change
Python can see is a change of the view) and, for clean variants, that
equal modern keys mean equal view hashes (the view is not just a hash of
the files).
"""
import configparser
import hashlib
import importlib.metadata
import os
import random
import sys

DISTS = ["a-1.0.dist-info", "b-2.0.dist-info", "C_pkg.egg-info"]


def clean_text(rnd, group):
    """A file both parsers read alike: sections named once, names once per
    section, no indented pair, no '%', ASCII, comments and blank lines
    anywhere, any of \\n, \\r\\n, \\r."""
    sections = rnd.sample([group, "console_scripts", "other.group", "gui_scripts"], rnd.randint(0, 3))
    lines = []
    for _ in range(rnd.randint(0, 2)):
        lines.append(rnd.choice(["# header comment", "", "   ", "#[pytest11]"]))
    for section in sections:
        lines.append("[%s]" % section)
        names = rnd.sample(["p1", "p2", "x", "tool"], rnd.randint(0, 3))
        for name in names:
            value = rnd.choice(["mod:obj", "pkg.mod", "a.b:c [extra]"]) if section == group else rnd.choice(["m:f", "n"])
            sp1, sp2 = rnd.choice(["", " ", "  ", "\t"]), rnd.choice(["", " ", "\t"])
            lines.append("%s%s=%s%s%s" % (name, sp1, sp2, value, rnd.choice(["", " ", "\t "])))
            if rnd.random() < 0.2:
                lines.append(rnd.choice(["# between", "", " \t", "    # indented comment"]))
    out = ""
    for line in lines:
        out += line + rnd.choice(["\n", "\n", "\r\n", "\r"])
    if rnd.random() < 0.3:
        out = out.rstrip("\r\n")
    return out.encode("ascii")


NOISE = [
    "[ {g} ]", "[[{g}]]", "[{g}]]", "[[{g}]", "[]", "[DEFAULT]", "[{g}", "[{g}]x = y", "[{g}] ",
    " [{g}]", "  p1 = indented", "\tp2=x", "p3", "= v", "p1 = dup", ";p1 = c", "; comment",
    "#x", "p = 5%", "p = %(x)s", "caf\u00e9 = x", "a\x0cb = c", "\x1fp = q", "p =", "p=q=r",
    "[{g}]", "[console_scripts]", "x = 1", "tool = t:main", "p1 = mod:obj", "  # ok comment",
]


def noisy_text(rnd, group):
    lines = []
    for _ in range(rnd.randint(0, 7)):
        if rnd.random() < 0.6:
            lines.append(rnd.choice(NOISE).format(g=group))
        else:
            lines.append(rnd.choice(["[%s]" % group, "p1 = mod:obj", "p2=pkg.mod", "", "# c"]))
    out = b""
    for line in lines:
        data = line.encode("utf-8")
        if rnd.random() < 0.05:
            data += b"\xff"  # not UTF-8: read_text raises
        out += data + rnd.choice([b"\n", b"\r\n", b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1e", b"\n"])
    return out


def modern(site, group):
    """What pluggy's load_setuptools_entrypoints(group) sees: for dist in
    distributions(): for ep in dist.entry_points: if ep.group == group."""
    out = []
    dists = sorted(importlib.metadata.distributions(path=[site]), key=lambda d: d._path.name)
    for dist in dists:
        try:
            eps = [ep for ep in dist.entry_points if ep.group == group]
        except Exception as e:  # what pluggy would die of
            out.append((dist._path.name, "raise", type(e).__name__))
            continue
        out.extend((dist._path.name, ep.name, ep.value) for ep in eps)
    return out


def legacy(site, group):
    """The same through CPython 3.8's EntryPoint._from_text."""
    out = []
    dists = sorted(importlib.metadata.distributions(path=[site]), key=lambda d: d._path.name)
    for dist in dists:
        try:
            text = dist.read_text("entry_points.txt")
            config = configparser.ConfigParser(delimiters="=")
            config.optionxform = str
            config.read_string(text or "")
            eps = [(name, value) for g in config.sections() for name, value in config.items(g)
                   if g == group]
        except Exception as e:
            out.append((dist._path.name, "raise", type(e).__name__))
            continue
        out.extend((dist._path.name, name, value) for name, value in eps)
    return out


def digest(value):
    return hashlib.sha256(repr(value).encode("utf-8", "surrogateescape")).hexdigest()[:32]


EDITS = ["insert", "indent", "ending", "percent", "header", "duplicate", "unicode", "drop",
         "default", "rebracket"]


def mutate(rnd, text, group):
    """One small edit of a file: most leave what Sectioned reads as it was,
    so that a reader reading it differently would show."""
    lines = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    at = rnd.randrange(len(lines) + 1)
    edit = rnd.choice(EDITS)
    if edit == "insert":
        lines.insert(at, rnd.choice(NOISE).format(g=group).encode("utf-8"))
    elif edit == "indent" and at < len(lines):
        lines[at] = rnd.choice([b" ", b"\t", b"\x1f", b"  "]) + lines[at]
    elif edit == "ending" and at < len(lines):
        lines[at] += rnd.choice([b"\x0c", b"\x0b", b"\x1c", b"\x1d", b"\x1e", b" ", b"\t"])
    elif edit == "percent" and at < len(lines):
        lines[at] += b"%"
    elif edit == "header":
        lines.insert(at, rnd.choice(["[DEFAULT]", "[[{g}]]", "[{g}]]", "[ {g} ]", "[{g}]", "[]"]).format(
            g=group).encode("utf-8"))
    elif edit == "duplicate" and at < len(lines):
        lines.insert(at, lines[at])
    elif edit == "unicode" and at < len(lines):
        lines[at] += rnd.choice([b"\xc3\xa9", b"\xc2\x85", b"\xe2\x80\xa8", b"\xff"])
    elif edit == "drop" and at < len(lines):
        del lines[at]
    elif edit == "default":  # a DEFAULT section 3.8's configparser merges into every section
        lines += [b"[DEFAULT]", rnd.choice([b"p9 = d:e", b"x = 1"])]
    elif edit == "rebracket":  # one section name for Sectioned, another for configparser
        headers = [k for k, line in enumerate(lines) if line.strip().startswith(b"[")]
        if headers:
            k = rnd.choice(headers)
            name = lines[k].strip().strip(b"[]")
            lines[k] = rnd.choice([b"[[%s]]", b"[%s]]", b"[[%s]"]) % name
    return b"\n".join(lines)


def write_variant(site, files):
    os.makedirs(site)
    for dist, content in files.items():
        path = os.path.join(site, dist)
        os.mkdir(path)
        if content is None:
            continue  # no entry_points.txt
        if content == "dir":
            os.mkdir(os.path.join(path, "entry_points.txt"))
            continue
        with open(os.path.join(path, "entry_points.txt"), "wb") as f:
            f.write(content)


def main():
    out_dir, seed, count, group = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rnd = random.Random(seed)
    family = {}
    family_clean = False
    for i in range(count):
        # Families of ten: a base, then variants one or two small edits
        # away from it.
        if i % 10 == 0:
            family, family_clean = {}, rnd.random() < 0.5
            for dist in DISTS:
                kind = rnd.random()
                if kind < 0.15:
                    continue  # no such distribution
                if kind < 0.25:
                    family[dist] = None
                elif kind < 0.3:
                    family[dist] = "dir"
                elif family_clean or rnd.random() < 0.3:
                    family[dist] = clean_text(rnd, group)
                else:
                    family[dist] = noisy_text(rnd, group)
            files, clean = dict(family), family_clean
        else:
            files, clean = dict(family), False
            for _ in range(rnd.randint(1, 2)):
                texts = [d for d, t in files.items() if isinstance(t, bytes)]
                if texts and rnd.random() < 0.9:
                    d = rnd.choice(texts)
                    files[d] = mutate(rnd, files[d], group)
                else:
                    d = rnd.choice(DISTS)
                    files[d] = rnd.choice([None, "dir", clean_text(rnd, group)])
                    if rnd.random() < 0.3:
                        del files[d]
            if rnd.random() < 0.2:  # a clean file that reads like its family's
                files, clean = dict(family), family_clean
                for d, t in files.items():
                    if isinstance(t, bytes) and family_clean:
                        files[d] = t.replace(b"=", b" = ").replace(b"\n", b"\r\n")
        site = os.path.join(out_dir, "v%d" % i, "site")
        write_variant(site, files)
        m, l = modern(site, group), legacy(site, group)
        if clean and m != l:
            sys.exit("clean variant %s read differently by the two parsers: %r vs %r" % (site, m, l))
        print("%s\t%d\t%s\t%s" % (site, clean, digest(m), digest((m, l))))


if __name__ == "__main__":
    main()
