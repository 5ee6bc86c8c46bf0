"""The layers hold: evalcore never imports streamlit; a lower layer never imports a higher one; only the
judge imports anthropic; pages go through dashboard/, never straight to evalcore; no import cycle.

The import graph is read from the source (every import statement, also those inside functions), so a
lazy import cannot hide a violation.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

# Lower number = lower layer. A module may import its own layer and lower ones.
LAYERS: dict[str, int] = {
    "evalcore._version": 0,
    "evalcore.errors": 0,
    "evalcore.words": 0,  # count words that agree with their numbers
    "evalcore.faces": 0,  # a package's names, imported on first use
    "evalcore.schema": 0,
    "evalcore.cache": 0,
    "evalcore.stats": 0,
    "evalcore.escape": 0,  # untrusted text shown literally: markdown, HTML, plotly
    "evalcore.paths": 0,  # a path as polars' readers must be given it (no glob)
    "evalcore.charts": 1,  # plotly figures the dashboard and the reports share
    "evalcore.access": 1,  # who may do what: roles from the access file (raises SetupError)
    "evalcore.store": 1,  # the tool's database: raises evalcore.errors' SetupError
    "evalcore.metrics": 1,
    "evalcore.runs": 2,
    "evalcore.score": 3,
    "evalcore.comparison": 4,
    "evalcore.question": 4,
    "evalcore.trec_eval": 4,
    "evalcore.judge": 4,
    "evalcore.gate": 5,
    "evalcore.report": 5,  # a comparison as a file: HTML or Markdown
    "evalcore.calibration": 5,  # sessions are made from runs under a judge revision
    "evalcore.testset": 4,  # works on a read test set and scored runs
    "evalcore.signals": 5,  # production logs; promoted questions become test-set versions
    "evalcore.cli": 6,
}
# Within the base layer each module stands alone (DESIGN.md: they import no other evalcore module).
STANDALONE = {
    "evalcore._version",
    "evalcore.errors",
    "evalcore.words",
    "evalcore.faces",
    "evalcore.schema",
    "evalcore.cache",
    "evalcore.stats",
    "evalcore.escape",
    "evalcore.paths",
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, resolved to full dotted names (``from a import b`` counts ``a.b``
    when ``b`` is a module of ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            for a in node.names:
                candidate = ROOT / Path(*node.module.split("."), a.name)
                if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
                    out.add(f"{node.module}.{a.name}")
    return out


def _layer(module: str) -> tuple[str, int] | None:
    for prefix, layer in sorted(LAYERS.items(), key=lambda kv: -len(kv[0])):
        if module == prefix or module.startswith(prefix + "."):
            return prefix, layer
    return None


@functools.cache
def _graph() -> dict[str, set[str]]:
    files = [
        *(ROOT / "evalcore").rglob("*.py"),
        *(ROOT / "dashboard").rglob("*.py"),
        *(ROOT / "pages").glob("*.py"),
        ROOT / "app.py",
    ]
    return {_module_name(p): _imports(p) for p in files}


def test_evalcore_never_imports_streamlit_and_only_the_judge_imports_anthropic() -> None:
    bad = []
    for mod, imports in _graph().items():
        for imp in imports:
            top = imp.split(".")[0]
            if mod.startswith("evalcore") and top == "streamlit":
                bad.append(f"{mod} imports {imp}")
            if top == "anthropic" and not mod.startswith("evalcore.judge"):
                bad.append(f"{mod} imports {imp} (only evalcore.judge may)")
    assert not bad, "\n".join(bad)


def test_no_lower_layer_imports_a_higher_one() -> None:
    bad = []
    for mod, imports in _graph().items():
        if not mod.startswith("evalcore.") or mod == "evalcore":
            continue
        own = _layer(mod)
        assert own is not None, f"{mod} belongs to no layer: add its package to LAYERS"
        for imp in imports:
            if imp == "evalcore":
                bad.append(f"{mod} imports the package API (import the module that owns the name)")
                continue
            if not imp.startswith("evalcore."):
                continue
            other = _layer(imp)
            assert other is not None, f"{imp} belongs to no layer"
            if other[1] > own[1]:
                bad.append(f"{mod} (layer {own[1]}) imports {imp} (layer {other[1]})")
            if own[0] in STANDALONE and other[0] != own[0]:
                bad.append(f"{mod} must import no other evalcore module, imports {imp}")
            if other[0] == "evalcore.cli" and own[0] != "evalcore.cli":
                bad.append(f"{mod} imports the CLI")
    assert not bad, "\n".join(bad)


def test_pages_go_through_the_dashboard_package() -> None:
    graph = _graph()
    pages = [m for m in graph if m.startswith("pages.") or m == "app"]
    assert len(pages) >= 4
    bad = [f"{m} imports {i}" for m in pages for i in graph[m] if i.split(".")[0] == "evalcore"]
    assert not bad, "pages lay out what dashboard/ gives them:\n" + "\n".join(bad)


def test_there_is_no_import_cycle() -> None:
    full = _graph()
    graph = {
        m: {i for i in imps if i in full and i != m} for m, imps in full.items()
    }  # (a package names its modules)
    # Package __init__ files re-export their modules; an edge into a package is an edge to its API.
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if seen.get(n) == 1:
                cycle = [*stack[stack.index(n) :], n]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if n not in seen:
                visit(n)
        stack.pop()
        seen[m] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m)


def test_importing_evalcore_pulls_in_neither_streamlit_nor_anthropic() -> None:
    code = (
        "import sys, evalcore, evalcore.cli, evalcore.gate, evalcore.runs.importers, evalcore.trec_eval; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'anthropic')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_importing_evalcore_loads_no_module_until_a_name_is_used() -> None:
    """The CLI, the gate and every `import evalcore` start in a fresh process: an eager import in the
    package face (evalcore.comparison, added for a name clash that no longer exists) cost each
    command 0.7 s of polars, numpy and pydantic before it parsed its arguments."""
    code = (
        "import sys, evalcore; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('polars', 'numpy', 'pydantic') "
        "or m.startswith('evalcore.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "['evalcore._version']"


def test_schema_command_prints_every_file_format(capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from evalcore.cli import main

    assert main(["schema"]) == 0
    schemas = json.loads(capsys.readouterr().out)
    assert any(k.startswith("run.json") for k in schemas) and any(
        k.startswith("results.jsonl") for k in schemas
    )


def test_the_public_api_names_the_functions_whatever_was_imported_first() -> None:
    """The package imports its API names lazily, so no module may be named like one of them: importing
    it would shadow the function (evalcore/compare.py did, and `from evalcore import compare` broke)."""
    import evalcore

    modules = {p.stem for p in (ROOT / "evalcore").glob("*.py")} | {
        p.name for p in (ROOT / "evalcore").iterdir() if p.is_dir()
    }
    assert not modules & set(evalcore.__all__)
    code = (
        "import evalcore.comparison, evalcore.score, evalcore.question; from evalcore import compare, score_run, "
        "load_runs, RunWriter, summarize; print(all(callable(f) for f in (compare, score_run, load_runs, "
        "RunWriter, summarize)) and compare.__module__ == 'evalcore.comparison')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "True", out.stderr


def _package(module: str) -> str:
    """The package a module belongs to (``evalcore.judge.client`` -> ``evalcore.judge``)."""
    is_package = (ROOT / Path(*module.split(".")) / "__init__.py").exists()
    return module if is_package else module.rpartition(".")[0]


def _bound_in_face(module: str) -> bool:
    """``from evalcore.judge import rerun`` reads as importing the module evalcore.judge.rerun, but the
    face binds the function of that name (see evalcore.faces)."""
    package, _, name = module.rpartition(".")
    init = ROOT / Path(*package.split(".")) / "__init__.py"
    return init.exists() and f"from {module} import {name}\n" in init.read_text(encoding="utf-8")


def test_the_dashboard_imports_from_package_faces() -> None:
    """dashboard/, pages/ and app.py take what they need from ``evalcore``, a subpackage's face
    (``evalcore.judge``, ``evalcore.calibration``, …) or a top-level module — never from a module
    inside a subpackage (``evalcore.judge.client``), which is free to move."""
    bad = []
    for mod, imports in _graph().items():
        if not (mod.startswith(("dashboard", "pages")) or mod == "app"):
            continue
        for imp in imports:
            parts = imp.split(".")
            if parts[0] == "evalcore" and len(parts) > 2 and not _bound_in_face(imp):
                bad.append(f"{mod} imports {imp}")
    assert not bad, "import the package face instead:\n" + "\n".join(sorted(bad))


def _private_imports(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.module, a.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        for a in node.names
        if a.name.startswith("_") and not a.name.startswith("__")
    ]


def test_no_module_imports_another_packages_private_names() -> None:
    """A ``_name`` is its package's own: ``evalcore.metrics.retrieval`` may use ``_kernel``, the run
    readers may not (they ask ``retrieval.kernel()``)."""
    files = [
        *(ROOT / "evalcore").rglob("*.py"),
        *(ROOT / "dashboard").rglob("*.py"),
        *(ROOT / "pages").glob("*.py"),
        ROOT / "app.py",
        *(ROOT / "scripts").glob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
    ]
    bad = []
    for path in files:
        mod = _module_name(path)
        for source, name in _private_imports(path):
            if source.split(".")[0] not in ("evalcore", "dashboard"):
                continue
            if _package(source) != _package(mod) and _package(f"{source}.{name}") != _package(mod):
                bad.append(f"{mod}: from {source} import {name}")
    assert not bad, "\n".join(bad)


def test_every_face_name_is_the_owners_whatever_was_imported_first() -> None:
    """Each subpackage face gives the owner's object for every name it offers, also after all its
    submodules were imported (a submodule named like a face name would otherwise shadow it)."""
    code = """
import importlib, pkgutil, sys, types
bad = []
for pkg in ("evalcore.judge", "evalcore.calibration", "evalcore.testset", "evalcore.signals",
            "evalcore.metrics", "evalcore.runs", "evalcore.store"):
    p = importlib.import_module(pkg)
    for info in pkgutil.iter_modules(p.__path__):
        importlib.import_module(f"{pkg}.{info.name}")
    for name in p.__all__:
        value = getattr(p, name)
        if isinstance(value, types.ModuleType):
            bad.append(f"{pkg}.{name} is a module")
print(bad)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_scripts_import_each_other_without_a_cycle() -> None:
    """scripts/ import their siblings by bare name (sample_corpus, sample_kb); make_sample_runs and
    make_sample_log once imported each other."""
    scripts = {p.stem: p for p in (ROOT / "scripts").glob("*.py")}
    graph = {
        name: {i.split(".")[0] for i in _imports(path)} & set(scripts) - {name}
        for name, path in scripts.items()
    }
    assert graph["make_sample_runs"] >= {"make_sample_log", "sample_corpus"}
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, "import cycle: " + " -> ".join((*path, name))
        if name not in done:
            for nxt in sorted(graph[name]):
                visit(nxt, (*path, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())
