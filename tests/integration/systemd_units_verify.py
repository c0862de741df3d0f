#!/usr/bin/env python3
"""contrib/systemd: the units pass `systemd-analyze verify` without a
single warning (pointed at the sp under test, since verify insists the
ExecStart binary exists), and they say what docs/design.md section 7 needs:
one `sp mcp` per connection with the connection as stdin/stdout, a
dedicated user, a socket only a client group can reach, writable paths
limited to the audit and state directories; and the metrics pair: the
timer runs a oneshot `sp metrics` as sallyport, written atomically into
node_exporter's textfile directory, with no network, installed and not
enabled by the package."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.run import SP  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402

SRC = os.environ["SP_SRCDIR"]
UNITS = os.path.join(SRC, "contrib", "systemd")
INSTALLED_SP = "/usr/local/bin/sp"
SOCKET_PATH = "/run/sallyport/mcp.sock"
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"
UNIT_NAMES = ("sallyport.socket", "sallyport@.service",
              "sallyport-metrics.service", "sallyport-metrics.timer")


def settings(path):
    """{(section, key): [values]} of a unit file."""
    out, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, _, value = line.partition("=")
            out.setdefault((section, key.strip()), []).append(value.strip())
    return out


def one(units, section, key):
    values = units.get((section, key), [])
    return values[0] if len(values) == 1 else None


def test_contents():
    sock = settings(os.path.join(UNITS, "sallyport.socket"))
    svc = settings(os.path.join(UNITS, "sallyport@.service"))
    check("the socket: one connection, one service instance",
          one(sock, "Socket", "Accept") == "yes" and
          one(sock, "Socket", "ListenStream") == SOCKET_PATH, sock)
    check("the socket: 0660, group sallyport-clients",
          one(sock, "Socket", "SocketMode") == "0660" and
          one(sock, "Socket", "SocketGroup") == "sallyport-clients", sock)
    check("the service runs sp mcp on the connection as stdin and stdout",
          (one(svc, "Service", "ExecStart") or "").startswith(
              INSTALLED_SP + " mcp") and
          one(svc, "Service", "StandardInput") == "socket" and
          one(svc, "Service", "StandardOutput") == "socket" and
          one(svc, "Service", "StandardError") == "journal", svc)
    check("the service runs as sallyport, never root, without privileges",
          one(svc, "Service", "User") == "sallyport" and
          one(svc, "Service", "NoNewPrivileges") == "yes" and
          one(svc, "Service", "CapabilityBoundingSet") == "", svc)
    check("the state directory is traversable by approvers (0711), as "
          "sp-policy(5) asks; the audit directory stays 0700",
          one(svc, "Service", "StateDirectoryMode") == "0711" and
          one(svc, "Service", "LogsDirectoryMode") == "0700", svc)
    check("only the audit and state directories are writable",
          one(svc, "Service", "ProtectSystem") == "strict" and
          one(svc, "Service", "ReadWritePaths") ==
          "/var/log/sallyport /var/lib/sallyport" and
          one(svc, "Service", "ProtectHome") == "yes" and
          one(svc, "Service", "PrivateTmp") == "yes", svc)
    families = (one(svc, "Service", "RestrictAddressFamilies") or "").split()
    check("address families: unix for the socketpairs, inet for targets",
          {"AF_UNIX", "AF_INET", "AF_INET6"} <= set(families), families)
    check("no outer SystemCallFilter to fight sp's own per-role filters",
          ("Service", "SystemCallFilter") not in svc, svc)
    with open(os.path.join(UNITS, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    check("the README tells clients the socket's path",
          "sp connect " + SOCKET_PATH in readme)
    test_metrics_contents(readme)


def test_metrics_contents(readme):
    svc = settings(os.path.join(UNITS, "sallyport-metrics.service"))
    timer = settings(os.path.join(UNITS, "sallyport-metrics.timer"))
    run = one(svc, "Service", "ExecStart") or ""
    prom = TEXTFILE_DIR + "/sallyport.prom"
    check("the metrics service: a oneshot sp metrics, written under a "
          "temporary name then renamed over sallyport.prom",
          one(svc, "Service", "Type") == "oneshot" and
          run.startswith("/bin/sh -c '") and
          " %s metrics --config /etc/sallyport/policy.json " % INSTALLED_SP
          in run and 'f=%s;' % prom in run and
          '>"$$f.$$$$" && mv -f "$$f.$$$$" "$$f"' in run and
          ("Install", "WantedBy") not in svc, run)
    check("the metrics service runs as sallyport, without privileges, the "
          "file readable by node_exporter",
          one(svc, "Service", "User") == "sallyport" and
          one(svc, "Service", "NoNewPrivileges") == "yes" and
          one(svc, "Service", "CapabilityBoundingSet") == "" and
          one(svc, "Service", "UMask") == "0022", svc)
    check("the metrics service writes the textfile directory and state_dir "
          "only (its lock), with no network",
          one(svc, "Service", "ProtectSystem") == "strict" and
          one(svc, "Service", "ReadWritePaths") ==
          "-%s -/var/lib/sallyport" % TEXTFILE_DIR and
          one(svc, "Service", "ProtectHome") == "yes" and
          one(svc, "Service", "PrivateNetwork") == "yes" and
          one(svc, "Service", "RestrictAddressFamilies") == "AF_UNIX", svc)
    check("the timer runs it every minute, wanted by timers.target",
          one(timer, "Timer", "OnCalendar") == "minutely" and
          ("Timer", "Unit") not in timer and
          one(timer, "Install", "WantedBy") == "timers.target", timer)
    with open(os.path.join(SRC, "debian", "rules"), encoding="utf-8") as f:
        rules = f.read()
    check("the package enables the socket and leaves the timer disabled",
          "dh_installsystemd --no-start --no-stop-on-upgrade "
          "sallyport.socket\n" in rules and
          "dh_installsystemd --no-enable --no-start "
          "sallyport-metrics.timer\n" in rules, rules)
    check("the README says how to enable the timer",
          "systemctl enable --now sallyport-metrics.timer" in readme)


def test_verify():
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        skip("systemd-analyze verify of the units",
             "systemd-analyze not installed (package systemd)")
        return
    tmp = tempfile.mkdtemp(prefix="sp-ops-units-")
    try:
        for name in UNIT_NAMES:
            with open(os.path.join(UNITS, name), encoding="utf-8") as f:
                text = f.read()
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text.replace(INSTALLED_SP, os.path.abspath(SP)))
        p = subprocess.run([analyze, "verify", "--man=no"] +
                           [os.path.join(tmp, n) for n in UNIT_NAMES],
                           capture_output=True, timeout=30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # Unknown keys are only warnings (status 0): any output is a failure.
    noise = [l for l in (p.stdout + p.stderr).decode().splitlines()
             if "sallyport" in l]
    check("systemd-analyze verify: status 0, no warning about our units",
          p.returncode == 0 and not noise,
          (p.returncode, p.stdout, p.stderr))


if __name__ == "__main__":  # socket_admits_its_group_only.py reads the units with settings()
    test_contents()
    test_verify()
    done()
