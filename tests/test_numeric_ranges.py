"""Numbers at the edges of Kubernetes' ranges are bad input (exit 2, file / object / field named).

Issue 17: a structural fuzz ended in internal errors (exit 70) where values beyond what the API
server or kube-scheduler's config validation accept reached numpy or CP-SAT. One case per crash site
the issue lists (quantities beyond int64 in allocatable pods / a cpu request / nvidia.com/gpu,
``minCount: 2**63``, a scoring-strategy weight of 9.999e+29, a huge plugin weight, preferred
node-affinity and pod-affinity term weights, ``maxSkew: 2**63 - 1``), the once-lenient fields
(priority, hostPort, sizeBytes, minDomains), and the values just inside each range, which load.
"""

from __future__ import annotations

import textwrap

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_snapshot

runner = CliRunner()

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "8"}
  images: [{names: ["img:1"], sizeBytes: 1000}]
"""


def pod(
    *,
    resources: str = '{requests: {cpu: "1"}}',
    extra: str = "",
    priority: str = "",
    ports: str = "",
) -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default, labels: {{app: a}}}}
spec:
  {priority}
  containers:
  - name: c
    image: img:1
    resources: {resources}
    {ports}
{textwrap.indent(textwrap.dedent(extra).strip(chr(10)), "  ")}
"""


def config(profile: str) -> str:
    return f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
{textwrap.indent(textwrap.dedent(profile).strip(chr(10)), "  ")}
"""


def docs(*parts: str) -> str:
    return "\n---\n".join(textwrap.dedent(p).strip("\n") for p in parts) + "\n"


def fit_weight(w: str) -> str:
    return config(f"""
pluginConfig:
- name: NodeResourcesFit
  args:
    scoringStrategy:
      type: MostAllocated
      resources: [{{name: cpu, weight: {w}}}]
""")


POD_AFFINITY = """
affinity:
  podAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: {w}
      podAffinityTerm: {{topologyKey: kubernetes.io/hostname, labelSelector: {{matchLabels: {{app: a}}}}}}
"""
NODE_AFFINITY = """
affinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: {w}
      preference: {{matchExpressions: [{{key: zone, operator: In, values: [a]}}]}}
"""
SPREAD = """
topologySpreadConstraints:
- {{maxSkew: {skew}, topologyKey: zone, whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: a}}}}{extra}}}
"""
GANG = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: g, namespace: default}}
spec: {{schedulingPolicy: {{gang: {{minCount: {n}}}}}}}
"""
GANG_POD = pod(extra="schedulingGroup: {podGroupName: g}")

# (sentence, snapshot text, "<object>: <field>", fragment of the message)
ROOT_CAUSES = [
    (
        "a node's allocatable pods beyond int64 (was an OverflowError in NodeTable)",
        docs(NODE.replace('pods: "110"', 'pods: "18446744073709551616"'), pod()),
        "Node/n1: status.allocatable.pods",
        "18446744073709551616 units does not fit an int64",
    ),
    (
        "a container's cpu request of 2**64 cores (was an OverflowError in _pod_vectors / request_vector)",
        docs(NODE, pod(resources="{requests: {cpu: 18446744073709551616}}")),
        "Pod/default/p: spec.containers[0].resources.requests.cpu",
        "millicores does not fit an int64",
    ),
    (
        "an nvidia.com/gpu request of 2**63 (was an OverflowError in request_vector)",
        docs(NODE, pod(resources='{requests: {cpu: "1", nvidia.com/gpu: "9223372036854775808"}}')),
        "Pod/default/p: spec.containers[0].resources.requests.nvidia.com/gpu",
        "does not fit an int64",
    ),
    (
        "a gang minCount of 2**63 (was a TypeError in the exact gang family)",
        docs(NODE, GANG.format(n=2**63), GANG_POD),
        "PodGroup/default/g: spec.schedulingPolicy.gang.minCount",
        "9223372036854775808 does not fit an int32",
    ),
    (
        "a scoring-strategy resource weight of 9.999e+29 (was an OverflowError in weighted_average)",
        docs(NODE, pod(), fit_weight("9.999e+29")),
        "KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight",
        "does not fit an int64",
    ),
    (
        "a score plugin weight beyond int32 (was an OverflowError in prioritize)",
        docs(
            NODE,
            pod(),
            config(
                "plugins: {score: {enabled: [{name: NodeResourcesFit, weight: 9223372036854775807}]}}"
            ),
        ),
        "KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[0].weight",
        "does not fit an int32",
    ),
    (
        "a preferred node-affinity weight above 100 (was an OverflowError in NodeAffinity's build)",
        docs(NODE, pod(extra=NODE_AFFINITY.format(w=2**63))),
        "Pod/default/p: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "does not fit an int32",
    ),
    (
        "a pod-affinity term weight above 100 (was an OverflowError in InterPodAffinity's pre_score)",
        docs(NODE, pod(extra=POD_AFFINITY.format(w=9.999e29))),
        "Pod/default/p: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "does not fit an int32",
    ),
    (
        "a maxSkew of 2**63 - 1 (was an OverflowError in PodTopologySpread's normalize)",
        docs(NODE, pod(extra=SPREAD.format(skew=2**63 - 1, when="ScheduleAnyway", extra=""))),
        "Pod/default/p: spec.topologySpreadConstraints[0].maxSkew",
        "9223372036854775807 does not fit an int32",
    ),
]

ONCE_LENIENT = [
    (
        "a pod priority beyond int32",
        docs(NODE, pod(priority="priority: 2147483648")),
        "Pod/default/p: spec.priority",
        "does not fit an int32",
    ),
    (
        "a user PriorityClass above one billion",
        docs(
            NODE,
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\nvalue: 1000000001\n",
            pod(),
        ),
        "PriorityClass/huge: value",
        "must be <= 1000000000, got 1000000001",
    ),
    (
        "a system- PriorityClass with another value than upstream's",
        docs(
            NODE,
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 5\n",
            pod(),
        ),
        "PriorityClass/system-node-critical: value",
        "must be 2000001000, got 5",
    ),
    (
        "an unknown system- PriorityClass name",
        docs(
            NODE,
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 5\n",
            pod(),
        ),
        "PriorityClass/system-mine: metadata.name",
        "is not a known system priority class",
    ),
    (
        "a PodGroup priority beyond int32",
        docs(NODE, GANG.format(n=1).replace("spec: {", "spec: {priority: -2147483649, "), GANG_POD),
        "PodGroup/default/g: spec.priority",
        "does not fit an int32",
    ),
    (
        "a hostPort above 65535",
        docs(NODE, pod(ports="ports: [{containerPort: 80, hostPort: 65536}]")),
        "Pod/default/p: spec.containers[0].ports[0].hostPort",
        "must be in 0..65535, got 65536",
    ),
    (
        "a containerPort of 0",
        docs(NODE, pod(ports="ports: [{containerPort: 0}]")),
        "Pod/default/p: spec.containers[0].ports[0].containerPort",
        "must be in 1..65535, got 0",
    ),
    (
        "an image sizeBytes beyond int64",
        docs(NODE.replace("sizeBytes: 1000", "sizeBytes: 9223372036854775808"), pod()),
        "Node/n1: status.images[0].sizeBytes",
        "does not fit an int64",
    ),
    (
        "a minDomains beyond int32",
        docs(
            NODE,
            pod(
                extra=SPREAD.format(skew=1, when="DoNotSchedule", extra=", minDomains: 2147483648")
            ),
        ),
        "Pod/default/p: spec.topologySpreadConstraints[0].minDomains",
        "does not fit an int32",
    ),
    (
        "a minDomains with ScheduleAnyway",
        docs(
            NODE, pod(extra=SPREAD.format(skew=1, when="ScheduleAnyway", extra=", minDomains: 2"))
        ),
        "Pod/default/p: spec.topologySpreadConstraints[0].minDomains",
        "can only use minDomains if whenUnsatisfiable=DoNotSchedule",
    ),
    (
        "a preferred node-affinity weight of 0",
        docs(NODE, pod(extra=NODE_AFFINITY.format(w=0))),
        "Pod/default/p: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "must be in 1..100, got 0",
    ),
    (
        "a pod-affinity term weight of 101",
        docs(NODE, pod(extra=POD_AFFINITY.format(w=101))),
        "Pod/default/p: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "must be in 1..100, got 101",
    ),
    (
        "a scoring-strategy resource weight of 101",
        docs(NODE, pod(), fit_weight("101")),
        "KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight",
        "must be in 1..100, got 101",
    ),
    (
        "a BalancedAllocation resource weight other than 1",
        docs(
            NODE,
            pod(),
            config(
                "pluginConfig:\n- name: NodeResourcesBalancedAllocation\n  args: {resources: [{name: cpu, weight: 2}]}"
            ),
        ),
        "KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.resources[0].weight",
        "must be 1, got 2",
    ),
    (
        "a shape score above MaxCustomPriorityScore",
        docs(
            NODE,
            pod(),
            config(
                "pluginConfig:\n- name: NodeResourcesFit\n  args: {scoringStrategy: {type: RequestedToCapacityRatio, "
                "requestedToCapacityRatio: {shape: [{utilization: 0, score: 11}]}}}"
            ),
        ),
        "KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].score",
        "must be in 0..10, got 11",
    ),
    (
        "a profile's percentageOfNodesToScore above 100",
        docs(NODE, pod(), config("percentageOfNodesToScore: 101")),
        "KubeSchedulerConfiguration: profiles[0].percentageOfNodesToScore",
        "must be in 0..100, got 101",
    ),
    (
        "a pod whose containers together request more than an int64 of memory",
        docs(
            NODE,
            pod(
                resources="{requests: {memory: 5000000000000000000}}\n  - {name: d, resources: {requests: {memory: 5000000000000000000}}}"
            ),
        ),
        "Pod/default/p: spec.containers",
        "memory request (containers, init containers and overhead together) is out of range",
    ),
    (
        "a Job whose parallelism would expand into two billion pods",
        docs(
            NODE,
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: default}\n"
            "spec: {parallelism: 2147483647, template: {spec: {containers: [{name: c}]}}}\n",
        ),
        "Job/default/j: spec.parallelism",
        "gangplan expands at most 100000",
    ),
]


def _run(tmp_path, name: str, text: str, args: list[str]) -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_text(text)
    res = runner.invoke(app, [args[0], str(path), *args[1:]])
    return res.exit_code, res.output, str(path)


@pytest.mark.parametrize(
    "sentence,text,where,fragment",
    ROOT_CAUSES + ONCE_LENIENT,
    ids=[c[0] for c in ROOT_CAUSES + ONCE_LENIENT],
)
@pytest.mark.parametrize(
    "command",
    [
        ["solve", "--engine", "greedy"],
        ["solve", "--engine", "exact", "--time-limit", "1"],
        ["inspect"],
    ],
    ids=["greedy", "exact", "inspect"],
)
def test_out_of_range_is_bad_input_naming_the_field(
    tmp_path, command, sentence, text, where, fragment
):
    code, output, path = _run(tmp_path, "s.yaml", text, command)
    assert code == 2, output
    assert f"error: {path}: {where}: " in output, output
    assert fragment in output, output
    assert "Traceback" not in output and "internal error" not in output


# Just inside each range: the snapshot loads and both engines produce a valid Result.
EDGES_INSIDE = [
    (
        "quantities of exactly int64's limit in gangplan's unit",
        docs(
            NODE.replace("memory: 32Gi", 'memory: "9223372036854775807"').replace(
                'cpu: "8"', "cpu: 9223372036854775807m"
            ),
            pod(resources='{requests: {cpu: "1", memory: 1Gi}}'),
        ),
    ),
    (
        "weights of 1 and 100, a zero fit weight (defaults to 1), plugin weight int32's limit",
        docs(
            NODE,
            pod(
                extra=NODE_AFFINITY.format(w=100)
                + POD_AFFINITY.format(w=1).replace("affinity:\n", "")
            ),
            fit_weight("0").replace(
                "- schedulerName: default-scheduler",
                "- schedulerName: default-scheduler\n  plugins: {score: {enabled: [{name: NodeResourcesFit, weight: 2147483647}]}}",
            ),
        ),
    ),
    (
        "priority classes at their limits",
        docs(
            NODE,
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\nvalue: 1000000000\n",
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 2000001000\n",
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: bottom}\nvalue: -2147483648\n",
            pod(priority="priorityClassName: top"),
        ),
    ),
    (
        "hostPort 65535, maxSkew and minDomains at int32's limit, sizeBytes at int64's limit",
        docs(
            NODE.replace("sizeBytes: 1000", "sizeBytes: 9223372036854775807"),
            pod(
                ports="ports: [{containerPort: 65535, hostPort: 65535}]",
                extra=SPREAD.format(
                    skew=2**31 - 1, when="DoNotSchedule", extra=f", minDomains: {2**31 - 1}"
                ),
            ),
        ),
    ),
    (
        "a gang minCount at int32's limit (it waits for quorum)",
        docs(NODE, GANG.format(n=2**31 - 1), GANG_POD),
    ),
]


@pytest.mark.parametrize("sentence,text", EDGES_INSIDE, ids=[c[0] for c in EDGES_INSIDE])
def test_values_at_the_edge_of_each_range_load_and_solve(tmp_path, sentence, text):
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import solve_greedy
    from gangplan.solver.validate import validate

    path = tmp_path / "s.yaml"
    path.write_text(text)
    cluster = load_snapshot(path)
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, time_limit=2, hint=greedy)
    assert validate(cluster, greedy) == []
    assert validate(cluster, exact) == []
    code, output, _ = _run(
        tmp_path, "s.yaml", text, ["solve", "--engine", "exact", "--time-limit", "1"]
    )
    assert code == 0, output
