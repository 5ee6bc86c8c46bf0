"""evalcore is the library: it never imports streamlit, and importing it does not pull in anthropic."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT


def test_evalcore_never_imports_streamlit_or_anthropic() -> None:
    code = ("import sys, evalcore, evalcore.cli, evalcore.gate, evalcore.runs.importers, evalcore.runs.trec; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'anthropic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_no_streamlit_import_statement_in_evalcore() -> None:
    for path in (ROOT / "evalcore").rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path


def test_schema_command_prints_every_file_format(capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from evalcore.cli import main

    assert main(["schema"]) == 0
    schemas = json.loads(capsys.readouterr().out)
    assert any(k.startswith("run.json") for k in schemas) and any(k.startswith("results.jsonl") for k in schemas)
