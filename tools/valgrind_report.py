#!/usr/bin/env python3
"""Reads a valgrind memcheck log and fails on any error or definite/indirect
leak record with a frame in utf8pfx's C code (csrc/: its file names, or the
_core shared object).  CPython's own reports (uninitialised small-int reads
in longobject.c, interpreter allocations still held at exit, tracemalloc's
own tables) are counted but do not fail: they are not ours to fix.

    python tools/valgrind_report.py LOG
"""
import re
import sys

OURS = re.compile(r"\((?:writer|reader|module|encode|scalar|scalar_inl|x86_\w+|decode_\w+|"
                  r"dispatch|arm_neon|simd_tables|prefix|kernels)\.[ch]:\d+\)|/_core\.")


def records(text):
    rec = []
    for line in text.splitlines():
        m = re.match(r"==\d+== ?(.*)$", line)
        if not m:
            continue
        body = m.group(1)
        if body.strip() == "":
            if rec:
                yield rec
            rec = []
        else:
            rec.append(body)
    if rec:
        yield rec


def main(path):
    text = open(path, errors="replace").read()
    ours, theirs = [], 0
    for rec in records(text):
        head = rec[0]
        is_error = bool(re.match(r"(Invalid|Conditional|Use of uninitialised|Syscall param|"
                                 r"Mismatched|Source and destination|Argument)", head))
        is_leak = bool(re.search(r"are (definitely|indirectly) lost", head))
        if not (is_error or is_leak):
            continue
        # tracemalloc's own bookkeeping (its traceback table, kept until the
        # interpreter exits) is allocated from inside whatever allocation it
        # traced, ours included: that block is the interpreter's.
        own = [l for l in rec if OURS.search(l)]
        first_by = next((l for l in rec if l.lstrip().startswith("by ")), "")
        if own and not (is_leak and "_tracemalloc.c" in first_by):
            ours.append(rec)
        else:
            theirs += 1
    summary = [l for l in text.splitlines() if re.search(r"(definitely|indirectly) lost:|"
                                                         r"ERROR SUMMARY", l)]
    print("\n".join(summary))
    print("valgrind: %d report(s) from utf8pfx's C code, %d from the interpreter or libc"
          % (len(ours), theirs))
    for rec in ours:
        print("\n".join("  " + l for l in rec[:25]))
        print()
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
