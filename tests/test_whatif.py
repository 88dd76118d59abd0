"""``gangplan whatif`` and the overlay it lays variants with (gangplan/io/overlay.py).

Every diff a test makes has both Results checked by the validator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io import overlay as ov
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_pairs
from gangplan.models.documents import WhatIfDocument
from gangplan.solver.validate import validate
from gangplan.solver.whatif import run_whatif

ROOT = Path(__file__).resolve().parents[1]
GB200 = ROOT / "scenarios" / "showcase" / "tas-nvl72-fragmentation.yaml"
TRAYS = ROOT / "scenarios" / "tutorials" / "eight-more-trays.yaml"

BASE = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, rack: a}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2, rack: b}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: ml}
spec:
  nodeName: n2
  containers: [{name: c, resources: {requests: {cpu: "6"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, resources: {requests: {cpu: "4"}}}]
"""


def _names(layer: ov.Layer, kind: str) -> list[str]:
    return [o["metadata"]["name"] for _, o in layer.objects if o["kind"] == kind]


def _checked(rows) -> None:
    for r in rows:
        assert (
            validate(r.cluster, r.diff.greedy) == [] and validate(r.cluster, r.diff.optimal) == []
        ), r.variant


def test_an_object_with_the_same_kind_namespace_and_name_replaces_others_are_added(write_text):
    base = ov.read_layer(write_text(BASE))
    variant = ov.read_layer(
        write_text(
            """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "16", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}
status: {allocatable: {cpu: "2", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, resources: {requests: {cpu: "12"}}}]
""",
            "variant.yaml",
        )
    )
    merged = ov.overlay(base, variant)
    assert _names(merged, "Node") == ["n1", "n2", "n3"]
    cluster = load_pairs(merged.objects, sources=("base", "variant"))
    assert {n.name: n.allocatable["cpu"] for n in cluster.nodes} == {
        "n1": 16000,
        "n2": 8000,
        "n3": 2000,
    }
    # the pod without a namespace is default/web: the variant's default/web replaced it
    assert [p.requests["cpu"] for p in cluster.pods if p.name == "web"] == [12000]


def test_a_scheduler_configuration_replaces_the_profile_and_remove_drops_its_namesake(write_text):
    base = ov.read_layer(
        write_text(
            BASE
            + """---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: LeastAllocated}}
"""
        )
    )
    variant = ov.read_layer(
        write_text(
            """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: ml, annotations: {gangplan.io/remove: "true"}}
""",
            "variant.yaml",
        )
    )
    merged = ov.overlay(base, variant)
    cluster = load_pairs(merged.objects, sources=("b", "v"))
    assert cluster.profile.fit_strategy == "MostAllocated"
    assert [p.name for p in cluster.pods] == ["web"]


def test_removing_what_the_snapshot_does_not_hold_is_bad_input_naming_it(write_text):
    base = ov.read_layer(write_text(BASE))
    variant = ov.read_layer(
        write_text(
            """
apiVersion: v1
kind: Node
metadata: {name: n9, annotations: {gangplan.io/remove: "true"}}
""",
            "typo.yaml",
        )
    )
    with pytest.raises(SnapshotError) as info:
        ov.overlay(base, variant)
    assert "typo.yaml" in str(info.value) and "no Node n9 in the snapshot to remove" in str(
        info.value
    )


def test_the_shorthands_build_the_variants_they_name(write_text):
    base = ov.read_layer(write_text(BASE))
    assert (
        load_pairs(
            ov.overlay(base, ov.scoring(base, "MostAllocated")).objects, sources=("b",)
        ).profile.fit_strategy
        == "MostAllocated"
    )
    added = load_pairs(ov.overlay(base, ov.add_nodes(base, 3, "n1")).objects, sources=("b",))
    assert [n.name for n in added.nodes] == [
        "n1",
        "n2",
        "n1-whatif-1",
        "n1-whatif-2",
        "n1-whatif-3",
    ]
    assert (
        added.nodes[-1].labels["kubernetes.io/hostname"] == "n1-whatif-3"
        and added.nodes[-1].labels["rack"] == "a"
    )
    drained = ov.drain(base, "rack=b")
    assert drained.name == "drain rack=b" and drained.notes == [
        "1 node(s) cordoned, 1 bound pod(s) evicted (not recreated)"
    ]
    cluster = load_pairs(ov.overlay(base, drained).objects, sources=("b",))
    assert [n.name for n in cluster.nodes if n.unschedulable] == ["n2"] and [
        p.name for p in cluster.pods
    ] == ["web"]
    for bad in (
        lambda: ov.scoring(base, "Balanced"),
        lambda: ov.add_nodes(base, 2, "n7"),
        lambda: ov.drain(base, "rack=z"),
    ):
        with pytest.raises(SnapshotError):
            bad()


def test_whatif_on_the_gb200_showcase_more_trays_let_kube_scheduler_admit_both_gangs():
    base = ov.read_layer(GB200)
    rows = run_whatif(
        base,
        [ov.read_layer(TRAYS), ov.scoring(base, "MostAllocated")],
        sources=(str(GB200),),
        workers=1,
    )
    _checked(rows)
    docs = {r.variant: r.document() for r in rows}
    assert list(docs) == ["snapshot", "eight-more-trays.yaml", "scoring=MostAllocated"]
    assert (
        docs["snapshot"].greedy_admitted,
        docs["snapshot"].optimal_admitted,
        docs["snapshot"].classification,
    ) == (1, 2, "greedy-suboptimal")
    assert docs["snapshot"].decisive == "placement"
    assert (
        docs["eight-more-trays.yaml"].greedy_admitted,
        docs["eight-more-trays.yaml"].classification,
    ) == (2, "identical")
    assert (
        docs["scoring=MostAllocated"].greedy_admitted == 1
    )  # the rack is chosen before any node score
    # 68 GPUs free; eval takes 8, train 32
    assert (docs["snapshot"].greedy_idle_gpus, docs["snapshot"].optimal_idle_gpus) == (60, 28)
    assert docs["eight-more-trays.yaml"].greedy_idle_gpus == 68 + 32 - 40


def test_the_cli_prints_one_row_per_variant_and_json_that_matches_its_schema():
    runner = CliRunner()
    args = [
        "whatif",
        str(GB200),
        str(TRAYS),
        "--scoring",
        "MostAllocated",
        "--add-nodes",
        "8",
        "--like",
        "nvl72-b-tray-00",
        "--drain",
        "topology.kubernetes.io/rack=nvl72-b",
        "--workers",
        "1",
    ]
    table = runner.invoke(app, args, env={"COLUMNS": "100"})
    assert table.exit_code == 0, table.output
    for name in (
        "snapshot",
        "eight-more-trays.yaml",
        "scoring=MostAllocated",
        "+8 like nvl72-b-tray-00",
        "drain rack=nvl72-b",
    ):
        assert name in table.stdout
    assert "drain rack=nvl72-b: 18 node(s) cordoned, 18 bound pod(s) evicted" in table.stdout
    first = runner.invoke(app, [*args, "--json"])
    second = runner.invoke(app, [*args, "--json"])
    assert first.exit_code == 0 and first.stdout == second.stdout  # deterministic
    rows = WhatIfDocument.model_validate(json.loads(first.stdout)).root
    assert [(r.variant, r.greedy_admitted, r.optimal_admitted) for r in rows] == [
        ("snapshot", 1, 2),
        ("eight-more-trays.yaml", 2, 2),
        ("scoring=MostAllocated", 1, 2),
        ("+8 like nvl72-b-tray-00", 2, 2),
        ("drain rack=nvl72-b", 1, 1),
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "no variant"),
        (["--add-nodes", "2"], "--add-nodes N and --like NODE go together"),
        (["--add-nodes", "2", "--like", "nope"], "no node 'nope' in the snapshot"),
        (["--drain", "rack=nowhere"], "no node labelled rack=nowhere"),
        (["does-not-exist.yaml"], "no such file or directory"),
    ],
)
def test_bad_whatif_input_exits_2_naming_it(args, message):
    result = CliRunner().invoke(app, ["whatif", str(GB200), *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_strict_refuses_a_variant_with_an_unknown_field(write_text):
    variant = write_text(
        """
apiVersion: v1
kind: Pod
metadata: {name: extra, namespace: ml}
spec:
  nodeSelecter: {rack: a}
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
""",
        "typo.yaml",
    )
    loose = CliRunner().invoke(app, ["whatif", str(GB200), str(variant), "--workers", "1"])
    assert loose.exit_code == 0, loose.output
    assert 'unknown field "spec.nodeSelecter"' in loose.stderr and "[typo.yaml]" in loose.stderr
    strict = CliRunner().invoke(app, ["whatif", str(GB200), str(variant), "--strict"])
    assert strict.exit_code == 2 and 'unknown field "spec.nodeSelecter"' in strict.stderr, (
        strict.output
    )


def test_a_removed_node_takes_its_bound_pods_along(write_text):
    base = ov.read_layer(write_text(BASE))
    variant = ov.read_layer(
        write_text(
            """
apiVersion: v1
kind: Node
metadata: {name: n2, annotations: {gangplan.io/remove: "true"}}
""",
            "gone.yaml",
        )
    )
    merged = ov.overlay(base, variant)
    assert _names(merged, "Node") == ["n1"] and _names(merged, "Pod") == ["web"]
    assert merged.notes == ["removing 1 node(s) also removed the 1 pod(s) bound to them"]
    assert [p.name for p in load_pairs(merged.objects, sources=("b",)).pods] == ["web"]
