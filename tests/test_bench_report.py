"""The report holds the numbers the database holds: CSV and HTML tables read back and compared."""

from __future__ import annotations

import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from gangplan.bench.report import build_report
from gangplan.bench.runner import run_bench
from gangplan.bench.store import read_rows

SUITE = """\
apiVersion: gangplan.io/v1alpha1
kind: BenchSuite
metadata: {name: report}
spec:
  timeLimit: 5
  families:
  - name: mix
    generator: mixed
    params: {nodes: 8, gangs: 6, max_gang_size: 4}
    grid: {utilisation: [0.3, 0.7]}
    seeds: [0, 1, 2]
  - name: philly
    generator: philly
    params: {nodes: 8, jobs: 8, min_gpus: 2}
    seeds: [0, 1]
  - name: broken
    generator: philly
    params: {data_dir: /nonexistent}
  - name: showcase
    directory: %s
"""
SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"


class _Tables(HTMLParser):
    """Every <table id=...> of a page as a list of rows of cell texts (header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._current: str | None = None
        self._cell: list[str] | None = None
        self.images = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._current = a["id"]
            self.tables[self._current] = []
        elif tag == "tr" and self._current:
            self.tables[self._current].append([])
        elif tag in ("td", "th") and self._current:
            self._cell = []
        elif tag == "img" and (a.get("src") or "").startswith("data:image/png;base64,"):
            self.images += 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._current:
            self.tables[self._current][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._current = None


def _value(text: str) -> object:
    if text == "":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def html_tables(path: Path) -> tuple[dict[str, list[dict[str, object]]], int]:
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    out = {}
    for tid, rows in parser.tables.items():
        head, body = rows[0], rows[1:]
        out[tid] = [dict(zip(head, (_value(c) for c in r), strict=True)) for r in body]
    return out, parser.images


@pytest.fixture(scope="module")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bench")
    (d / "suite.yaml").write_text(SUITE % SHOWCASE)
    run_bench(d / "suite.yaml", d / "results.db", jobs=2, progress=False)
    return d / "results.db"


def _same(a: object, b: object) -> bool:
    if (
        a is None
        or b is None
        or (isinstance(a, float) and pd.isna(a))
        or (isinstance(b, float) and pd.isna(b))
    ):
        return (a is None or pd.isna(a)) and (b is None or pd.isna(b))
    return a == b


def test_the_html_and_csv_run_tables_hold_every_database_row_unchanged(
    bench_db: Path, tmp_path: Path
) -> None:
    index = build_report(bench_db, tmp_path / "rep")
    db = read_rows(bench_db)
    tables, images = html_tables(index)
    assert images == 4
    assert len(tables["runs"]) == len(db["runs"]) > 0
    for got, want in zip(tables["runs"], db["runs"], strict=True):
        for col, v in want.items():
            if col != "objective":  # JSON text, HTML-escaped in the page
                assert _same(got[col], v), (col, got[col], v)
    csv = pd.read_csv(tmp_path / "rep" / "runs.csv").to_dict("records")
    for got, want in zip(csv, db["runs"], strict=True):
        for col, v in want.items():
            assert _same(got[col], v), (col, got[col], v)


def test_the_snapshot_table_puts_both_engines_numbers_next_to_the_classification(
    bench_db: Path, tmp_path: Path
) -> None:
    index = build_report(bench_db, tmp_path / "rep")
    db = read_rows(bench_db)
    runs = {(r["task_id"], r["engine"]): r for r in db["runs"]}
    diffs = {r["task_id"]: r for r in db["diffs"]}
    tasks = {r["task_id"]: r for r in db["tasks"]}
    tables, _ = html_tables(index)
    csv = pd.read_csv(tmp_path / "rep" / "snapshots.csv").to_dict("records")
    for rows in (tables["snapshots"], csv):
        assert sorted(r["task_id"] for r in rows) == sorted(tasks)
        for r in rows:
            t = r["task_id"]
            assert r["status"] == tasks[t]["status"] and _same(r["nodes"], tasks[t]["nodes"])
            if t not in diffs:
                assert r["outcome"] == tasks[t]["status"] == "error"
                continue
            assert r["classification"] == r["outcome"] == diffs[t]["classification"]
            for engine in ("greedy", "exact"):
                for col in (
                    "admitted_groups",
                    "placed_gpus",
                    "placed_pods",
                    "violations",
                    "wall_seconds",
                ):
                    assert _same(r[f"{engine}_{col}"], runs[(t, engine)][col]), (t, engine, col)


def test_the_family_summary_counts_what_the_database_counts(bench_db: Path, tmp_path: Path) -> None:
    index = build_report(bench_db, tmp_path / "rep")
    conn = sqlite3.connect(bench_db)
    counts = dict(
        ((f, c), n)
        for f, c, n in conn.execute(
            "SELECT t.family, COALESCE(d.classification, t.status), COUNT(*) FROM tasks t LEFT JOIN diffs d USING (task_id) GROUP BY 1, 2"
        )
    )
    snapshots = dict(conn.execute("SELECT family, COUNT(*) FROM tasks GROUP BY family").fetchall())
    mean_admitted = dict(
        conn.execute(
            "SELECT t.family, AVG(r.admitted_groups) FROM runs r JOIN tasks t USING (task_id) WHERE r.engine = 'exact' GROUP BY 1"
        ).fetchall()
    )
    conn.close()
    tables, _ = html_tables(index)
    csv = pd.read_csv(tmp_path / "rep" / "families.csv").to_dict("records")
    for rows in (tables["families"], csv):
        assert (
            sorted(r["family"] for r in rows)
            == sorted(snapshots)
            == ["broken", "mix", "philly", "showcase"]
        )
        for r in rows:
            f = r["family"]
            assert r["snapshots"] == snapshots[f]
            assert r["failed"] == counts.get((f, "error"), 0)
            sub = counts.get((f, "greedy-suboptimal"), 0)
            assert r["greedy-suboptimal"] == sub
            if r["diffed"]:
                assert r["suboptimal_share"] == pytest.approx(sub / r["diffed"], abs=5e-5)
                assert r["exact_admitted_groups_mean"] == pytest.approx(mean_admitted[f], abs=5e-5)


def test_compare_shows_both_databases_side_by_side(bench_db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(bench_db.read_bytes())
    conn = sqlite3.connect(other)
    with conn:  # pretend the second run lost a snapshot, so the two columns differ
        conn.execute(
            "DELETE FROM runs WHERE task_id IN (SELECT task_id FROM tasks WHERE family = 'mix' LIMIT 1)"
        )
        conn.execute(
            "DELETE FROM diffs WHERE task_id IN (SELECT task_id FROM tasks WHERE family = 'mix' LIMIT 1)"
        )
        conn.execute(
            "DELETE FROM tasks WHERE task_id IN (SELECT task_id FROM tasks WHERE family = 'mix' LIMIT 1)"
        )
    conn.close()
    index = build_report(bench_db, tmp_path / "cmp", compare=other)
    tables, images = html_tables(index)
    mix = next(r for r in tables["compare-families"] if r["family"] == "mix")
    assert mix["snapshots_a"] == 6 and mix["snapshots_b"] == 5
    assert len(tables["compare-snapshots"]) == len(read_rows(other)["tasks"])
    assert len(tables["a-runs"]) == len(read_rows(bench_db)["runs"]) and len(
        tables["b-runs"]
    ) == len(read_rows(other)["runs"])
    assert images == 4
    assert (tmp_path / "cmp" / "compare_families.csv").is_file()


def test_the_report_is_the_same_bytes_when_built_twice(bench_db: Path, tmp_path: Path) -> None:
    a = build_report(bench_db, tmp_path / "a").parent
    b = build_report(bench_db, tmp_path / "b").parent
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_a_database_where_every_snapshot_failed_still_gives_a_report(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "apiVersion: gangplan.io/v1alpha1\nkind: BenchSuite\nspec:\n  families:\n"
        "  - {name: broken, generator: philly, params: {data_dir: /nonexistent}}\n"
    )
    run_bench(tmp_path / "suite.yaml", tmp_path / "r.db", progress=False)
    tables, images = html_tables(build_report(tmp_path / "r.db", tmp_path / "rep"))
    (row,) = tables["families"]
    assert (row["family"], row["snapshots"], row["failed"], row["diffed"]) == ("broken", 1, 1, 0)
    assert images == 4 and tables["runs"] == []
