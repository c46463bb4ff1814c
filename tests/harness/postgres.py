"""A real, throw-away PostgreSQL server for tests: initdb + pg_ctl in a temp dir, on 127.0.0.1 and a free port.

As root (CI containers) the server runs as the `postgres` user, which PostgreSQL insists on. The cluster lives in a
short path under the system temp dir rather than pytest's tmp_path: root's tmp_path is not reachable by the
postgres user, and a Unix socket path must stay under ~100 characters. The server log is copied to `log_dir` on
stop so a failure can still be read after the cluster is removed.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

SERVER_USER = "postgres"


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl: $TRIAGEBOT_PG_BINDIR, PATH, then Debian's newest version."""
    candidates: list[Path] = []
    if os.environ.get("TRIAGEBOT_PG_BINDIR"):
        candidates.append(Path(os.environ["TRIAGEBOT_PG_BINDIR"]))
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True)
    candidates.extend(Path(p) for p in debian)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


def require_postgres() -> Path:
    """The PostgreSQL bindir; without one the test fails in CI (CI set) and is skipped elsewhere, saying why."""
    bindir = find_bindir()
    if bindir is None:
        message = ("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's `postgresql` package "
                   "or set TRIAGEBOT_PG_BINDIR")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return bindir


@dataclass(frozen=True)
class PgServer:
    bindir: Path
    root: Path
    port: int
    host: str = "127.0.0.1"
    user: str = SERVER_USER
    database: str = "triagebot"
    durable: bool = False  # fsync and synchronous commits on, as a production server runs (benchmarks)

    @property
    def url(self) -> str:
        """SQLAlchemy URL of the database created at start."""
        return self.url_for(self.database)

    def url_for(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{database}"

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(host=self.host, port=self.port, user=self.user, dbname="postgres", autocommit=True)

    def create_database(self, name: str) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        with self._admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        with self._admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_server_user(argv: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root; elsewhere the current user owns the cluster.
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", SERVER_USER, "--", *argv]


def _run(argv: list[str], cwd: Path, what: str) -> None:
    done = subprocess.run(_as_server_user(argv), cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def _make_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="triagebot-pg-"))
    if os.geteuid() == 0:
        account = pwd.getpwnam(SERVER_USER)
        os.chown(root, account.pw_uid, account.pw_gid)
    root.chmod(0o700)
    return root


@contextmanager
def start_postgres(log_dir: Path | None = None, database: str = "triagebot", attempts: int = 3,
                   durable: bool = False) -> Iterator[PgServer]:
    """Run a private PostgreSQL for the duration of the block and yield it; stop it (-m fast) and delete it after.
    `durable`: keep PostgreSQL's durability settings (a benchmark of what a commit costs); tests leave them off."""
    bindir = require_postgres()
    root = _make_root()
    data, log = root / "data", root / "server.log"
    server: PgServer | None = None
    try:
        _run([str(bindir / "initdb"), "-D", str(data), "-U", SERVER_USER, "--auth=trust", "-E", "UTF8",
              "--no-locale", "--no-sync"], root, "initdb")
        # A free port can be taken between probing and binding; try a few before giving up.
        for attempt in range(attempts):
            port = _free_port()
            try:
                _pg_ctl_start(bindir, root, port, durable)
            except RuntimeError:
                if attempt == attempts - 1:
                    raise RuntimeError(f"PostgreSQL did not start; server log:\n{_read(log)}") from None
                continue
            server = PgServer(bindir=bindir, root=root, port=port, database=database, durable=durable)
            break
        assert server is not None
        server.create_database(database)
        yield server
    finally:
        if server is not None:
            with suppress(Exception):
                _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], root, "pg_ctl stop")
        if log_dir is not None and log.exists():
            with suppress(OSError):
                shutil.copy(log, log_dir / "postgres-server.log")
        shutil.rmtree(root, ignore_errors=True)


def _pg_ctl_start(bindir: Path, root: Path, port: int, durable: bool = False) -> None:
    # Durability settings off unless asked for: this cluster is thrown away, and fsync dominates test time otherwise.
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root}"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    _run([str(bindir / "pg_ctl"), "-D", str(root / "data"), "-l", str(root / "server.log"), "-w", "-t", "30",
          "-o", options, "start"], root, "pg_ctl start")


def stop_server(server: PgServer) -> None:
    """Stop the server as an operator's restart does (`-m fast`: sessions are cut, open transactions roll back)."""
    _run([str(server.bindir / "pg_ctl"), "-D", str(server.root / "data"), "-m", "fast", "-w", "stop"],
         server.root, "pg_ctl stop")


def start_server(server: PgServer) -> None:
    """Start a stopped server again, on its port."""
    _pg_ctl_start(server.bindir, server.root, server.port, server.durable)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-4000:]
    except OSError as err:
        return f"({err})"
