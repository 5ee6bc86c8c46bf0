"""`evalcore ... | head`: a reader that closes the pipe early ends the command quietly."""

from __future__ import annotations

import io

import pytest

from evalcore.cli import main


class ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_is_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert main(["schema"]) == 0
