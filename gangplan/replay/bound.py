"""A packing bound for fill mode (issue 22, item 4): an upper bound on the GPU milli any placement
could allocate to a multiset of arrived jobs, hence a lower bound on the unallocated GPU % that
every policy's number is measured against. Two methods (:func:`packing_bound`): ``patterns``,
column generation over per-node patterns (below; seconds to minutes on the paper's cluster), and
``lp``, the aggregated LP over node classes (:func:`aggregated_bound`: milliseconds, but on the
paper's cluster it places every arrived milli from 100 % arrived, i.e. says 0 %).

**What it bounds.** Fill mode's metric (:func:`gangplan.replay.fill.discrete`, the FGD
simulator's ``experiments/analysis/merge_alloc_discrete.py`` and ``pkg/simulator/analysis.go``,
hkust-adsl/kubernetes-scheduler-simulator @8f3d641) at arrived k % is 100 minus the mean, over the samples
whose arrived ratio rounds to k, of ``round(used / capacity * 100, 2)``, where ``used`` is the
cluster's allocated GPU milli (``ClusterGpuFragReport``: per node ``GPUs x 1000 - milli left``,
so a partly used GPU counts only its allocated milli; nothing is charged for stranded or
fragmented GPUs). Every such sample is the state after some prefix of the fill order, whose
placed pods are a subset of the jobs of :func:`arrived_prefix` (the prefix whose arrived ratio
rounds to k or less, or to k + 1 when no sample rounds to k and the metric reads k +- 1), placed
so that every node's cpu, memory, pod count and per-device milli hold (the placer's filters:
NodeResourcesFit and :class:`gangplan.replay.gpushare.GpuShareFilter`). So ``used`` of every
sample is at most the maximum GPU milli of a feasible placement of a subset of that multiset, a
rounded mean of rounded values at most its rounded value, and :attr:`PackingBound.unallocated_percent`
(100 minus the allocatable %, rounded *down* to 2 places) is at most every policy's number at k.

**How.** Column generation over per-node patterns (Gilmore-Gomory): nodes are grouped into
classes (free cpu, memory, pod slots, free GPUs, GPU model); a *pattern* of a class is a
multiset of pod shapes (cpu, memory, GPU count, milli per GPU, allowed models) that fits one node
of it: cpu, memory and pods within the node's, and the GPU requests packed onto its devices, each
device holding shares summing to at most 1000 milli (a whole-GPU pod is ``count`` x 1000, so it
takes devices whole; a pod of ``count`` devices of ``milli`` each puts ``milli`` on ``count``
distinct devices). The master LP (GLOP) chooses patterns ``x[p] >= 0``, at most the class's node
count per class and at most the arrived count of each shape, maximising GPU milli; the pricing
problem per class (CP-SAT: shape counts, per-device share counts, device loads) finds the
pattern of largest reduced cost under the master's duals. Every integral placement is such a
choice of patterns, so the LP optimum bounds it.

**Valid at any stop.** For any shape duals ``y >= 0`` the Lagrangian (Farley) bound
``sum_s y_s b_s + sum_c N_c max(0, best_c(y))`` (``best_c``: the pricing's proven upper bound,
CP-SAT's objective bound when it stops at its limit) is an upper bound on every placement, LP or
not; the reported value is the least such bound seen (equal to the LP optimum when the pricing
proves no improving column). When the work limit stops the generation first the status is
``limit`` and :attr:`PackingBound.gap_percent` is the bound minus the restricted master's value
(points of capacity). With ``integer=True`` the generated patterns are also solved as an integer
program (CP-SAT): a feasible packing, so the true optimum lies between the two and
:attr:`PackingBound.integer_gap_percent` says how far apart.

Relaxed (so still a bound): gangs count as one pod per worker (not kept whole, nor on one
topology domain); pods without GPUs take no GPU milli and are left out (leaving them out only
frees room); bound pods of a snapshot hold their whole GPUs (counted as allocated) and their cpu,
memory and pod slots.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, MEMORY
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay.gpushare import MILLI
from gangplan.replay.traces import MIB, ReplayJob

Shape = tuple[int, int, int, int, tuple[str, ...]]
"""(cpu milli, memory bytes, GPU devices, milli per device, allowed models)."""
NodeClass = tuple[int, int, int, int, str]
"""(free cpu milli, free memory bytes, free pod slots, free GPUs, GPU model)."""

SCALE = 1000
"""Pricing objective coefficients are integers: reduced values in milli x ``SCALE`` rounded up."""
FAST_PRICING = 0.2
KEEP = 8
"""Columns kept per pricing solve (its last improving solutions)."""
SMOOTH = 0.7
"""Wentges smoothing weight on the best-bound duals."""
"""Seconds per pricing solve while columns keep coming (then one round at the full limit)."""


@dataclass(frozen=True)
class PackingBound:
    arrived_milli: int
    capacity_milli: int
    allocatable_milli: float
    """Upper bound on the GPU milli any placement allocates (at most ``arrived_milli``)."""
    status: str
    """``optimal`` (column generation converged: the LP optimum), ``limit`` (stopped at the time
    limit: still a bound, see :attr:`gap_percent`), ``trivial`` (min(arrived, capacity))."""
    master_milli: float | None = None
    """The last restricted master's value (at most the bound; equal when ``optimal``)."""
    integer_milli: int | None = None
    """GPU milli of the best integer packing of the generated patterns (``integer=True``)."""
    iterations: int = 0
    columns: int = 0
    wall_s: float = 0.0

    def _pct(self, milli: float) -> float:
        return 100.0 * milli / self.capacity_milli if self.capacity_milli else 0.0

    @property
    def unallocated_percent(self) -> float:
        """Lower bound on the unallocated GPU % (of the cluster's GPU milli) as the fill metric
        reads it: 100 minus the allocatable %, rounded down to 2 places."""
        if not self.capacity_milli:
            return 0.0
        return max(0.0, math.floor((100.0 - self._pct(self.allocatable_milli)) * 100 + 1e-6) / 100)

    @property
    def gap_percent(self) -> float | None:
        """Bound minus the restricted master's value, in points of capacity (0 when optimal)."""
        return (
            None
            if self.master_milli is None
            else round(max(0.0, self._pct(self.allocatable_milli - self.master_milli)), 4)
        )

    @property
    def integer_unallocated_percent(self) -> float | None:
        """Unallocated % of the best integer packing found (an achievable placement's)."""
        return (
            None if self.integer_milli is None else round(100.0 - self._pct(self.integer_milli), 4)
        )

    @property
    def integer_gap_percent(self) -> float | None:
        """Bound vs the integer packing, points of capacity: the true optimum lies between."""
        return (
            None
            if self.integer_milli is None
            else round(max(0.0, self._pct(self.allocatable_milli - self.integer_milli)), 4)
        )


def node_classes(base: Cluster) -> tuple[Counter, int]:
    """Node classes with their counts, and the GPU milli bound pods already hold (whole GPUs)."""
    used: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for p in base.bound_pods:
        u = used[p.node_name]
        u[0] += int(p.requests.get(CPU, 0))
        u[1] += int(p.requests.get(MEMORY, 0))
        u[2] += 1
        u[3] += int(p.requests.get(GPU, 0))
    classes: Counter = Counter()
    held = 0
    for n in base.nodes:
        a = n.allocatable
        u = used.get(n.name, [0, 0, 0, 0])
        g = int(a.get(GPU, 0))
        free_g = max(0, g - u[3])
        held += (g - free_g) * MILLI
        pods = int(a["pods"]) - u[2] if "pods" in a else 1 << 20
        classes[
            (
                int(a.get(CPU, 0)) - u[0],
                int(a.get(MEMORY, 0)) - u[1],
                max(0, pods),
                free_g,
                n.labels.get(GPU_PRODUCT, ""),
            )
        ] += 1
    return classes, held


def job_shapes(jobs: list[ReplayJob]) -> Counter:
    """Arrived count of each GPU pod shape (every worker of a gang; pods without GPU left out)."""
    return Counter(
        (j.cpu_milli, j.memory_mib * MIB, j.gpu, j.gpu_milli, j.gpu_models)
        for j in jobs
        if j.gpu and j.gpu_milli
        for _ in range(j.workers)
    )


def _fits_alone(s: Shape, c: NodeClass) -> bool:
    cpu, mem, g, _, models = s
    ccpu, cmem, cpods, cg, model = c
    return (
        cpu <= ccpu and mem <= cmem and cpods >= 1 and g <= cg and (not models or model in models)
    )


def _max_alone(s: Shape, c: NodeClass) -> int:
    """How many pods of ``s`` one node of ``c`` holds (an upper bound used for variable domains)."""
    cpu, mem, g, m, _ = s
    ccpu, cmem, cpods, cg, _ = c
    n = min(cpods, ccpu // cpu if cpu else cpods, cmem // mem if mem else cpods)
    per_device = MILLI // m
    return max(0, min(n, (cg * per_device) // g if g else n))


class _Pricer:
    """The pricing problem of one class as a CP-SAT model built once; objective per call.

    Variables: ``n[s]`` pods of each shape; whole-GPU pods (milli 1000) take the first ``W``
    devices (``whole[d]``: device d is whole-used, nonincreasing in d); shares are counted per
    device and milli value (``z[m, d]``), a device's shares summing to at most 1000 and to 0 on
    a whole-used device; a shape of ``g > 1`` devices of ``m < 1000`` puts one share on each of
    ``g`` distinct devices (``z[s, d] <= n[s]``). Device loads are nonincreasing over the
    share devices (they are identical). Memory is counted in MiB (pods ask whole MiB)."""

    def __init__(self, c: NodeClass, shapes: list[Shape], cap: dict[Shape, int]) -> None:
        from ortools.sat.python import cp_model

        self.c = c
        self.shapes = [s for s in shapes if _fits_alone(s, c) and cap[s] > 0]
        ccpu, cmem, cpods, cg, _ = c
        m = cp_model.CpModel()
        self.n = {}
        hi = self.hi = {s: min(cap[s], _max_alone(s, c)) for s in self.shapes}
        for s in self.shapes:
            self.n[s] = m.NewIntVar(0, hi[s], "")
        whole = [s for s in self.shapes if s[3] >= MILLI]
        single = defaultdict(list)  # milli -> shapes of one device
        multi = [s for s in self.shapes if s[3] < MILLI and s[2] > 1]
        for s in self.shapes:
            if s[3] < MILLI and s[2] == 1:
                single[s[3]].append(s)
        wdev = [m.NewBoolVar("") for _ in range(cg)]
        for a, b in zip(wdev, wdev[1:], strict=False):
            m.Add(a >= b)
        if whole:
            m.Add(sum(s[2] * self.n[s] for s in whole) == sum(wdev))
        else:
            for b in wdev:
                m.Add(b == 0)
        terms = defaultdict(list)  # device -> [(milli, var)]
        for milli, group in sorted(single.items()):
            zs = [m.NewIntVar(0, MILLI // milli, "") for _ in range(cg)]
            m.Add(sum(zs) == sum(self.n[s] for s in group))
            for d, zz in enumerate(zs):
                terms[d].append((milli, zz))
        for s in multi:
            zs = [m.NewIntVar(0, min(hi[s], MILLI // s[3]), "") for _ in range(cg)]
            m.Add(sum(zs) == s[2] * self.n[s])
            for d, zz in enumerate(zs):
                m.Add(zz <= self.n[s])
                terms[d].append((s[3], zz))
        loads = []
        for d in range(cg):
            if terms[d]:
                load = sum(mi * zz for mi, zz in terms[d])
                m.Add(load <= MILLI - MILLI * wdev[d])
                loads.append(load)
        for a, b in zip(loads, loads[1:], strict=False):
            m.Add(a <= b)  # whole-used devices first (load 0), then shares by load
        # redundant rows that tighten the LP relaxation: total milli, and per device at most k
        # shares of more than 1000 / (k + 1) milli
        share_dev = cg - sum(wdev)
        m.Add(sum(s[2] * s[3] * v for s, v in self.n.items()) <= MILLI * cg)
        for k in range(1, 5):
            big = [s for s in self.shapes if s[3] < MILLI and s[3] * (k + 1) > MILLI]
            if big:
                m.Add(sum(s[2] * self.n[s] for s in big) <= k * share_dev)
        if self.shapes:
            m.Add(sum(s[0] * v for s, v in self.n.items()) <= ccpu)
            m.Add(sum((s[1] // MIB) * v for s, v in self.n.items()) <= cmem // MIB)
            m.Add(sum(self.n.values()) <= cpods)
        self.model = m

    work = 0.0
    """Deterministic seconds spent by this pricer's solves so far."""

    def solve(
        self, value: dict[Shape, float], time_limit: float
    ) -> tuple[list[dict[Shape, int]], float, float]:
        """(the patterns found, best first; the best one's true value; an upper bound on the best
        value) under ``value``; ``time_limit`` in CP-SAT deterministic seconds (reproducible)."""
        from ortools.sat.python import cp_model

        pos = {s: value[s] for s in self.shapes if value[s] > 1e-9}
        if not pos:
            return [], 0.0, 0.0
        coef = {s: math.ceil(v * SCALE) for s, v in pos.items()}
        self.model.ClearObjective()
        self.model.Maximize(sum(coef[s] * self.n[s] for s in pos))
        solver = cp_model.CpSolver()
        solver.parameters.max_deterministic_time = time_limit
        solver.parameters.num_workers = 1
        found: list[dict[Shape, int]] = []
        items = list(self.n.items())

        class Keep(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                found.append({s: self.Value(v) for s, v in items if self.Value(v)})

        st = solver.Solve(self.model, Keep())
        self.work += solver.ResponseProto().deterministic_time
        if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            # no pattern found: the bound the solver proved, else every shape at its maximum
            trivial = sum(v * self.hi[s] for s, v in pos.items())
            ub = (
                min(trivial, solver.BestObjectiveBound() / SCALE)
                if st == cp_model.UNKNOWN
                else trivial
            )
            return [], 0.0, max(0.0, ub)
        found.reverse()
        true = sum(value[s] * k for s, k in found[0].items())
        return found[:KEEP], true, max(solver.BestObjectiveBound() / SCALE, true)


def _homogeneous(pricer: _Pricer, cap: dict[Shape, int]) -> list[dict[Shape, int]]:
    """Starting columns: for each shape, as many of it as one node holds (greedy on devices)."""
    c = pricer.c
    out = []
    for s in pricer.shapes:
        cpu, mem, g, m, _ = s
        k = min(cap[s], _max_alone(s, c))
        if m < MILLI and g > 1:  # shares across several devices: per device floor(1000/m), distinct
            k = min(k, (c[3] * (MILLI // m)) // g)
        if k > 0:
            out.append({s: k})
    return out


def packing_bound(
    base: Cluster, jobs: list[ReplayJob], *, method: str = "lp", **options
) -> PackingBound:
    """The packing bound of ``jobs`` on ``base``'s nodes: ``method`` ``patterns`` is the
    column-generation bound (:func:`pattern_bound`, module docstring; seconds to minutes on the
    paper's cluster), ``lp`` the aggregated LP (:func:`aggregated_bound`, milliseconds, weak)."""
    if method == "patterns":
        return pattern_bound(base, jobs, **options)
    if method == "lp":
        return aggregated_bound(base, jobs)
    raise ValueError(f"unknown packing bound method {method!r} (lp, patterns)")


def pattern_bound(
    base: Cluster,
    jobs: list[ReplayJob],
    *,
    work_limit: float = 60.0,
    pricing_limit: float = 5.0,
    integer: bool = False,
    pool: dict | None = None,
) -> PackingBound:
    """The column-generation bound (module docstring) of ``jobs`` on ``base``'s nodes.

    ``work_limit`` caps the generation, in CP-SAT deterministic seconds summed over the pricing
    solves (reproducible, unlike wall time; the result stays a bound, status ``limit``);
    ``pricing_limit`` each solve of the last round (quick rounds use :data:`FAST_PRICING`); ``pool`` (a dict the caller keeps) carries the
    patterns found between calls on the same cluster (patterns do not depend on the arrived
    counts except through the per-shape cap, which the master enforces anyway)."""
    t0 = time.perf_counter()
    classes, held = node_classes(base)
    capacity = sum(n * c[3] for c, n in classes.items()) * MILLI + held
    shapes_c = job_shapes(jobs)
    arrived = sum(s[2] * s[3] * n for s, n in shapes_c.items())
    free_cap = capacity - held
    trivial = float(held + min(arrived, free_cap))
    shapes = sorted(shapes_c)
    if not shapes or not free_cap:
        return PackingBound(
            arrived, capacity, trivial, "optimal", trivial, None, 0, 0, time.perf_counter() - t0
        )
    cap = dict(shapes_c)
    gain = {s: s[2] * s[3] for s in shapes}
    cls = sorted(c for c in classes if c[3] > 0)
    pricers = {c: _Pricer(c, shapes, cap) for c in cls}
    if pool is None:
        pool = {}
    lp = _Master(classes, cls, shapes, cap, gain, pool)
    for c in cls:
        for pat in _homogeneous(pricers[c], cap):
            lp.add(c, pat)
        for key in list(pool.get(c, {})):
            lp.add(c, dict(key))
    best, master, status, it = _generate(
        lp,
        pricers,
        classes,
        float(min(arrived, free_cap)),
        free_cap,
        work_limit=work_limit,
        pricing_limit=pricing_limit,
    )
    bound = held + min(best, float(min(arrived, free_cap)))
    cols = lp.cols
    integral = (
        _integer(cols, classes, cap, gain, max(1.0, min(10.0, work_limit / 3))) + held
        if integer and cols
        else None
    )
    return PackingBound(
        arrived,
        capacity,
        bound,
        status,
        held + master,
        integral,
        it,
        len(cols),
        round(time.perf_counter() - t0, 3),
    )


class _Master:
    """The restricted master LP (GLOP) of :func:`pattern_bound`: a column ``x[p] >= 0`` per
    pattern, at most the class's node count per class (``row_c``) and at most the arrived count
    of each shape (``row_s``), maximising GPU milli. Every pattern added is also kept in
    ``pool`` (class -> patterns as found, before the per-shape cap)."""

    def __init__(
        self,
        classes: Counter,
        cls: list[NodeClass],
        shapes: list[Shape],
        cap: dict[Shape, int],
        gain: dict[Shape, int],
        pool: dict,
    ) -> None:
        from ortools.linear_solver import pywraplp

        self.shapes, self.cap, self.gain, self.pool = shapes, cap, gain, pool
        self.solver = solver = pywraplp.Solver.CreateSolver("GLOP")
        self.row_c = {c: solver.Add(solver.Sum([]) <= classes[c]) for c in cls}
        self.row_s = {s: solver.Add(solver.Sum([]) <= cap[s]) for s in shapes}
        self.obj = solver.Objective()
        self.obj.SetMaximization()
        self.cols: list[tuple[NodeClass, dict[Shape, int], object]] = []
        self.seen: set = set()

    def add(self, c: NodeClass, raw: dict[Shape, int]) -> bool:
        cap, gain, solver = self.cap, self.gain, self.solver
        pat = {s: min(k, cap.get(s, 0)) for s, k in raw.items() if cap.get(s, 0) > 0 and k > 0}
        key = (c, tuple(sorted(pat.items())))
        if not pat or key in self.seen:
            return False
        self.seen.add(key)
        self.pool.setdefault(c, {})[tuple(sorted(raw.items()))] = None
        v = solver.NumVar(0.0, solver.infinity(), "")
        self.row_c[c].SetCoefficient(v, 1)
        for s, k in pat.items():
            self.row_s[s].SetCoefficient(v, k)
        self.obj.SetCoefficient(v, sum(gain[s] * k for s, k in pat.items()))
        self.cols.append((c, pat, v))
        return True

    def solve(self) -> bool:
        """Solve the master; False when GLOP ends without an optimum."""
        from ortools.linear_solver import pywraplp

        return self.solver.Solve() == pywraplp.Solver.OPTIMAL


def _generate(
    lp: _Master,
    pricers: dict[NodeClass, _Pricer],
    classes: Counter,
    limit: float,
    free_cap: int,
    *,
    work_limit: float,
    pricing_limit: float,
) -> tuple[float, float, str, int]:
    """The column generation of :func:`pattern_bound` on the seeded master ``lp``: (the least
    Lagrangian bound seen, the last master's value, ``optimal`` or ``limit``, iterations).
    ``limit`` is what the master cannot exceed: every arrived milli, or every free GPU's."""
    shapes = lp.shapes
    best = float("inf")
    master = 0.0
    status = "limit"
    it = 0
    proving = False
    center: dict[Shape, float] | None = None
    mispriced = False
    final = False
    while True:
        it += 1
        if not lp.solve():
            break
        master = lp.obj.Value()
        if master >= limit - 1e-6:  # every arrived milli (or every GPU) placed: nothing to price
            best, status = limit, "optimal"
            break
        ylp = _duals(lp.row_s, shapes)
        # Wentges smoothing: price at a point between the duals of the best bound so far and the
        # master's (any y >= 0 gives a valid bound); after a round without columns, at the master's
        y = (
            ylp
            if center is None or mispriced
            else {s: SMOOTH * center[s] + (1 - SMOOTH) * ylp[s] for s in shapes}
        )
        tl = pricing_limit if proving else min(pricing_limit, FAST_PRICING)
        lag, added = _price(lp, pricers, classes, y, ylp, tl)
        if lag < best:
            best, center = lag, y
        smoothed = y is not ylp
        mispriced = smoothed and not added
        if best - master <= max(0.5, 1e-5 * free_cap):
            status = "optimal"
            break
        if final:
            break
        if (
            sum(p.work for p in pricers.values()) > work_limit
        ):  # one last round at the master's duals, long solves
            final = proving = mispriced = True
            continue
        if mispriced:
            continue
        if not added:
            if proving:  # the long solves found nothing better either: a bound with its gap
                break
            proving = True  # no column from the quick solves: price again with the long limit
        else:
            proving = False
    return best, master, status, it


def _price(
    lp: _Master,
    pricers: dict[NodeClass, _Pricer],
    classes: Counter,
    y: dict[Shape, float],
    ylp: dict[Shape, float],
    tl: float,
) -> tuple[float, int]:
    """One pricing round at the shape duals ``y`` (each class's solve limited to ``tl``): the
    Lagrangian bound at ``y``, and how many columns of positive reduced cost under the master's
    own duals ``ylp`` were added to ``lp``."""
    shapes, cap, gain = lp.shapes, lp.cap, lp.gain
    value = {s: gain[s] - y[s] for s in shapes}
    reduced = {s: gain[s] - ylp[s] for s in shapes}
    lag = sum(y[s] * cap[s] for s in shapes)
    added = 0
    pis = {c: max(0.0, _dual(lp.row_c[c])) for c in pricers}
    for c in pricers:
        pats, _, ub = pricers[c].solve(value, tl)
        lag += classes[c] * max(0.0, ub)
        for pat in pats:
            if sum(reduced[s] * k for s, k in pat.items()) > pis[c] + 1e-6 * max(
                1.0, pis[c]
            ) and lp.add(c, pat):
                added += 1
    return lag, added


def aggregated_bound(base: Cluster, jobs: list[ReplayJob]) -> PackingBound:
    """The aggregated LP (method ``lp``): one row per class and resource, no per-node packing.
    Fast (milliseconds) and valid, but weak: on the paper's cluster 0 % from 100 % arrived."""
    from ortools.linear_solver import pywraplp

    classes = Counter(
        (
            int(n.allocatable.get(CPU, 0)),
            int(n.allocatable.get(MEMORY, 0)),
            int(n.allocatable.get(GPU, 0)),
            n.labels.get(GPU_PRODUCT, ""),
        )
        for n in base.nodes
    )
    kinds = Counter(
        (
            j.cpu_milli,
            j.memory_mib * MIB,
            j.gpu,
            j.gpu_milli if j.gpu else 0,
            j.gpu_models if j.gpu else (),
        )
        for j in jobs
        for _ in range(j.workers)
    )
    capacity = sum(g * n for (_, _, g, _), n in classes.items()) * MILLI
    arrived = sum(g * m * n for (_, _, g, m, _), n in kinds.items())
    solver = pywraplp.Solver.CreateSolver("GLOP")
    x: dict[tuple, object] = {}
    for k in kinds:
        cpu, mem, g, m, models = k
        for c in classes:
            ccpu, cmem, cg, model = c
            if cpu <= ccpu and mem <= cmem and g <= cg and (not g or not models or model in models):
                x[k, c] = solver.NumVar(0.0, solver.infinity(), "")
    for k, n in kinds.items():
        solver.Add(sum(v for (kk, _), v in x.items() if kk == k) <= n)
    for c, n in classes.items():
        ccpu, cmem, cg, _ = c
        here = [(k, v) for (k, cc), v in x.items() if cc == c]
        solver.Add(sum(k[0] * v for k, v in here) <= n * ccpu)
        solver.Add(sum(k[1] * v for k, v in here) <= n * cmem)
        solver.Add(sum(k[2] * k[3] * v for k, v in here) <= n * cg * MILLI)
        solver.Add(
            sum(
                (k[2] if k[3] >= MILLI else 1) * v
                for k, v in here
                if k[2] and (k[3] >= MILLI or k[3] > MILLI // 2)
            )
            <= n * cg
        )
    solver.Maximize(sum(k[2] * k[3] * v for (k, _), v in x.items()))
    st = solver.Solve()
    if st != pywraplp.Solver.OPTIMAL:
        return PackingBound(arrived, capacity, float(min(arrived, capacity)), "trivial")
    value = min(solver.Objective().Value(), float(arrived), float(capacity))
    return PackingBound(arrived, capacity, value, "lp-relaxation", value)


def _dual(row) -> float:
    return row.dual_value()


def _duals(rows, shapes) -> dict[Shape, float]:
    """Shape duals >= 0 (GLOP's sign for ``<=`` rows of a maximisation is non-negative; clipped
    so a tiny negative from tolerances keeps the Lagrangian bound valid)."""
    return {s: max(0.0, rows[s].dual_value()) for s in shapes}


def _integer(cols, classes, cap, gain, time_limit: float) -> int:
    """Best integer choice of the generated patterns (CP-SAT): a feasible packing's GPU milli."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    xs = [(c, pat, m.NewIntVar(0, classes[c], "")) for c, pat, _ in cols]
    by_c = defaultdict(list)
    by_s = defaultdict(list)
    for c, pat, x in xs:
        by_c[c].append(x)
        for s, k in pat.items():
            by_s[s].append(k * x)
    for c, v in by_c.items():
        m.Add(sum(v) <= classes[c])
    for s, v in by_s.items():
        m.Add(sum(v) <= cap[s])
    m.Maximize(sum(sum(gain[s] * k for s, k in pat.items()) * x for _, pat, x in xs))
    solver = cp_model.CpSolver()
    solver.parameters.max_deterministic_time = time_limit
    solver.parameters.num_workers = 1
    st = solver.Solve(m)
    return int(solver.ObjectiveValue()) if st in (cp_model.OPTIMAL, cp_model.FEASIBLE) else 0


def arrived_prefix(jobs: list[ReplayJob], capacity_milli: int, percent: int) -> list[ReplayJob]:
    """The jobs of a fill order every sample the metric reads at ``percent`` has seen: those
    whose arrival keeps the arrived ratio ``round(arrived / capacity * 100)`` at ``percent`` or
    less, or at ``percent + 1`` or less when no sample rounds to ``percent`` (then
    :func:`gangplan.replay.fill.discrete` averages the samples of ``percent +- 1``)."""
    ratios, total = [0], 0
    for j in jobs:
        total += j.gpu_milli_total
        ratios.append(round(total * 100 / capacity_milli))
    top = percent if percent in ratios else percent + 1
    return jobs[: _first_above(ratios[1:], top)]


def _first_above(ratios: list[int], top: int) -> int:
    for i, r in enumerate(ratios):
        if r > top:
            return i
    return len(ratios)


__all__ = [
    "PackingBound",
    "aggregated_bound",
    "arrived_prefix",
    "job_shapes",
    "node_classes",
    "packing_bound",
    "pattern_bound",
]
