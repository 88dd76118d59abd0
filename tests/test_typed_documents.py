"""Issue 38, item 3: one document model from Result to suite row.

A :class:`~gangplan.solver.diff.Diff` holds its ``diff --json`` document and its attributes are
that document's fields; a ``diff --suite --json`` row is a :class:`SuiteRowDocument`; the
``inspect`` summary is one typed record (:class:`InspectDocument`) that the table view reads by
attribute. The printed JSON is what it was before (key order included)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

import gangplan as gp
from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.models.documents import DiffDocument, InspectDocument, SuiteDocument, SuiteRowDocument
from gangplan.render import render_summary
from gangplan.solver.suite import run_suite
from gangplan.summary import JSON_KEYS, inspect_json, inspect_summary, summarize

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"
runner = CliRunner()


def test_a_diff_is_its_document_and_dumps_it_without_assembling_it_again() -> None:
    cluster = load_snapshot(SHOWCASE / "two-gangs-compete.yaml")
    greedy = gp.solve(cluster, engine="greedy")
    d = gp.diff(cluster, greedy=greedy)
    assert isinstance(d.doc, DiffDocument) and d.document() is d.doc
    assert d.greedy is greedy and d.doc.greedy is greedy  # the Result is held, not copied
    assert (
        d.groups is d.doc.groups and d.proof is d.doc.optimal_proof and d.decisive is d.doc.decisive
    )
    assert d.kube_version == greedy.options.kube_version and d.warnings == list(greedy.warnings)
    assert d.to_dict() == d.doc.dump(context={"trace": "full"})
    bare = d.to_dict(with_results=False)
    assert "greedy" not in bare and "optimal" not in bare
    assert bare["seconds"] == round(d.seconds, 3)
    stripped = d.document(with_results=False)
    assert (
        stripped.greedy is None and stripped.optimal is None and d.doc.greedy is greedy
    )  # a copy: the Diff keeps its Results
    d.problems = ["set from Python"]  # an attribute set is the document's field: the JSON says it
    assert d.to_dict(with_results=False)["problems"] == ["set from Python"]


def test_suite_rows_are_suite_row_documents_and_print_as_the_hand_built_rows(
    tmp_path: Path,
) -> None:
    for name in ("two-gangs-compete.yaml", "gang-fits.yaml"):
        shutil.copy(SHOWCASE / name, tmp_path / name)
    rows = run_suite(tmp_path)
    docs = [r.document() for r in rows]
    assert all(
        isinstance(doc, SuiteRowDocument) and doc.diff is not None and doc.diff.greedy is None
        for doc in docs
    )
    hand = [
        {
            "scenario": r.scenario,
            "error": r.error,
            "expectations": r.expectations,
            "failures": r.failures,
            "seconds": round(r.seconds, 3),
            "diff": r.diff.to_dict(with_results=False) if r.diff else None,
        }
        for r in rows
    ]
    assert json.dumps([doc.dump() for doc in docs], indent=2) == json.dumps(hand, indent=2)
    res = runner.invoke(app, ["diff", "--suite", str(tmp_path), "--json"])
    printed = json.loads(res.stdout)
    assert [list(row) for row in printed] == [list(row) for row in hand]
    assert [list(row["diff"]) for row in printed] == [list(row["diff"]) for row in hand]
    SuiteDocument.model_validate(printed)  # extra keys refused


def test_the_inspect_summary_is_a_typed_record_and_its_json_is_unchanged() -> None:
    cluster = load_snapshot(SHOWCASE / "alibaba-1213")
    record = inspect_summary(cluster)
    assert isinstance(record, InspectDocument)
    data = summarize(cluster)
    # every key in its order; ``kueue`` only with Kueue objects (this snapshot has none)
    assert tuple(data) == tuple(k for k in JSON_KEYS if k != "kueue")
    assert data == inspect_json(record)
    assert InspectDocument.model_validate(data) == record
    kq = summarize(load_snapshot(SHOWCASE / "kueue-borrowing-limit.yaml"))
    assert tuple(kq) == JSON_KEYS
    many = [lv for lv in data["topology"]["levels"] if lv["domains"] > 24]
    assert many and all(
        "free" not in lv for lv in many
    )  # no free capacity for a level with many domains, not even null
    few = load_snapshot(SHOWCASE / "tas-rack-no-backtracking.yaml")
    assert any("free" in lv for lv in summarize(few)["topology"]["levels"])

    def shown(s) -> str:
        console = Console(width=120, record=True, file=io.StringIO())
        render_summary(console, s)
        return console.export_text()

    assert shown(record) == shown(
        data
    )  # the JSON dict (what ``inspect`` passes today) reads back into the record
    assert "Node shapes" in shown(record) and f"{record.counts.nodes} nodes" in shown(record)
