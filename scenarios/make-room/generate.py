"""Writes the make-room scenarios of this directory (python scenarios/make-room/generate.py): each
is a snapshot with its expectations on the target PodGroup (gangplan.solver.room.suite)."""

from pathlib import Path

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object
from gangplan.io.writer import dump_snapshot

OUT = str(Path(__file__).resolve().parent) + "/"
GPU = "nvidia.com/gpu"


def node(name, gpus=8, **labels):
    return node_object(
        name,
        cpu="96",
        memory="1024Gi",
        gpus=gpus,
        labels={"kubernetes.io/hostname": name, **labels},
    )


def run(name, node, gpus=1, owner=("ReplicaSet", "web-7d9f"), ns="serve", **kw):
    return pod_object(
        name,
        namespace=ns,
        requests={"cpu": "2", "memory": "16Gi", GPU: gpus},
        node_name=node,
        owner=owner,
        **kw,
    )


def gang(name, pods, gpus, ann, ns="ml", priority=None, topology_key=None, **kw):
    objs = [
        pod_group_object(
            name,
            namespace=ns,
            min_count=pods,
            annotations=ann,
            priority=priority,
            topology_key=topology_key,
            **kw,
        )
    ]
    objs += [
        pod_object(
            f"{name}-{j}",
            namespace=ns,
            requests={"cpu": "16", "memory": "128Gi", GPU: gpus},
            group=name,
            priority=priority,
            created=60,
        )
        for j in range(pods)
    ]
    return objs


def write(fname, header, objs):
    open(OUT + fname, "w").write(dump_snapshot(objs, header))


# 1. KAI FullNodeFirst-like fragmentation: 4 nodes of 8 GPUs, 2 one-GPU inference pods each.
objs = [node(f"gpu-{i}") for i in range(4)]
k = 0
for i in range(4):
    for _ in range(2):
        objs.append(run(f"infer-{k}", f"gpu-{i}", labels={"app": "infer"}))
        k += 1
objs += gang(
    "train",
    2,
    8,
    {
        "gangplan.io/expect-room": "plan",
        "gangplan.io/expect-room-moves": "4",
        "gangplan.io/expect-room-baseline": "4",
        "gangplan.io/expect-room-nodes": "2",
    },
)
write(
    "fragmented-8gpu.yaml",
    "make-room: 8 one-GPU inference pods (a Deployment's) spread 2 per node over four 8-GPU nodes leave\n"
    "24 GPUs free but no whole node; a 2 x 8-GPU gang of the same priority is pending, so nothing may be\n"
    "preempted. Cheapest: move 4 pods (empty two nodes); kube-scheduler then admits the gang. Without\n"
    "moves it takes 2 new nodes.",
    objs,
)

# 2. Rack-held gang: rack-a holds 3 small pods, rack-b 5: the optimum empties rack-a.
objs = []
for r, pods in (("rack-a", [0, 1, 2]), ("rack-b", [0, 1, 2, 3, 3])):
    for i in range(4):
        objs.append(node(f"{r}-{i}", **{"topology.kubernetes.io/rack": r}))
    for j, i in enumerate(pods):
        objs.append(run(f"svc-{r}-{j}", f"{r}-{i}", labels={"app": "svc"}))
objs += [node("spare-0", **{"topology.kubernetes.io/rack": "rack-c"})]
objs += gang(
    "llm",
    4,
    8,
    {
        "gangplan.io/expect-room": "plan",
        "gangplan.io/expect-room-moves": "3",
        "gangplan.io/expect-room-baseline": "3",
    },
    topology_key="topology.kubernetes.io/rack",
)
write(
    "rack-held-gang.yaml",
    "make-room: a 4 x 8-GPU gang held to one rack (schedulingConstraints.topology); rack-a has 3 small\n"
    "pods in the way, rack-b 5, rack-c one free node. Cheapest: move rack-a's 3 pods (they may land on\n"
    "rack-c's spare or rack-b).",
    objs,
)

# 3. Interleaved priorities, --evict: bare low-priority pods can only be evicted, same-priority Job pods moved.
objs = [node(f"gpu-{i}") for i in range(3)]
objs += [
    run("batch-low-0", "gpu-0", gpus=4, owner=None, ns="batch", priority=1),
    run("batch-low-1", "gpu-0", gpus=4, owner=None, ns="batch", priority=1),
    run("eval-0", "gpu-1", gpus=2, owner=("Job", "eval"), ns="ml", priority=50),
    run("eval-1", "gpu-1", gpus=2, owner=("Job", "eval"), ns="ml", priority=50),
    run("eval-2", "gpu-2", gpus=4, owner=("Job", "eval"), ns="ml", priority=50),
]
objs += gang(
    "train",
    2,
    8,
    {
        "gangplan.io/expect-room": "plan",
        "gangplan.io/expect-room-moves": "1",
        "gangplan.io/expect-room-evictions": "2",
        "gangplan.io/room-evict": "true",
        "gangplan.io/expect-room-baseline": "5",
    },
    priority=50,
)
write(
    "interleaved-priorities.yaml",
    "make-room --evict: two bare priority-1 pods fill gpu-0 (they can only be evicted), priority-50 Job\n"
    "pods half-fill gpu-1 and gpu-2 (they can move: their controller re-creates them). A priority-50\n"
    "2 x 8-GPU gang needs two whole nodes: gpu-0 by evicting its 2 pods, and gpu-2 by moving eval-2\n"
    "beside eval-0/1 on gpu-1 (moving eval-0 and eval-1 instead costs one pod more). The greedy\n"
    "baseline empties gpu-1 and gpu-2 (3 pods moved), and kube-scheduler preempts the two batch pods\n"
    "on gpu-0 to re-create them there: 3 moves and 2 evictions.",
    objs,
)

# 4. A multi-node all-mode gang in the way: moving one of its pods re-creates it whole.
objs = [node(f"gpu-{i}") for i in range(4)]
pg = pod_group_object("ray", namespace="ml", min_count=3)
pg["spec"]["disruptionMode"] = {"all": {}}
objs.append(pg)
objs += [
    pod_object(
        f"ray-{k}",
        namespace="ml",
        requests={"cpu": "2", "memory": "16Gi", GPU: 2},
        node_name=f"gpu-{k}",
        group="ray",
        owner=("Job", "ray"),
    )
    for k in range(3)
]
objs += [
    run("infer-0", "gpu-3", labels={"app": "infer"}),
    run("infer-1", "gpu-3", labels={"app": "infer"}),
    run("infer-2", "gpu-3", labels={"app": "infer"}),
]
objs += gang(
    "train",
    1,
    8,
    {
        "gangplan.io/expect-room": "plan",
        "gangplan.io/expect-room-moves": "3",
        "gangplan.io/expect-room-baseline": "plan",
    },
)
write(
    "all-mode-gang-in-the-way.yaml",
    "make-room: a 3-pod Ray gang (disruption mode all) takes 2 GPUs on each of gpu-0..2, three\n"
    "one-GPU inference pods sit on gpu-3. An 8-GPU pod needs a whole node: emptying gpu-0 would\n"
    "re-create the whole gang (3 pods, a group disrupted), emptying gpu-3 moves 3 single pods and\n"
    "disrupts no group: that is the cheaper plan by the default weights.",
    objs,
)

# 5. Nothing may move: bare pods only. No plan (proven); one more node of the shape admits the gang.
objs = [node(f"gpu-{i}") for i in range(2)]
objs += [run(f"notebook-{i}", f"gpu-{i}", gpus=2, owner=None, ns="users") for i in range(2)]
objs += gang(
    "train", 2, 8, {"gangplan.io/expect-room": "no-plan", "gangplan.io/expect-room-nodes": "2"}
)
write(
    "bare-pods-need-nodes.yaml",
    "make-room: bare notebook pods (no controller re-creates them) hold 2 GPUs on each of two 8-GPU\n"
    "nodes. A 2 x 8-GPU gang cannot get room by moves (proven: nothing may move); it takes 2 new nodes\n"
    "like gpu-0 (fewer is proven not to be enough).",
    objs,
)

# 6. Copies that fit now.
objs = [node(f"gpu-{i}") for i in range(3)]
objs += [
    run("infer-0", "gpu-0", gpus=4, labels={"app": "infer"}),
    run("infer-1", "gpu-1", gpus=2, labels={"app": "infer"}),
]
objs += gang(
    "sweep",
    2,
    4,
    {
        "gangplan.io/expect-room": "nothing",
        "gangplan.io/expect-room-copies": "2/2",
        "gangplan.io/room-copies": "8",
    },
)
write(
    "copies-that-fit.yaml",
    "make-room --copies 8: how many copies of a 2 x 4-GPU sweep gang fit on three 8-GPU nodes with 4\n"
    "and 2 GPUs in use (18 free, but in 4-GPU slots: gpu-0 1, gpu-1 1, gpu-2 2): 4 pods, so 2 copies,\n"
    "for both engines. The gang itself fits as it is: nothing to do.",
    objs,
)

# 7. A PDB protects the cheapest pods to move.
objs = [node(f"gpu-{i}") for i in range(3)]
objs += [run("db-0", "gpu-0", labels={"app": "db"}, owner=("StatefulSet", "db"))]
objs += [run(f"web-{k}", "gpu-1", labels={"app": "web"}) for k in range(2)]
objs += [run(f"web-{k}", "gpu-2", labels={"app": "web"}) for k in range(2, 4)]
objs.append(
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "serve"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}, "minAvailable": 1},
        "status": {
            "disruptionsAllowed": 0,
            "currentHealthy": 1,
            "desiredHealthy": 1,
            "expectedPods": 1,
        },
    }
)
objs += gang(
    "train", 1, 8, {"gangplan.io/expect-room": "plan", "gangplan.io/expect-room-moves": "2"}
)
write(
    "pdb-protects-the-cheapest.yaml",
    "make-room: gpu-0 runs one database pod, gpu-1 and gpu-2 two web pods each. Moving db-0 alone would\n"
    "be cheapest, but its PodDisruptionBudget allows no disruption (status.disruptionsAllowed: 0), so\n"
    "the plan moves two web pods instead.",
    objs,
)
