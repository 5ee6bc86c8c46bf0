"""Start the dashboard on a free local port and drive it with Debian's Chromium through playwright.

Used by the browser tests and by ``scripts/screenshot.py``. No browser is downloaded: playwright
launches /usr/bin/chromium (``apt-get install chromium``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("RAGTRIAGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class ServerURL(str):
    """The server's base URL; ``pid`` is the streamlit process (for memory readings)."""

    pid: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def dashboard(
    runs: Path | None = None,
    *,
    timeout: float = 60,
    script: Path | None = None,
    env: dict[str, str] | None = None,
    options: list[str] | None = None,
    port: int | None = None,
    host: str = "127.0.0.1",
) -> Iterator[ServerURL]:
    """A running ``streamlit run app.py`` (or ``script``) on 127.0.0.1; yields its base URL
    (``http://HOST:PORT``). ``env``: more environment; ``options``: streamlit's own
    (``--secrets.files=...``)."""
    port = port or free_port()
    extra = env or {}
    env = {
        **os.environ,
        **extra,
        "STREAMLIT_SERVER_HEADLESS": "true",
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none",
        "STREAMLIT_SERVER_ADDRESS": "127.0.0.1",
        "STREAMLIT_SERVER_PORT": str(port),
    }
    cmd = [sys.executable, "-m", "streamlit", "run", str(script or ROOT / "app.py"), *(options or [])]
    if runs is not None:
        cmd += ["--", "--runs", str(runs)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = ServerURL(f"http://{host}:{port}")
    url.pid = proc.pid
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                msg = f"dashboard did not start: {out[-2000:]}"
                raise RuntimeError(msg)
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_rendered(page, timeout_ms: int = 30_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the script finished running and no skeleton placeholder is left."""
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout_ms)
    page.wait_for_function(
        "document.querySelectorAll('[data-testid=\"stSkeleton\"]').length === 0", timeout=timeout_ms
    )
