"""What the tests share; no tests here.  conftest.py puts tests/ on sys.path,
so a test imports ``from support.reference import ref_encode``.

  reference       the pure-Python reference the C core is checked against:
                  CPython's codec for the payload, utf8pfx._reference's VInt
                  (leb128) and storage-kind classifier (storage_kind), the
                  reader's reference with the offset of every error, the
                  custom error handlers the tests register, text builders
  strategies      Hypothesis strategies beyond utf8pfx.testing's (which the
                  tests use for strings of one storage kind): lone surrogates
                  and runs of them, text each handler accepts, str subclasses
  checks          one str through every writer entry point against CPython;
                  a writer holding bytes before the call under test
  subproc         a child Python that imports the utf8pfx under test
  arrow_producer  a hand-made Arrow producer over ctypes (no Arrow library)
  kernel_report   which kernel levels ran natively and which emulated
  leak_workload   the mixed-operation loop of the leak test, also a script
                  for valgrind (python tests/support/leak_workload.py CYCLES)
"""
