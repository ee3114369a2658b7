"""A throwaway PostgreSQL cluster for the session: the real server, never a mock.

``initdb`` runs as the ``postgres`` OS user when the tests run as root (the server refuses to run as
root), into a temporary folder that user can read; trust authentication on a unix socket in that folder
only (``listen_addresses=''``), no durability (``fsync=off``), started once with ``pg_ctl start -w`` and
stopped, folder removed, at the end. The tests skip, saying why, only when no server binary exists.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import psycopg
except ImportError:  # the tests skip, saying so (each module asks for it too)
    psycopg = None
NO_DRIVER = "the postgres extra is not installed: pip install 'threadfix[postgres]'"


def server_bindir() -> Path | None:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``: ``pg_config --bindir``, else the newest of
    /usr/lib/postgresql/*/bin, else PATH."""
    found = []
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        if out.returncode == 0:
            found.append(Path(out.stdout.strip()))
    found += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])
                                      if p.split("/")[-2].isdigit() else 0, reverse=True)]
    if shutil.which("initdb"):
        found.append(Path(shutil.which("initdb")).parent)
    return next((d for d in found if (d / "initdb").exists() and (d / "pg_ctl").exists() and (d / "postgres").exists()),
                None)


class Cluster:
    """A running cluster: its socket folder and how to reach its databases."""

    def __init__(self, bindir: Path, root: Path, user: str | None) -> None:
        self.bindir, self.root, self.user = bindir, root, user
        self.data = root / "data"
        self.socket = root / "socket"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            owner = pwd.getpwnam(self.user)
            preexec = lambda: (os.setgid(owner.pw_gid), os.setuid(owner.pw_uid))  # noqa: E731
        else:
            preexec = None
        return subprocess.run(command, capture_output=True, text=True, preexec_fn=preexec, cwd=self.root,
                              env={**os.environ, "LC_ALL": "C.UTF-8"})

    def start(self) -> None:
        init = self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                         "--locale=C.UTF-8", "--no-sync")
        if init.returncode:
            raise RuntimeError(f"initdb failed: {init.stderr.strip()}")
        options = (f"-c listen_addresses='' -c unix_socket_directories='{self.socket}' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60 "
                   "-c shared_buffers=64MB -c deadlock_timeout=100ms")
        started = self._run("pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.root / "log"),
                            "-o", options)
        if started.returncode:
            log = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()} {log}")

    def stop(self) -> None:
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30")

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        """A libpq URL over the cluster's unix socket."""
        return f"postgresql://{user}@/{database}?host={self.socket}"

    def connect(self, database: str = "postgres", **kwargs):
        return psycopg.connect(self.url(database), autocommit=True, **kwargs)

    def database(self) -> str:
        """A fresh, empty database; its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    if psycopg is None:
        pytest.skip(NO_DRIVER)
    bindir = server_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl, postgres) found via pg_config, "
                    "/usr/lib/postgresql/*/bin or PATH")
    user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
            user = "postgres"
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' OS user to run the server as")
    root = Path(tempfile.mkdtemp(prefix="tf-pg-"))
    os.chmod(root, 0o755)
    os.mkdir(root / "socket")
    if user is not None:
        owner = pwd.getpwnam(user)
        os.chown(root, owner.pw_uid, owner.pw_gid)
        os.chown(root / "socket", owner.pw_uid, owner.pw_gid)
    found = Cluster(bindir, root, user)
    try:
        found.start()
        yield found
    finally:
        found.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def db(cluster: Cluster) -> str:
    """The URL of a fresh, empty database."""
    return cluster.database()
