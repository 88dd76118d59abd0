"""Issue 41, item 4: the diff's sentences cut long lists ("... and N more") and say where the whole
list is; the JSON document's own fields hold every name (gangplan/solver/diff/evidence.py)."""

from __future__ import annotations

import re

from gangplan.models.documents import Admission, DiffDocument, PreemptionEvidence
from gangplan.solver.diff.evidence import DIFFERING, SHOWN, name_list


def test_a_short_list_is_whole_and_has_no_pointer():
    assert name_list([]) == "none"
    assert name_list(["a", "b"]) == "a, b"
    assert name_list([f"g{i}" for i in range(SHOWN)]) == ", ".join(f"g{i}" for i in range(SHOWN))


def test_a_cut_list_counts_the_rest_and_points_to_the_json_field():
    keys = [f"ns/g{i}" for i in range(9)]
    text = name_list(keys, full="admission.onlyOptimal")
    shown = text.split(" and ")[0].split(", ")
    assert shown == keys[:SHOWN]
    m = re.search(r"and (\d+) more; all (\d+) in diff --json, admission\.onlyOptimal$", text)
    assert m and int(m.group(1)) == len(keys) - SHOWN and int(m.group(2)) == len(keys)


def test_the_fields_named_exist_in_the_json_document_and_are_lists():
    doc = DiffDocument.model_json_schema(by_alias=True)
    props = doc["properties"]
    assert "groups" in props and "singlePods" in props
    assert "onlyOptimal" in Admission.model_json_schema(by_alias=True)["properties"]
    assert (
        PreemptionEvidence.model_json_schema(by_alias=True)["properties"]["nodes"]["type"]
        == "array"
    )
    assert DIFFERING.startswith("groups[] / singlePods[]")
