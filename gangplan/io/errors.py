"""Bad-input errors: every message names the file, the object and the field."""

from __future__ import annotations


class SnapshotError(Exception):
    """A snapshot that cannot be read. The CLI prints ``str(err)`` and exits with code 2.

    >>> str(SnapshotError("a.yaml", "negative quantity", obj="Pod/default/p1", field="spec.containers[0].resources.requests.cpu"))
    'a.yaml: Pod/default/p1: spec.containers[0].resources.requests.cpu: negative quantity'
    """

    def __init__(
        self,
        file: str,
        message: str,
        *,
        obj: str | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.file = file
        self.obj = obj
        self.field = field
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [where]
        if self.obj:
            parts.append(self.obj)
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)
