#!/usr/bin/env python3
"""The test hooks (child/test_hook.h) are compiled to nothing outside the
test build: the product programs sp, sp-frontend and sp-executor hold no
hook's code and no hook's words.

- Their bytes hold none of the words only a hook reads or says: the
  environment variables SP_TEST_HOOK and SP_TEST_PROGRESS_MS, the
  actions the product files name at their call sites (operator-leak,
  late-intent-ack, no-ack) and the hooks' own log lines.  The test builds
  beside tests/sp-test hold each of them, so the search would find them.
- nm (binutils) lists no test_hook_* symbol in them; without nm, or on a
  stripped program, that check is a counted skip.
A build configured with --enable-test-hooks has them on purpose (sp
--version says test-hooks=yes): then the whole test is skipped."""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.run import SP, sp_env  # noqa: E402
from sptest.tap import check, done, skip, skip_all  # noqa: E402

BUILD = os.path.dirname(os.path.abspath(SP))
PRODUCT = ("sp", "sp-frontend", "sp-executor")
TEST_BUILD = {"sp": "sp-test", "sp-frontend": "sp-frontend",
              "sp-executor": "sp-executor"}
# Words that exist only for a hook: each is in at least one test build.
HOOK_WORDS = (b"SP_TEST_HOOK", b"SP_TEST_PROGRESS_MS", b"operator-leak",
              b"late-intent-ack", b"no-ack", b"heap-report", b"test hook: ")


def contents(path):
    with open(path, "rb") as f:
        return f.read()


def hook_symbols(path):
    """The test_hook_* symbols nm lists, or None when nm cannot say."""
    p = subprocess.run(["nm", path], capture_output=True, text=True)
    if p.returncode != 0 or "no symbols" in p.stderr:
        return None
    return [line.split()[-1] for line in p.stdout.splitlines()
            if "test_hook" in line]


def test_words():
    for prog in PRODUCT:
        data = contents(os.path.join(BUILD, prog))
        found = [w.decode() for w in HOOK_WORDS if w in data]
        check("%s holds no test-hook word" % prog, found == [], found)
    test_data = b""
    for prog in PRODUCT:
        path = os.path.join(BUILD, "tests", TEST_BUILD[prog])
        if not os.path.exists(path):
            skip("tests/%s holds hook words" % TEST_BUILD[prog],
                 "not built (make check builds it)")
            continue
        test_data += contents(path)
    if test_data:
        missing = [w.decode() for w in HOOK_WORDS if w not in test_data]
        check("the test builds hold every hook word searched for",
              missing == [], missing)


def test_symbols():
    for prog in PRODUCT:
        name = "%s has no test_hook symbol" % prog
        if shutil.which("nm") is None:
            skip(name, "nm (binutils) is not installed")
            continue
        syms = hook_symbols(os.path.join(BUILD, prog))
        if syms is None:
            skip(name, "nm lists no symbols (stripped)")
            continue
        check(name, syms == [], syms)


def main():
    p = subprocess.run([SP, "--version"], capture_output=True, text=True,
                       env=sp_env(), timeout=60)
    if "test-hooks=yes" in p.stdout:
        skip_all("configured with --enable-test-hooks")
    check("sp --version says test-hooks=no",
          p.returncode == 0 and "test-hooks=no" in p.stdout, p.stdout)
    test_words()
    test_symbols()
    done()


if __name__ == "__main__":
    main()
