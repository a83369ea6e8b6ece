"""utf8pfx benchmark suites: writer (issue 3) and reader (issue 4, --reader); entry point: python -m bench."""
