"""A real PostgreSQL server for the store's tests, started as the browser tests start Chromium:
Debian's ``postgresql`` package (``apt-get install postgresql``; ``.ci/run`` installs it), ``initdb``
into a temporary folder, listening on a free port on 127.0.0.1 only. The machines run as root and
PostgreSQL refuses to: as root, the server runs as the ``postgres`` user on a folder it owns."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path


def bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def missing() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None."""
    if bindir() is None:
        return "no PostgreSQL server (apt-get install postgresql; .ci/run installs it)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "no psycopg (pip install -e '.[test]')"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server() -> Iterator[str]:
    """A running server; yields the URL of its ``postgres`` database (trust auth, local only)."""
    bin_ = bindir()
    assert bin_ is not None, missing()
    root = os.geteuid() == 0
    data = Path(tempfile.mkdtemp(prefix="ragtriage-pg-"))
    as_pg = ["runuser", "-u", "postgres", "--"] if root else []
    if root:
        shutil.chown(data, "postgres", "postgres")
    port = _free_port()
    db = data / "db"
    log = data / "log"
    subprocess.run(
        [*as_pg, str(bin_ / "initdb"), "-D", str(db), "-A", "trust", "-U", "postgres", "--no-sync"],
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [*as_pg, str(bin_ / "pg_ctl"), "-D", str(db), "-l", str(log), "-o", opts, "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_pg, str(bin_ / "pg_ctl"), "-D", str(db), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(data, ignore_errors=True)


def fresh_database(url: str) -> str:
    """A new empty database on the server at ``url``; its URL."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    return url.rsplit("/", 1)[0] + "/" + name
