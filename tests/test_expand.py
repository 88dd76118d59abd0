"""Jobs, JobSets and LeaderWorkerSets expand into what their controllers create.

Names, counts, labels and group policies are compared with the ``# expected expansion:`` notes of
the fixtures (tests/fixtures/foreign/{job,jobset,lws}, each citing the controller source); parts
upstream derives from hashes or random characters are matched by pattern (gangplan makes them
deterministic: gangplan/io/expand/naming.py). ``diff`` runs on every expanded snapshot.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.expand.env import EXPANDED_FROM
from gangplan.io.loader import load_objects, load_with_expansion
from gangplan.solver.diff import diff_snapshot

FOREIGN = Path(__file__).resolve().parent / "fixtures" / "foreign"
HASH = "[bcdfghjklmnpqrstvwxz2456789]"
runner = CliRunner()


def _by_kind(objects: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for o in objects:
        out.setdefault(o["kind"], []).append(o)
    return out


def test_a_gang_job_expands_into_the_workload_podgroup_and_indexed_pods_of_kep_5547() -> None:
    cluster, objs = load_with_expansion(FOREIGN / "job" / "gang-zone-topology.yaml")
    k = _by_kind(objs)
    assert [len(k[x]) for x in ("Workload", "PodGroup", "Pod")] == [1, 1, 4] and set(k) == {
        "Workload",
        "PodGroup",
        "Pod",
    }
    wl, pg = k["Workload"][0], k["PodGroup"][0]
    assert re.fullmatch(f"gang-trainer-{HASH}{{1,10}}", wl["metadata"]["name"])
    assert wl["metadata"]["ownerReferences"][0] | {"uid": None} == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "gang-trainer",
        "uid": None,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    template = {
        "name": "gang-trainer-pgt-0",
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
        "disruptionMode": {"all": {}},
    }
    assert wl["spec"] == {
        "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "gang-trainer"},
        "podGroupTemplates": [template],
    }
    assert re.fullmatch(
        f"{wl['metadata']['name']}-gang-trainer-pgt-0-{HASH}{{1,10}}", pg["metadata"]["name"]
    )
    assert [o["kind"] for o in pg["metadata"]["ownerReferences"]] == ["Job", "Workload"]
    assert pg["spec"]["workloadRef"] == {
        "workloadName": wl["metadata"]["name"],
        "templateName": "gang-trainer-pgt-0",
    }
    assert {
        x: pg["spec"][x] for x in ("schedulingPolicy", "schedulingConstraints", "disruptionMode")
    } == {x: template[x] for x in ("schedulingPolicy", "schedulingConstraints", "disruptionMode")}
    for i, pod in enumerate(k["Pod"]):
        meta = pod["metadata"]
        assert (
            re.fullmatch(f"gang-trainer-{i}-{HASH}{{5}}", meta["name"])
            and meta["generateName"] == f"gang-trainer-{i}-"
        )
        assert meta["labels"] == {
            "batch.kubernetes.io/job-name": "gang-trainer",
            "job-name": "gang-trainer",
            "batch.kubernetes.io/controller-uid": meta["labels"]["controller-uid"],
            "controller-uid": meta["labels"]["batch.kubernetes.io/controller-uid"],
            "batch.kubernetes.io/job-completion-index": str(i),
        }
        assert meta["annotations"] == {
            "batch.kubernetes.io/job-completion-index": str(i),
            EXPANDED_FROM: "Job/training/gang-trainer",
        }
        assert (
            pod["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]}
            and pod["spec"]["hostname"] == f"gang-trainer-{i}"
        )
    g = cluster.pod_groups[f"training/{pg['metadata']['name']}"]
    assert (g.policy, g.min_count, g.topology_key, g.disruption_mode, g.workload_ref) == (
        "gang",
        4,
        "topology.kubernetes.io/zone",
        "all",
        wl["metadata"]["name"],
    )
    assert (
        cluster.pod_by_key[f"training/{k['Pod'][0]['metadata']['name']}"].requests["nvidia.com/gpu"]
        == 1
    )


def test_a_job_without_scheduling_gets_a_basic_workload_and_non_indexed_pods() -> None:
    cluster, objs = load_with_expansion(FOREIGN / "job" / "basic-default.yaml")
    k = _by_kind(objs)
    assert k["Workload"][0]["spec"]["podGroupTemplates"] == [
        {"name": "batch-processor-pgt-0", "schedulingPolicy": {"basic": {}}}
    ]
    assert k["PodGroup"][0]["spec"]["schedulingPolicy"] == {"basic": {}}
    names = [p["metadata"]["name"] for p in k["Pod"]]
    assert len(names) == len(set(names)) == 10 and all(
        re.fullmatch(f"batch-processor-{HASH}{{5}}", n) for n in names
    )
    assert all(
        "batch.kubernetes.io/job-completion-index" not in p["metadata"]["labels"] for p in k["Pod"]
    )
    assert {p.pod_group for p in cluster.pending_pods} == {k["PodGroup"][0]["metadata"]["name"]}


JOBSET_TAGS = (
    "jobset-name",
    "jobset-uid",
    "replicatedjob-name",
    "restart-attempt",
    "replicatedjob-replicas",
    "global-replicas",
    "job-index",
    "job-key",
    "job-global-index",
    "group-name",
    "group-replicas",
    "job-group-index",
)


def test_a_jobset_expands_into_indexed_jobs_whose_pods_join_the_users_podgroup() -> None:
    import hashlib

    cluster, objs = load_with_expansion(FOREIGN / "jobset" / "gang-fits.yaml")
    k = _by_kind(objs)
    assert set(k) == {
        "Job",
        "Pod",
    }  # JobSet and (controller-owned, BYO) Jobs create no Workload/PodGroup
    assert [j["metadata"]["name"] for j in k["Job"]] == ["js-rj-0", "js-rj-1", "js-rj-2"]
    for j, job in enumerate(k["Job"]):
        tags = {
            f"jobset.sigs.k8s.io/{t}": job["metadata"]["labels"][f"jobset.sigs.k8s.io/{t}"]
            for t in JOBSET_TAGS
        }
        assert tags | {"jobset.sigs.k8s.io/jobset-uid": None} == {
            "jobset.sigs.k8s.io/jobset-name": "js",
            "jobset.sigs.k8s.io/jobset-uid": None,
            "jobset.sigs.k8s.io/replicatedjob-name": "rj",
            "jobset.sigs.k8s.io/restart-attempt": "0",
            "jobset.sigs.k8s.io/replicatedjob-replicas": "3",
            "jobset.sigs.k8s.io/global-replicas": "3",
            "jobset.sigs.k8s.io/job-index": str(j),
            "jobset.sigs.k8s.io/job-key": hashlib.sha1(f"default/js-rj-{j}".encode()).hexdigest(),
            "jobset.sigs.k8s.io/job-global-index": str(j),
            "jobset.sigs.k8s.io/group-name": "default",
            "jobset.sigs.k8s.io/group-replicas": "3",
            "jobset.sigs.k8s.io/job-group-index": str(j),
        }
        assert all(job["metadata"]["annotations"][t] == v for t, v in tags.items())
        assert (
            job["metadata"]["ownerReferences"][0]["kind"] == "JobSet"
            and job["spec"]["completionMode"] == "Indexed"
        )
        assert (
            job["spec"]["template"]["metadata"]["labels"] == tags
            and job["spec"]["template"]["spec"]["subdomain"] == "js"
        )
    names = [p["metadata"]["name"] for p in k["Pod"]]
    assert [n[:-6] for n in names] == [
        f"js-rj-{j}-{p}" for j in range(3) for p in range(2)
    ] and all(re.fullmatch(f".*-{HASH}{{5}}", n) for n in names)
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in k["Pod"]} == {
        "js-abc-workers-def"
    }
    assert all(
        p["metadata"]["labels"]["batch.kubernetes.io/job-name"] == p["metadata"]["name"][:7]
        for p in k["Pod"]
    )
    assert len(cluster.groups.node("default/js-abc-workers-def").members) == 6


def test_parallel_replicated_jobs_get_running_global_and_group_indexes_and_no_groups() -> None:
    cluster, objs = load_with_expansion(FOREIGN / "jobset" / "paralleljobs.yaml")
    k = _by_kind(objs)
    jobs = {j["metadata"]["name"]: j["metadata"]["labels"] for j in k["Job"]}
    assert list(jobs) == ["paralleljobs-workers-0", "paralleljobs-driver-0"]
    assert [
        (
            v["jobset.sigs.k8s.io/job-global-index"],
            v["jobset.sigs.k8s.io/job-group-index"],
            v["jobset.sigs.k8s.io/global-replicas"],
            v["jobset.sigs.k8s.io/group-replicas"],
            v["jobset.sigs.k8s.io/replicatedjob-replicas"],
        )
        for v in jobs.values()
    ] == [("0", "0", "2", "2", "1"), ("1", "1", "2", "2", "1")]
    assert [p["metadata"]["name"][:-6] for p in k["Pod"]] == [
        f"paralleljobs-workers-0-{i}" for i in range(4)
    ] + ["paralleljobs-driver-0-0"]
    assert (
        "Workload" not in k
        and "PodGroup" not in k
        and all(p.pod_group is None for p in cluster.pods)
    )
    assert any(
        "no Workload/PodGroup (controller owner JobSet owns them" in t for t in cluster.translations
    )


def test_a_leaderworkerset_expands_into_leaders_and_workers_of_statefulsets() -> None:
    cluster, objs = load_with_expansion(FOREIGN / "lws" / "lws-sample.yaml")
    k = _by_kind(objs)
    assert [s["metadata"]["name"] for s in k["StatefulSet"]] == ["leaderworkerset-sample"] + [
        f"leaderworkerset-sample-{g}" for g in range(3)
    ]
    assert k["StatefulSet"][0]["spec"]["replicas"] == 3 and [
        s["spec"]["replicas"] for s in k["StatefulSet"][1:]
    ] == [3, 3, 3]
    names = [p["metadata"]["name"] for p in k["Pod"]]
    assert names == [
        n
        for g in range(3)
        for n in [f"leaderworkerset-sample-{g}"]
        + [f"leaderworkerset-sample-{g}-{w}" for w in (1, 2, 3)]
    ]
    P = "leaderworkerset.sigs.k8s.io/"
    for pod in k["Pod"]:
        labels, ann = pod["metadata"]["labels"], pod["metadata"]["annotations"]
        g, _, w = pod["metadata"]["name"][len("leaderworkerset-sample-") :].partition("-")
        leader = f"leaderworkerset-sample-{g}"
        assert (
            labels[P + "name"],
            labels[P + "group-index"],
            labels[P + "worker-index"],
            ann[P + "size"],
        ) == ("leaderworkerset-sample", g, w or "0", "4")
        assert re.fullmatch("[0-9a-f]{40}", labels[P + "group-key"]) and re.fullmatch(
            "[0-9a-f]{10}", labels[P + "template-revision-hash"]
        )
        assert ann.get(P + "leader-name") == (leader if w else None)
        assert "scheduling.k8s.io/group-name" not in ann
    assert len({p["metadata"]["labels"][P + "group-key"] for p in k["Pod"]}) == 3
    assert "PodGroup" not in k and cluster.pod_groups == {}


def test_a_leaderworkerset_with_the_volcano_provider_gets_one_volcano_gang_per_group() -> None:
    cluster, objs = load_with_expansion(FOREIGN / "lws" / "lws-sample-volcano.yaml")
    k = _by_kind(objs)
    pgs = k["PodGroup"]
    assert [pg["apiVersion"] for pg in pgs] == ["scheduling.volcano.sh/v1beta1"] * 2
    rev = k["Pod"][0]["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/template-revision-hash"]
    assert [pg["metadata"]["name"] for pg in pgs] == [
        f"lws-sample-volcano-{g}-{rev}" for g in range(2)
    ]
    assert [pg["spec"] for pg in pgs] == [{"minMember": 4, "minResources": {"cpu": "200m"}}] * 2
    assert [pg["metadata"]["ownerReferences"][0]["name"] for pg in pgs] == [
        "lws-sample-volcano-0",
        "lws-sample-volcano-1",
    ]
    assert {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in k["Pod"]} == {
        pg["metadata"]["name"] for pg in pgs
    }
    assert {
        key: (g.policy, g.min_count, len(cluster.groups.node(key).members))
        for key, g in cluster.pod_groups.items()
    } == {f"default/{pg['metadata']['name']}": ("gang", 4, 4) for pg in pgs}
    no = load_objects(
        [
            {
                **o,
                "metadata": {
                    **o["metadata"],
                    "annotations": {"gangplan.io/lws-gang-provider": "none"},
                },
            }
            if o.get("kind") == "LeaderWorkerSet"
            else o
            for o in yaml.safe_load_all((FOREIGN / "lws" / "lws-sample-volcano.yaml").read_text())
            if o
        ]
    )
    assert no.pod_groups == {} and len(no.pending_pods) == 8


@pytest.mark.parametrize(
    "rel",
    [
        "job/gang-zone-topology.yaml",
        "jobset/gang-fits.yaml",
        "jobset/paralleljobs.yaml",
        "lws/lws-sample-volcano.yaml",
        "kueue/tas-job-required-fits.yaml",
    ],
)
def test_an_expanded_snapshot_is_not_expanded_twice_and_diff_runs_on_it(
    rel: str, tmp_path: Path
) -> None:
    path = FOREIGN / rel
    cluster, objs = load_with_expansion(path)
    res = runner.invoke(app, ["expand", str(path)])
    assert res.exit_code == 0, res.output
    printed = [d for d in yaml.safe_load_all(res.stdout) if d]
    assert (
        printed == objs and res.stdout == runner.invoke(app, ["expand", str(path)]).stdout
    )  # deterministic
    assert all(line.startswith("note: ") for line in res.stderr.splitlines())
    both = tmp_path / "both"
    both.mkdir()
    (both / "a-original.yaml").write_text(path.read_text())
    (both / "b-expanded.yaml").write_text(res.stdout)
    again, more = load_with_expansion(both)
    assert more == [] and any(
        t.startswith("not expanded:") and "in the snapshot" in t for t in again.translations
    )
    assert sorted(p.key for p in again.pods) == sorted(p.key for p in cluster.pods)
    assert {p.key: p.pod_group for p in again.pods} == {p.key: p.pod_group for p in cluster.pods}
    d = diff_snapshot(cluster, snapshot=str(path), time_limit=2, probe_time_limit=1, workers=1)
    assert d.classification in ("identical", "tie-break", "equivalent") and d.exit_code == 0
    assert d.greedy.translations == list(cluster.translations)


def test_a_jobset_whose_jobs_exist_is_not_expanded_but_its_jobs_are() -> None:
    js = next(
        o
        for o in yaml.safe_load_all((FOREIGN / "jobset" / "paralleljobs.yaml").read_text())
        if o and o["kind"] == "JobSet"
    )
    _, objs = load_with_expansion(FOREIGN / "jobset" / "paralleljobs.yaml")
    jobs = [o for o in objs if o["kind"] == "Job"]
    cluster = load_objects([js, *jobs])
    assert len(cluster.pending_pods) == 5
    assert any(
        t.startswith(
            "not expanded: 1 JobSet (jobset.x-k8s.io/v1alpha2), its Jobs are in the snapshot"
        )
        for t in cluster.translations
    )


@pytest.mark.parametrize(
    "job, message",
    [
        (
            {
                "spec": {
                    "parallelism": 2,
                    "scheduling": {"schedulingPolicy": {"gang": {"minCount": 3}}},
                }
            },
            "spec.scheduling.schedulingPolicy.gang.minCount: must not exceed spec.parallelism (2), got 3",
        ),
        (
            {
                "spec": {
                    "scheduling": {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}}
                }
            },
            "spec.scheduling.disruptionMode: all is invalid with the basic scheduling policy",
        ),
        (
            {"spec": {"parallelism": "two"}},
            "spec.parallelism: expected an integer, got string 'two'",
        ),
        (
            {"spec": {"completionMode": "Indexed"}},
            "spec.completions: an Indexed Job needs completions",
        ),
        ({"spec": {"template": None}}, "spec.template: required field is missing"),
    ],
)
def test_bad_jobs_exit_2_naming_file_object_and_field(
    job: dict, message: str, tmp_path: Path
) -> None:
    base = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ml"},
        "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    base["spec"] = {**base["spec"], **job["spec"]}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(base))
    for cmd in (["expand", str(path)], ["solve", str(path)]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 2, res.output
        assert (
            f"{path}: Job/ml/j: {message}" in res.stderr.replace("\n", "")
            and "Traceback" not in res.stderr
        )


def test_job_status_decides_how_many_pods_and_whether_groups_are_created() -> None:
    def job(**spec_status) -> dict:
        status = spec_status.pop("status", {})
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "ml"},
            "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}, **spec_status},
            "status": status,
        }

    def expand(obj: dict) -> dict[str, int]:
        from gangplan.io.expand import expand as run

        out = run([("x.yaml", obj)], pods=[], workloads=[])
        return {
            k: sum(1 for _, o in out.objects if o["kind"] == k)
            for k in ("Workload", "PodGroup", "Pod")
        }

    assert expand(job(parallelism=3, completions=5, status={"succeeded": 3})) == {
        "Workload": 0,
        "PodGroup": 0,
        "Pod": 2,
    }
    assert expand(
        job(
            parallelism=3,
            completions=5,
            completionMode="Indexed",
            status={"completedIndexes": "0,2-3"},
        )
    ) == {"Workload": 1, "PodGroup": 1, "Pod": 2}
    assert expand(job(parallelism=2, suspend=True)) == {"Workload": 0, "PodGroup": 0, "Pod": 0}
    assert expand(
        job(parallelism=2, status={"conditions": [{"type": "Complete", "status": "True"}]})
    ) == {"Workload": 0, "PodGroup": 0, "Pod": 0}
    owned = job(parallelism=2)
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "uid": "u", "controller": True}
    ]
    assert expand(owned) == {
        "Workload": 1,
        "PodGroup": 1,
        "Pod": 2,
    }  # KEP-5547: a CronJob's Job is standalone
    byo = job(parallelism=2)
    byo["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "mine"}
    assert expand(byo) == {"Workload": 0, "PodGroup": 0, "Pod": 2}


def test_a_delegating_parent_gets_one_podgroup_per_job_from_its_workload_template() -> None:
    workload = {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "ml"},
        "spec": {
            "controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "js"},
            "podGroupTemplates": [
                {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}
            ],
        },
    }
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ml"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "rj",
                    "replicas": 2,
                    "template": {
                        "metadata": {
                            "annotations": {"scheduling.k8s.io/group-template-name": "workers"}
                        },
                        "spec": {
                            "parallelism": 2,
                            "completions": 2,
                            "template": {"spec": {"containers": [{"name": "c"}]}},
                        },
                    },
                }
            ]
        },
    }
    cluster = load_objects([workload, jobset])
    ((key, g),) = cluster.pod_groups.items()
    assert re.fullmatch(f"ml/wl-workers-{HASH}+", key) and (
        g.policy,
        g.min_count,
        g.workload_ref,
    ) == ("gang", 2, "wl")
    assert [p.name[:-6] for p in cluster.pods] == ["js-rj-0-0", "js-rj-0-1"] and {
        p.pod_group for p in cluster.pods
    } == {key[3:]}
    # Both Jobs map to the same template and computePodGroupName hashes only the Workload and
    # template names: the second Job's create fails upstream (AlreadyExists), so it gets no pods.
    assert [w.split(": ", 1)[0] for w in cluster.warnings] == [
        "Job metadata.annotations.scheduling.k8s.io/group-template-name"
    ]
    assert (
        "1 object (ml/js-rj-1): its PodGroup name" in cluster.warnings[0]
        and "taken by the PodGroup of Job/ml/js-rj-0" in cluster.warnings[0]
    )
    assert cluster.translations[0].endswith(
        "[1 x a PodGroup for template 'workers' of the parent's Workload wl; "
        "1 x no pods: its delegated PodGroup's name is taken by another Job's (no pods)]: ml/js"
    )
