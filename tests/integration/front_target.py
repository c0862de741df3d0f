#!/usr/bin/env python3
"""The frontend tests' HTTP target, run by path: sptest/target.py with
--events (each /slow/MS also logs whether it was aborted or answered)."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.target import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--events"] + sys.argv[1:]))
