"""What the kernel says about sp's processes, read from /proc."""
import os
import time


def children(pid):
    """The broker's children as {role: pid}."""
    kids = {}
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                pids = [int(x) for x in f.read().split()]
        except OSError:
            continue
        for c in pids:
            role = cmdline_role(c)
            if role:
                kids[role] = c
    return kids


def cmdline_role(pid):
    """"frontend" or "executor" from a child's program name, argv[0]
    (sp-frontend, sp-executor), else None."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    for role in ("frontend", "executor"):
        if argv[0] == ("sp-" + role).encode():
            return role
    return None


def status_field(pid, name):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def vm_hwm_kib(pid):
    """Peak resident memory, or None when pid is gone (or None)."""
    try:
        return int(status_field(pid, "VmHWM").split()[0])
    except (AttributeError, TypeError, ValueError, IndexError):
        return None


def confined_children(pid, timeout=60.0):
    """Waits until both children run under their seccomp filter (the
    budget is far above need: it returns as soon as they do)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = children(pid)
        if len(kids) == 2 and all(status_field(p, "Seccomp") == "2"
                                  for p in kids.values()):
            return kids
        time.sleep(0.01)
    return children(pid)


def alive(pid):
    """True while pid exists and is not a zombie."""
    state = status_field(pid, "State")
    return state is not None and not state.startswith("Z")


def gone_within(pids, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.005)
    return not any(alive(p) for p in pids)
