"""A sign of life on stderr for long solves: a spinner with what is running, after one second.

Shown only when stderr is a terminal and the command prints for people (never with ``--json``):
scripts and pipes see nothing extra on either stream.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from rich.console import Console
from rich.status import Status

DELAY = 1.0
REFRESH = 4
"""Refreshes per second: enough for a sign of life, little CPU taken from the solver."""


class Spinner:
    """``with Spinner(enabled) as sp: sp.update("exact: ...")``; appears after ``delay`` seconds."""

    def __init__(
        self,
        enabled: bool,
        *,
        delay: float = DELAY,
        stream: TextIO | None = None,
        console: Console | None = None,
    ) -> None:
        stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and (console is not None or _is_tty(stream))
        self.delay = delay
        self.console = (
            console
            if console is not None
            else (Console(file=stream, stderr=stream is sys.stderr) if self.enabled else None)
        )
        self.text = "working"
        self._t0 = time.perf_counter()
        self._status = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> Spinner:
        self._t0 = time.perf_counter()
        if self.enabled:
            self._timer = threading.Timer(self.delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _label(self) -> str:
        return f"{self.text} ({time.perf_counter() - self._t0:.0f} s)"

    def __rich__(self) -> str:
        """Rendered at each refresh, so the elapsed seconds stay current between updates."""
        return self._label()

    def _start(self) -> None:
        with self._lock:
            if self._closed or self.console is None:
                return
            self._status = Status(
                self, console=self.console, spinner="dots", refresh_per_second=REFRESH
            )
            self._status.start()

    def update(self, text: str) -> None:
        self.text = text

    @property
    def shown(self) -> bool:
        return self._status is not None

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._status is not None:
                self._status.stop()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["Spinner"]
