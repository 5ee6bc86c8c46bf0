"""A package's face: the names it offers, each imported from the module that owns it on first use
(PEP 562), so importing a package loads nothing it is not asked for.

    __getattr__, __dir__ = face(__name__, {"rerun": "rerun", "JudgeConfig": "client"})

A value ``"module:attr"`` offers the module's ``attr`` under another name (``"synth_plan": "synth:plan"``),
where the owner's name alone would be ambiguous in the package.

A name that is also a submodule's name must be bound in the package itself after importing it:
importing the submodule sets the package attribute to the module, which would shadow the name.
``tests/test_layering.py`` checks every face for that. Imports no other evalcore module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def face(package: str, api: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``api`` maps each name to its submodule."""

    def getattr_(name: str) -> Any:
        if name in api:
            module, _, attr = api[name].partition(":")
            value = getattr(importlib.import_module(f"{package}.{module}"), attr or name)
            vars(sys.modules[package])[name] = value
            return value
        msg = f"module {package!r} has no attribute {name!r}"
        raise AttributeError(msg)

    def dir_() -> list[str]:
        return sorted(set(api) | {n for n in vars(sys.modules[package]) if not n.startswith("_")})

    return getattr_, dir_
