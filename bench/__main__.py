"""python -m bench: see bench/run.py and bench/README.md."""
from bench.run import main

main()
