"""The ``evalcore`` command line: one module per group of commands, each adding its own subcommands
(``add_parsers``), and what they share in :mod:`evalcore.cli.common`. Exit codes: 0 ok / gate passed,
1 gate failed or invalid input found by ``validate``, 2 bad input or usage."""

from __future__ import annotations

import argparse
import sys

from evalcore._version import __version__
from evalcore.cli import audit, calibrate, files, judge, scores, signals, testset
from evalcore.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    LOCATED,
    ShownStdout,
    mirror_urls,
    print_problems,
    usage_error,
)
from evalcore.errors import InputError, SetupError
from evalcore.store.audit import OverBudget

GROUPS = (files, scores, judge, calibrate, testset, signals, audit)  # the order of --help


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="evalcore", description="Score, compare and gate RAG evaluation runs.")
    p.add_argument("--version", action="version", version=f"evalcore {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    for group in GROUPS:
        group.add_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    LOCATED.clear()
    try:
        mirror_urls(args)
        if LOCATED:  # what the command prints names the bucket's URLs, not the mirror's paths
            sys.stdout = ShownStdout(sys.stdout)
        return int(args.func(args))
    except InputError as exc:
        print_problems(exc.problems)
        return EXIT_USAGE
    except BrokenPipeError:  # `evalcore ... | head` (before OSError's kin below)
        return EXIT_OK
    except (ValueError, FileExistsError, FileNotFoundError, SetupError, PermissionError, OverBudget) as exc:
        return usage_error(str(exc))
    finally:
        if isinstance(sys.stdout, ShownStdout):
            sys.stdout.flush()
            sys.stdout = sys.stdout.inner
