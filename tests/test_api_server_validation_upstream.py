"""Issue 41, item 3: upstream's validation test cases (tests/fixtures/upstream_validation/) through
gangplan's loader: the same accept / refuse decision, at the same field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects

FIXTURES = Path(__file__).parent / "fixtures" / "upstream_validation"
POD_LEVEL = "validatePodResourceRequirements"


def _cases():
    for path in sorted(FIXTURES.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for case in doc["cases"]:
            yield pytest.param(
                doc["source"], case, id=f"{doc['source']['function']}: {case['name']}"
            )


def _pod(case: dict) -> dict:
    container = {"name": "c", "image": "busybox"}
    spec: dict = {"containers": [container]}
    if case["validate_fn"] == POD_LEVEL:
        spec["resources"] = case["requirements"]
    else:
        container["resources"] = case["requirements"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
    }


KNOWN_DIFFERENCES = {
    # A negative container quantity is refused by gangplan's quantity reading first
    # (gangplan/io/fields.py, tests/test_bad_input.py pins it) at `...limits.cpu`, "is negative":
    # same decision, the key written with a dot.
    "Resource CPU invalid",
    "Resource Requests CPU invalid",
    "Resource Memory invalid",
}


def _gangplan_path(source: dict, case: dict) -> str:
    """upstream's path, under the test's root, as the field of the Pod the case becomes."""
    root, field = source["root_path"], case["upstream_field"]
    assert field == root or field.startswith((root + ".", root + "[")), field
    rest = field[len(root) :]
    if root == "containers":
        return "spec.containers" + rest
    return (
        "spec.resources" if case["validate_fn"] == POD_LEVEL else "spec.containers[0].resources"
    ) + rest


def test_every_fixture_names_its_upstream_source():
    readme = (FIXTURES / "README.md").read_text()
    files = sorted(FIXTURES.glob("*.yaml"))
    assert files
    for path in files:
        source = yaml.safe_load(path.read_text())["source"]
        assert source["repository"] == "kubernetes/kubernetes" and len(source["commit"]) == 40
        assert path.name in readme and source["function"] in readme and source["commit"] in readme


@pytest.mark.parametrize(("source", "case"), list(_cases()))
def test_upstream_case_gets_upstreams_outcome_at_upstreams_field(source, case):
    if case["expect"] == "accept":
        cluster = load_objects([_pod(case)])
        assert [p.name for p in cluster.pods] == ["p"]
        return
    with pytest.raises(SnapshotError) as info:
        load_objects([_pod(case)])
    e = info.value
    want = _gangplan_path(source, case)
    assert e.obj == "Pod/default/p"
    if case["name"] in KNOWN_DIFFERENCES:
        key = want.rsplit("[", 1)
        assert e.field == f"{key[0]}.{key[1].rstrip(']')}" and "is negative" in e.message, (
            e.field,
            e.message,
        )
        return
    # The same field, or the entry of the map upstream names (see the README).
    assert e.field == want or (e.field or "").startswith(want + "["), (e.field, want)
    assert case["rule"] in e.message, e.message
