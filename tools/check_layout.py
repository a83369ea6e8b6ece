"""Checks the layering of csrc/: one-way dependencies, public headers only.

    python tools/check_layout.py [CSRC]

The glue is made of units, one per folder (csrc/core, csrc/writer,
csrc/reader, csrc/arrow, csrc/stream) plus functions.c/.h and module.c at the top;
a unit's .c and .h files count as one.  Ranks, low to high:

    kernels (0) <- core (1) <- writer, reader, functions (2) <- arrow (3) <- stream (4)
    <- module (5)

Rules:
  1. A unit uses a name (a u8p_/U8P_ identifier, or a type like
     WriterObject) owned by another unit only if that unit ranks lower;
     so there is no cycle, and writer and reader do not use each other.
     A name is owned by the unit whose files declare or define it.
  2. Glue includes only the kernels' public headers (the .h files at the
     top of csrc/kernels, never one in a subfolder), and of another glue
     unit only the headers PUBLIC lists for it.
  3. The kernels stay pure C: no Python.h, no glue header, and a public
     kernel header includes no private (subfolder) one.
Prints every violation and exits 1 if there is any.
"""
import os
import re
import sys

RANK = {"kernels": 0, "core": 1, "writer": 2, "reader": 2, "functions": 2, "arrow": 3,
        "stream": 4, "module": 5}
# the headers of each unit that other units may include
PUBLIC = {
    "core": {"core/core.h", "core/encode.h", "core/objlock.h", "core/calllock.h"},
    "writer": {"writer/writer.h"},
    "reader": {"reader/reader.h"},
    "arrow": {"arrow/arrow.h"},
    "stream": {"stream/stream.h"},
    "functions": {"functions.h"},
    "module": set(),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
IDENT = re.compile(r"\b(?:u8p_\w+|U8P_\w+|[A-Z]\w*Object)\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
# what a file declares or defines at file scope: a function (declared or
# defined, not static), a macro, a typedef, an enum constant, an extern
DECL_PATTERNS = [
    re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b((?:u8p|U8P)_\w+)\s*\(", re.M),
    re.compile(r"^\s*#\s*define\s+(\w+)", re.M),
    re.compile(r"\}\s*(\w+)\s*;", re.M),
    re.compile(r"^typedef\b[^;{]*?\b(\w+)\s*;", re.M),
    re.compile(r"^typedef\b[^;{(]*\(\s*\*\s*(\w+)\s*\)", re.M),
    re.compile(r"^extern\b[^;(]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*;", re.M),
    re.compile(r"^\s+(U8P_[A-Z0-9_]+)\s*(?:=|,)", re.M),
]


def unit_of(rel):
    """The unit of a path relative to csrc (None for what is not C)."""
    if not rel.endswith((".c", ".h")):
        return None
    top = rel.split("/", 1)[0]
    if "/" in rel:
        return top if top in RANK else None
    if rel in ("functions.c", "functions.h"):
        return "functions"
    if rel == "module.c":
        return "module"
    return None


def strip(text):
    return STRING.sub('""', COMMENT.sub(" ", text))


def scan(csrc):
    """{rel path: text} of every C file under csrc."""
    files = {}
    for dirpath, _dirs, names in os.walk(csrc):
        for name in names:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, csrc).replace(os.sep, "/")
            if unit_of(rel) is not None:
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[rel] = f.read()
    return files


def check(csrc):
    """A list of violations (strings); empty when the layout holds."""
    files = scan(csrc)
    problems = []
    owner = {}
    for rel, text in sorted(files.items()):
        unit = unit_of(rel)
        body = strip(text)
        for pat in DECL_PATTERNS:
            for m in pat.finditer(body):
                name = m.group(1)
                if name.startswith("UTF8PFX_") or name in ("PY_SSIZE_T_CLEAN",):
                    continue  # include guards
                owner.setdefault(name, set()).add(unit)
    # a name declared by several units belongs to the lowest (a kernel
    # macro a glue file re-tests with #ifdef is still the kernel's)
    owner = {n: min(us, key=lambda u: RANK[u]) for n, us in owner.items()}

    edges = {}
    for rel, text in sorted(files.items()):
        unit = unit_of(rel)
        body = strip(text)
        for name in set(IDENT.findall(body)):
            other = owner.get(name)
            if other is None or other == unit:
                continue
            edges.setdefault((unit, other), set()).add((rel, name))
        for inc in INCLUDE.findall(text):
            problems.extend(check_include(rel, unit, inc, files))
    for (src, dst), uses in sorted(edges.items()):
        if RANK[dst] >= RANK[src]:
            rel, name = sorted(uses)[0]
            problems.append("%s uses %s from %s, which does not rank below it (%s)"
                            % (src, name, dst, rel))
    cycle = find_cycle({k for k in edges})
    if cycle:
        problems.append("dependency cycle: " + " -> ".join(cycle))
    return problems


def check_include(rel, unit, inc, files):
    here = os.path.dirname(rel)
    local = os.path.normpath(os.path.join(here, inc)).replace(os.sep, "/")
    target = local if local in files else inc
    tunit = unit_of(target) if target in files else None
    if unit == "kernels":
        if inc in ("Python.h",) or (tunit is not None and tunit != "kernels"):
            return ["%s (a kernel) includes %s, which is not a kernel header" % (rel, inc)]
        if rel.endswith(".h") and rel.count("/") == 1 and target.startswith("kernels/") and target.count("/") > 1:
            return ["%s is a public kernel header but includes the private %s" % (rel, target)]
        return []
    if tunit == "kernels":
        if "/" in target.split("kernels/", 1)[1]:
            return ["%s includes the private kernel header %s" % (rel, target)]
        return []
    if tunit is None or tunit == unit:
        return []
    if target not in PUBLIC[tunit]:
        return ["%s includes %s, which is private to %s" % (rel, target, tunit)]
    return []


def find_cycle(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
            if state.get(nxt) is None:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if state.get(start) is None:
            found = visit(start, [start])
            if found:
                return found
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    csrc = argv[0] if argv else os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "csrc")
    problems = check(csrc)
    for p in problems:
        print(p)
    if not problems:
        print("csrc layout: one-way dependencies, public headers only")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
