"""Reading snapshots and writing plans."""

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_snapshot

__all__ = ["SnapshotError", "load_snapshot"]
