"""A local S3-compatible server for the tests (moto in server mode, in a process of its own on a free
port of 127.0.0.1), and a bucket filled with a runs folder. ``refusing=True`` starts one that
enforces authentication from its first request, so the tests' credentials are refused (403), as a
bucket the deployment may not read."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

KEY_ID = "AKIATESTRAGTRIAGE000"
SECRET = "planted-s3-secret-key-5b9c"  # tests check it is never printed


def missing() -> str | None:
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
        import obstore  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install -e '.[test]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(*, refusing: bool = False) -> Iterator[str]:
    """A running moto S3 server; yields its endpoint URL."""
    port = _free_port()
    env = {**os.environ}
    if refusing:
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/moto-api/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def environment(endpoint: str) -> dict[str, str]:
    """What a client of that server needs: the standard AWS variables."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def client(endpoint: str) -> Any:
    import boto3

    env = environment(endpoint)
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )


def upload(endpoint: str, folder: Path, bucket: str, prefix: str) -> None:
    """Every file of ``folder`` (hidden ones left out) under ``s3://bucket/prefix/``."""
    s3 = client(endpoint)
    with suppress(s3.exceptions.BucketAlreadyOwnedByYou):
        s3.create_bucket(Bucket=bucket)
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts):
            s3.upload_file(str(p), bucket, f"{prefix}/{rel.as_posix()}")
