"""ruff (lint and format) and mypy stay clean on everything (CI runs them through the test suite)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import ROOT

CODE = ["evalcore", "dashboard", "app.py", "pages", "scripts", "benchmarks", "tests"]


@pytest.mark.parametrize(
    "cmd",
    [["ruff", "check", *CODE], ["ruff", "format", "--check", *CODE], ["mypy"]],
    ids=["lint", "format", "mypy"],
)
def test_clean(cmd: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
