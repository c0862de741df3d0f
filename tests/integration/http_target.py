#!/usr/bin/env python3
"""The HTTP target of the integration tests, run by path: see
sptest/target.py for its options, routes and logs."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.target import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
