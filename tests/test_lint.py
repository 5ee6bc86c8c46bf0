"""ruff and mypy stay clean on the library (CI runs them through the test suite)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import ROOT


@pytest.mark.parametrize("cmd", [["ruff", "check", "evalcore", "dashboard", "app.py", "pages", "scripts", "tests"], ["mypy"]])
def test_clean(cmd: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
