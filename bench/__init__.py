"""utf8pfx writer benchmark suite (issue 3); entry point: python -m bench."""
