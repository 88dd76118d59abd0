"""Issue 41: ``why --json`` has a schema (``gangplan schema why``, :class:`WhyDocument`), and what
``why --json`` prints is that document: every key typed, nothing the model does not know, for a
pod of a rack-held gang that failed, a placed pod of another, and a pod that never ran."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.models.documents import WhyDocument, json_schema

runner = CliRunner()
SNAPSHOT = "scenarios/showcase/tas-nvl72-fragmentation.yaml"


@pytest.mark.parametrize("pod", ["ml/train-0", "ml/eval-0"])
def test_why_json_is_the_why_document(pod):
    out = runner.invoke(app, ["why", SNAPSHOT, pod, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    doc = WhyDocument.model_validate(data)  # extra keys are refused
    assert doc.dump(exclude_unset=True) == data
    assert (
        doc.pod == pod
        and doc.kube_version == "1.37"
        and doc.outcome is not None
        and doc.cycle is not None
    )
    assert doc.placements and doc.placements[0].startswith("placements tried for group ")


def test_the_schema_names_every_key_why_prints():
    schema = json_schema("why")
    assert schema["$id"].endswith("/why-v1.json")
    assert set(schema["properties"]) == {
        "pod",
        "snapshot",
        "kubeVersion",
        "outcome",
        "context",
        "cycle",
        "details",
        "placements",
    }
    out = runner.invoke(app, ["schema", "why"])
    assert out.exit_code == 0 and json.loads(out.output) == schema
