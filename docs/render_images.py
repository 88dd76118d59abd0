"""Render the pictures the README and the docs show, from gangplan's own output.

``python docs/render_images.py`` writes ``docs/img/gb200-diff.svg``: ``gangplan diff`` on the
GB200 NVL72 showcase (``scenarios/showcase/tas-nvl72-fragmentation.yaml``) at 100 columns, the
terminal output recorded by rich. The solve time in the picture is whatever this run took.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from gangplan.io.loader import load_snapshot
from gangplan.render import render_diff
from gangplan.solver.diff import diff_snapshot

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "scenarios/showcase/tas-nvl72-fragmentation.yaml"


def render_gb200_diff(out: Path) -> None:
    console = Console(
        record=True,
        width=100,
        force_terminal=True,
        color_system="truecolor",
        file=open("/dev/null", "w"),
    )
    cluster = load_snapshot(ROOT / SCENARIO)
    render_diff(console, diff_snapshot(cluster, snapshot=SCENARIO, seed=0))
    out.write_text(console.export_svg(title=f"gangplan diff {SCENARIO}"))


if __name__ == "__main__":
    target = ROOT / "docs" / "img" / "gb200-diff.svg"
    render_gb200_diff(target)
    print(f"wrote {target.relative_to(ROOT)}")
