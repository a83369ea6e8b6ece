"""utf8pfx benchmark suites: the writer (str -> blob) and, with --reader, the reader (blob -> str).

Entry point: python -m bench (see bench/README.md).  Each suite times utf8pfx
against its peers on the same strings in one run and checks its speed targets:
the writer's in bench.report.TARGETS, the reader's in bench.report.READER_TARGETS.
"""
