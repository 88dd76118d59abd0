"""``diff --plan``: Bindings ``kubectl create -f`` accepts, and a ``plan.sh`` that works as written.

Every object is checked against the upstream type definitions (kubernetes/kubernetes
``staging/src/k8s.io/api``):

* ``core/v1/types.go`` ``type Binding struct { metav1.TypeMeta; metav1.ObjectMeta
  `json:"metadata,omitempty"`; Target ObjectReference `json:"target"` }``: ``target`` is the one
  required field; ``ObjectReference`` has kind, namespace, name, uid, apiVersion,
  resourceVersion, fieldPath.
* ``policy/v1/types.go`` ``type Eviction struct { metav1.TypeMeta; metav1.ObjectMeta
  `json:"metadata,omitempty"` ("describes the pod that is being evicted"); DeleteOptions
  *metav1.DeleteOptions `json:"deleteOptions,omitempty"` }``, posted to ``pods/<name>/eviction``.
* ``core/v1/types.go`` ``PodStatus.NominatedNodeName `json:"nominatedNodeName,omitempty"```: a
  status field, so it is patched through the ``status`` subresource.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.io.plan import binding, eviction, plan_objects, script_path, write_plan
from gangplan.models.result import Result, Status
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase"
PREEMPTION = ROOT / "scenarios" / "upstream-preemption"
runner = CliRunner()

OBJECT_META_USED = {"name", "namespace"}
OBJECT_REFERENCE_FIELDS = {
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
}
BINDING_FIELDS = {"apiVersion", "kind", "metadata", "target"}
EVICTION_FIELDS = {"apiVersion", "kind", "metadata", "deleteOptions"}
DNS_LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-.")


def check_binding(obj: dict) -> None:
    """core/v1 Binding: TypeMeta v1/Binding, metadata names the pod, target (required) the Node."""
    assert set(obj) <= BINDING_FIELDS and "target" in obj, obj
    assert (obj["apiVersion"], obj["kind"]) == ("v1", "Binding")
    assert set(obj["metadata"]) == OBJECT_META_USED
    assert all(set(v) <= DNS_LABEL_CHARS and v for v in obj["metadata"].values())
    target = obj["target"]
    assert set(target) <= OBJECT_REFERENCE_FIELDS
    assert (target["apiVersion"], target["kind"]) == ("v1", "Node") and target["name"]


def check_eviction(obj: dict, ns: str, name: str) -> None:
    """policy/v1 Eviction: TypeMeta policy/v1/Eviction, metadata names the evicted pod."""
    assert set(obj) <= EVICTION_FIELDS, obj
    assert (obj["apiVersion"], obj["kind"]) == ("policy/v1", "Eviction")
    assert obj["metadata"] == {"name": name, "namespace": ns}


def _fake_kubectl(bin_dir: Path, log: Path) -> None:
    """A ``kubectl`` that records each call (argv, and stdin when the last argument is ``-``)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "kubectl"
    record = "import json, sys; print(json.dumps({'stdin': sys.argv[1], 'argv': sys.argv[2:]}))"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "set -euo pipefail\n"
        "stdin=''\n"
        'if [ "${*: -1}" = "-" ]; then stdin="$(cat)"; fi\n'
        f'{shlex.quote(sys.executable)} -c {shlex.quote(record)} "$stdin" "$@" >> {shlex.quote(str(log))}\n'
    )
    script.chmod(0o755)


def run_plan_script(sh: Path, tmp: Path) -> list[dict]:
    """``bash -n`` the script, then run it with the fake kubectl; return the recorded calls."""
    assert subprocess.run(["bash", "-n", str(sh)], capture_output=True).returncode == 0
    log = tmp / "kubectl.log"
    _fake_kubectl(tmp / "bin", log)
    env = dict(os.environ, PATH=f"{tmp / 'bin'}:{os.environ['PATH']}")
    done = subprocess.run(["bash", str(sh)], capture_output=True, text=True, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def check_plan(snapshot: Path, tmp: Path, *extra: str) -> tuple[Result, list[dict], list[dict]]:
    """Run ``diff --plan`` and check every object and the script; returns (optimal, docs, calls)."""
    plan = tmp / "plan.yaml"
    res = runner.invoke(app, ["diff", str(snapshot), "--plan", str(plan), "--json", *extra])
    assert res.exit_code in (0, 3), res.output
    optimal = Result.model_validate(json.loads(res.stdout)["optimal"])
    cluster = load_snapshot(snapshot)
    assert validate(cluster, optimal) == []
    docs = [d for d in yaml.safe_load_all(plan.read_text()) if d]
    for d in docs:
        check_binding(d)
    sh = script_path(plan)
    assert sh == tmp / "plan.sh" and os.access(sh, os.X_OK)
    calls = run_plan_script(sh, tmp)
    evictions = [c for c in calls if c["argv"][:2] == ["create", "--raw"]]
    for c, key in zip(evictions, sorted(optimal.victims), strict=True):
        ns, name = key.split("/")
        assert c["argv"] == [
            "create",
            "--raw",
            f"/api/v1/namespaces/{ns}/pods/{name}/eviction",
            "-f",
            "-",
        ]
        check_eviction(json.loads(c["stdin"]), ns, name)
    return optimal, docs, calls


def test_design_card_plan_binds_both_pods_of_the_gang_where_the_optimum_puts_them(
    tmp_path: Path,
) -> None:
    optimal, docs, calls = check_plan(SHOWCASE / "design-card-a100.yaml", tmp_path)
    assert {
        (d["metadata"]["namespace"] + "/" + d["metadata"]["name"], d["target"]["name"])
        for d in docs
    } == set(optimal.placements().items())
    assert {d["target"]["name"] for d in docs} == {"n2"}
    assert [c["argv"] for c in calls] == [["create", "-f", "plan.yaml"]]


def test_tas_plan_binds_every_pod_of_both_gangs(tmp_path: Path) -> None:
    optimal, docs, calls = check_plan(SHOWCASE / "tas-rack-no-backtracking.yaml", tmp_path)
    assert len(docs) == len(optimal.placements()) == 8
    assert all(
        d["target"]["name"]
        == optimal.pods[f"{d['metadata']['namespace']}/{d['metadata']['name']}"].node
        for d in docs
    )
    assert [c["argv"] for c in calls] == [["create", "-f", "plan.yaml"]]


def test_nominate_plan_patches_the_status_subresource_and_writes_no_binding(tmp_path: Path) -> None:
    optimal, docs, calls = check_plan(SHOWCASE / "two-gangs-compete.yaml", tmp_path, "--nominate")
    assert docs == []
    patches = [c["argv"] for c in calls]
    assert len(patches) == len(optimal.placements()) == 4
    for argv in patches:
        assert (
            argv[:2] == ["patch", "pod"]
            and "--subresource=status" in argv
            and "--type=merge" in argv
        )
        ns = argv[argv.index("-n") + 1]
        node = json.loads(argv[argv.index("-p") + 1])["status"]["nominatedNodeName"]
        assert optimal.pods[f"{ns}/{argv[2]}"].node == node


def test_preemption_plan_evicts_the_victims_first_then_waits_then_binds(tmp_path: Path) -> None:
    optimal, docs, calls = check_plan(
        PREEMPTION / "podgroup-11-partial-wap.yaml", tmp_path, "--preemption"
    )
    assert optimal.victims == ["podgroup-test/very-low1", "podgroup-test/very-low2"]
    # nominated pods (their nodes wait for victims) get a Binding too: nominations only with --nominate
    assert any(o.nominated for o in optimal.pods.values())
    assert len(docs) == len(optimal.placements())
    verbs = [c["argv"][0] + (" --raw" if c["argv"][1] == "--raw" else "") for c in calls]
    assert verbs == ["create --raw", "create --raw", "wait", "wait", "create"]
    assert calls[2]["argv"] == [
        "wait",
        "--for=delete",
        "pod/very-low1",
        "-n",
        "podgroup-test",
        "--timeout=300s",
    ]
    assert calls[-1]["argv"] == ["create", "-f", "plan.yaml"]


def test_showcase_preemption_plan_evicts_the_optimums_victims_then_binds(tmp_path: Path) -> None:
    optimal, docs, calls = check_plan(
        SHOWCASE / "preempt-all-mode-unit.yaml", tmp_path
    )  # preemption: on, as the profile
    assert optimal.victims == ["batch/batch-a", "batch/batch-b"]
    assert [c["argv"][:2] for c in calls] == [["create", "--raw"]] * 2 + [
        ["wait", "--for=delete"]
    ] * 2 + [["create", "-f"]]
    bound = {
        (d["metadata"]["namespace"] + "/" + d["metadata"]["name"]): d["target"]["name"]
        for d in docs
    }
    assert bound == optimal.placements() and bound


def test_preemption_with_nominate_evicts_then_patches(tmp_path: Path) -> None:
    optimal, docs, calls = check_plan(
        PREEMPTION / "podgroup-11-partial-wap.yaml", tmp_path, "--preemption", "--nominate"
    )
    assert docs == []
    verbs = [c["argv"][0] for c in calls]
    assert verbs == ["create", "create", "wait", "wait"] + ["patch"] * len(optimal.placements())


def _result(placements: dict[str, str]) -> Result:
    cluster = load_snapshot(SHOWCASE / "design-card-a100.yaml")
    return build_result(cluster, engine="manual", status=Status.HEURISTIC, placements=placements)


def test_plan_objects_are_bindings_and_victims_are_not_objects_of_the_yaml(tmp_path: Path) -> None:
    r = _result({"ml/a": "n2", "ml/b": "n2"}).model_copy(update={"victims": ["ml/old"]})
    objs = plan_objects(r)
    assert objs[0] == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "a", "namespace": "ml"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n2"},
    }
    assert [o["kind"] for o in objs] == ["Binding", "Binding"]
    assert plan_objects(r, nominate=True) == []
    plan = write_plan(r, tmp_path / "out" / "my-plan.yaml")
    assert plan.evictions == ["ml/old"] and len(plan.bindings) == 2
    text = (tmp_path / "out" / "my-plan.sh").read_text()
    assert (
        text.index("/api/v1/namespaces/ml/pods/old/eviction")
        < text.index("kubectl wait")
        < text.index("kubectl create -f my-plan.yaml")
    )
    check_eviction(eviction("ml/old"), "ml", "old")
    check_binding(binding("ml/a", "n2"))


def test_an_empty_plan_is_a_valid_script_that_does_nothing(tmp_path: Path) -> None:
    r = _result({})
    write_plan(r, tmp_path / "plan.yaml")
    assert [d for d in yaml.safe_load_all((tmp_path / "plan.yaml").read_text()) if d] == []
    assert run_plan_script(tmp_path / "plan.sh", tmp_path) == []


def test_nominate_without_plan_is_bad_input() -> None:
    res = runner.invoke(app, ["diff", str(SHOWCASE / "design-card-a100.yaml"), "--nominate"])
    assert res.exit_code == 2 and "--plan" in res.output
