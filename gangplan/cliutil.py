"""What every command shares: the consoles and how bad input ends a command (exit code 2)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.text import Text

from gangplan.io.errors import SnapshotError

EXIT_VIOLATIONS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70

err = Console(stderr=True, highlight=False, soft_wrap=True)


def bad_input(e: SnapshotError | str) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the Exit(2) to raise."""
    err.print(Text.assemble(("error: ", "bold red"), str(e)))
    return typer.Exit(EXIT_BAD_INPUT)
