"""One TAP stream per test process: the plan comes last, from done()."""
import sys

_count = 0
_failures = 0


def check(name, cond, detail=""):
    """One TAP line; a failure shows its detail as comment lines."""
    global _count, _failures
    _count += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", _count, name))
    if not cond:
        _failures += 1
        for line in str(detail).splitlines() or [""]:
            print("# " + line)
    sys.stdout.flush()
    return cond


def skip(name, reason):
    """A check that did not run: counted, and said as TAP's # SKIP with
    its reason -- never a plain ok, never a comment TAP does not count."""
    global _count
    _count += 1
    print("ok %d - %s # SKIP %s" % (_count, name, reason))
    sys.stdout.flush()


def done():
    """The plan, then exit: 1 if any check failed."""
    print("1..%d" % _count)
    sys.stdout.flush()
    sys.exit(1 if _failures else 0)


def skip_all(reason):
    """The whole test cannot run here: a plan of none, with its reason,
    then exit 0.  Only before any check."""
    print("1..0 # SKIP %s" % reason)
    sys.stdout.flush()
    sys.exit(0)
