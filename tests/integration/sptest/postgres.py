"""A throwaway PostgreSQL cluster for the fleet tests (docs/design.md
section 9.2): initdb in a temporary directory, run as an unprivileged
user (nobody when the suite runs as root, since the server refuses root),
listening on a unix socket in that directory only, and stopped by its
pid at the end.

Cluster(tmp) makes and starts it; .admin_sql() runs SQL as its
superuser "spadmin"; .conninfo(user) is what a policy's "postgres" key
names; .stop() / .start() stop and start the same cluster (a database lost
mid-session, then back).  absent_reason() says why no cluster can be made
here (no server installed, or this sp built without libpq), for a
counted skip.
"""
import atexit
import glob
import os
import pwd
import shutil
import signal
import subprocess
import time

from sptest.policy import write_policy
from sptest.run import SP, sp_env, tmpdir

ADMIN = "spadmin"
# the one role the cluster asks for a SCRAM password
PASSWORD_ROLE = "pw_session"


def _bindir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                  key=lambda d: int(d.split("/")[-2]) if
                  d.split("/")[-2].isdigit() else 0)
    for d in reversed(dirs):
        if os.access(os.path.join(d, "initdb"), os.X_OK):
            return d
    return None


def absent_reason():
    """Why the fleet tests cannot run here, or None."""
    out = subprocess.run([SP, "--version"], capture_output=True,
                         env=sp_env()).stdout.decode()
    if "postgres=yes" not in out:
        return "this sp was built without libpq (install libpq-dev)"
    if _bindir() is None:
        return ("no PostgreSQL server is installed (Debian: postgresql); "
                "the fleet tests start their own cluster")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("nobody")
        except KeyError:
            return "running as root, and there is no user nobody to run " \
                   "PostgreSQL as"
    return None


class Cluster:
    def __init__(self, tmp):
        self.bindir = _bindir()
        self.dir = os.path.join(tmp, "pg")
        self.data = os.path.join(self.dir, "data")
        self.socket_dir = self.dir
        self.proc = None
        self.log = os.path.join(self.dir, "server.log")
        os.makedirs(self.dir, mode=0o755)
        self.as_user = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("nobody")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["setpriv", "--reuid=%d" % pw.pw_uid,
                            "--regid=%d" % pw.pw_gid, "--clear-groups",
                            "--"]
        self._run(["initdb", "-D", self.data, "-U", ADMIN, "-A", "trust",
                   "-E", "UTF8", "--no-sync", "--locale=C"])
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            # PASSWORD_ROLE must give a password (a role list, as a
            # regular expression there needs PostgreSQL 16); the others
            # are trusted
            f.write("local all %s scram-sha-256\n" % PASSWORD_ROLE +
                    "local all all trust\n")
        atexit.register(self.stop)
        self.start()

    def _run(self, argv, check=True):
        argv = self.as_user + [os.path.join(self.bindir, argv[0])] + argv[1:]
        r = subprocess.run(argv, capture_output=True, cwd="/")
        if check and r.returncode != 0:
            raise RuntimeError("%s: %s" % (argv, r.stderr.decode()[-500:]))
        return r

    def start(self, timeout=120):
        """Starts the server and waits until it accepts connections."""
        argv = self.as_user + [os.path.join(self.bindir, "postgres"),
                               "-D", self.data, "-k", self.socket_dir,
                               "-c", "listen_addresses=",
                               "-c", "fsync=off",
                               "-c", "max_connections=60",
                               "-c", "password_encryption=scram-sha-256"]
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(argv, stdout=logf, stderr=logf,
                                     stdin=subprocess.DEVNULL, cwd="/")
        logf.close()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("postgres ended: " + self.tail())
            r = self._run(["pg_isready", "-h", self.socket_dir, "-U",
                           ADMIN, "-d", "postgres"], check=False)
            if r.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("postgres did not start: " + self.tail())

    def stop(self):
        """Fast shutdown by pid: every session's connection is closed."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def tail(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-800:]
        except OSError:
            return ""

    def psql(self, sql, user=ADMIN, db="postgres"):
        """Runs sql with psql; its stdout (tuples only, unaligned)."""
        r = self._run(["psql", "-h", self.socket_dir, "-U", user, "-d", db,
                       "-v", "ON_ERROR_STOP=1", "-X", "-A", "-t", "-c",
                       sql])
        return r.stdout.decode()

    def admin_sql(self, sql, db="postgres"):
        return self.psql(sql, ADMIN, db)

    def conninfo(self, user=ADMIN, db="postgres"):
        return "host=%s dbname=%s user=%s" % (self.socket_dir, db, user)

    def make_database(self, name, runtime_role=None, password=None):
        """A database, and a login role for sessions (no rights yet)."""
        self.admin_sql('CREATE DATABASE "%s"' % name)
        if runtime_role is not None:
            self.admin_sql("CREATE ROLE \"%s\" LOGIN%s" % (
                runtime_role, "" if password is None else
                " PASSWORD '%s'" % password.replace("'", "''")))


def remove(cluster):
    cluster.stop()
    shutil.rmtree(cluster.dir, ignore_errors=True)


def shared_state(prefix, doc, db="fleet"):
    """A temporary directory (0755, for the cluster's user), a started
    cluster with database db, and its schema made by sp state init with
    doc(tmp, "init", port, conninfo).  Returns (tmp, cluster, conninfo,
    the init's CompletedProcess) for the caller to check."""
    tmp = tmpdir(prefix)
    os.chmod(tmp, 0o755)
    cluster = Cluster(tmp)
    cluster.make_database(db)
    conninfo = cluster.conninfo(db=db)
    init = write_policy(tmp, doc(tmp, "init", 9, conninfo), "init.json")
    r = subprocess.run([SP, "state", "init", "--config", init],
                       capture_output=True, env=sp_env(), timeout=120)
    return tmp, cluster, conninfo, r


def fleet_tool(name, path, **kw):
    """A GET tool of the fleet tests' target "api", one string param id;
    kw replaces or adds members (limits, mutating, http, idempotency)."""
    t = {"name": name, "description": "Fleet tool.", "target": "api",
         "scope": "rw", "http": {"method": "GET", "path": path},
         "params": {"id": {"type": "string", "maxLength": 64}}}
    t.update(kw)
    return t


def fleet_policy(tmp, name, port, state, tools, **top):
    """The policy document of one fleet "host" called name: its "state"
    (a dict, {"postgres": ...}), tools on an HTTP target at port, its own
    audit log in tmp; top adds or replaces top-level members (limits,
    state_dir, strict_credentials)."""
    d = {"sallyport": 1,
         "server": {"name": "fleet-" + name},
         "state": state,
         "targets": {"api": {"type": "http",
                             "base_url": "http://127.0.0.1:%d" % port}},
         "tools": tools,
         "profiles": {"default": {"scopes": ["rw"]}},
         "audit": {"path": os.path.join(tmp, "audit-%s.jsonl" % name)}}
    d.update(top)
    return d
