"""Issue 27 item 5: 10,000 nodes / 100,000 bound pods / 5,000 pending pods in rack and block gangs,
end to end through the files users give: dump size, load, greedy, exact and the whole diff, each
with its peak memory.

Instance: the ``huge`` bench family (:func:`gangplan.bench.generators.huge_clusters.huge_cluster`,
variants ``gb200`` and ``dgx``), written as ``kubectl get -o yaml`` / ``-o json`` print a list
(:func:`load_time.write_list`: one ``kind: List``, keys sorted). Then each step runs in a fresh
spawned process (so its ``ru_maxrss`` is its own; the process loads the JSON dump first, except
the load steps), watched by this one: a step whose resident set passes ``--max-rss-gb`` (default
6) or whose wall time passes ``--step-timeout`` is killed and reported as such.

* ``load_yaml`` / ``load_json``: :func:`gangplan.io.loader.load_snapshot` of each dump;
* ``greedy``: :func:`gangplan.solver.greedy.solve_greedy`, pods/s over the pending pods;
* ``exact``: :func:`gangplan.solver.exact.solve_exact` at ``--time-limit`` (status and gap as
  the engine reports them: OPTIMAL only with its proof);
* ``diff``: :func:`gangplan.solver.diff.diff_snapshot` with ``explain=True`` (both engines, the
  classification and, when greedy is suboptimal, the decisive-step search).

Issue 27's targets at this size: load under 10 s, greedy >= 1,000 pods/s, whole diff under
60 s and 4 GB, exact status and gap reported.

``--profile STEP`` runs that step under cProfile and prints its 30 most expensive functions.

One run (main @b2e9d16, from a ``git archive`` copy so that other sessions' edits could not land
mid-run; 2 shared cores at load average 4.5-6.2, so wall is about twice CPU):

=======  =========  ================  ===============  ===============  ================================  ===============  ========
variant  dump       load YAML         load JSON        greedy           exact (60 s)                      whole diff       peak
=======  =========  ================  ===============  ===============  ================================  ===============  ========
GB200    50.4 MB    16.0 s (11.0 CPU) 9.2 s (6.2 CPU)  38.8 s, 129 p/s  FEASIBLE, gap 1.2 %, 61.3 s      134.7 s (76 CPU)  2.06 GB
         114 MB JSON                                   (19.0 CPU)       (build 7.9, start 6.8, dec. 45.1)
DGX      47.6 MB    22.6 s (11.1 CPU) 10.7 s (6.4 CPU) 17.5 s, 285 p/s  FEASIBLE, gap 3.6 %, 62.6 s      125.1 s (65 CPU)  2.23 GB
         111 MB JSON                                   (7.7 CPU)        (build 28.8, start 9.4, dec. 22.5)
=======  =========  ================  ===============  ===============  ================================  ===============  ========

The loads owe half their speed to pausing the cyclic collector for the whole load
(``loader.load_with_expansion``): the GB200 JSON, same process, alternating, load average 2.2-2.5:
6.0 / 5.6 s CPU paused against 11.2 / 11.8 s with the collector on. Both diffs classify
``greedy-suboptimal``. Peak resident memory per step: load 0.8-0.9 GB,
greedy 1.0-1.3 GB, exact 1.9-2.0 GB, diff 2.1-2.2 GB. The dumps: 10,008 / 10,000 nodes,
100,000 bound pods, 438 PodGroups, 5,000 pending pods (500 single); the slim pods make the YAML
50 MB where ``load_time.kubectl_like`` (full statuses, ~3.6 KB a pod) wrote 390 MB.

Where the time goes (cProfile, GB200): greedy is 81 % default preemption of the single pods
that fail (``preemption.py`` ``preempt_single``: 226 calls, each materialising a Status per node
through ``schedule_one.node_statuses`` -> ``NodeResourcesFit.filter_one``, 2.26 million Python
calls, then ``_dry_run`` per node), although no pod here has a lower-priority victim (pending
priority 0, bound 1000): with ``preemption=False`` the same placements take 6.1 s wall / 4.0 s CPU
(818 pods/s wall, 1,264 per CPU second; DGX 6.6 / 4.2 s, 759 / 1,196) at load 2.4, against
24.4 s / 18.4 s with it. The exact build (8.4 s CPU GB200, 15.6 s DGX under cProfile) is
class-level (938 classes x nodes, no per-(pod, node) loop) but ``topology.add_topology_constraints``
is 52-71 % of it: per (constrained gang, domain), ``_could_host`` and ``_domain_literal`` compare
the whole node-domain vector (``ids == d``: 438 gangs x 310 / 1,040 domains x 10,000 nodes,
135,883 / 454,659 calls), and ``_pool_constraints`` scans every slot variable per (shape,
domain) in Python (2.6 s on DGX); then ``topology.tree.TopologyTree.build`` (networkx, 2.2-2.6 s)
and ``affinity.py`` listing all 100,000 bound pods with no affinity term pending (0.9-1.1 s).
Issue 27's targets: load under 10 s met for JSON in CPU time (6.2-6.4 s), at the edge in wall
time on this loaded machine, not met for YAML (11 s CPU); greedy >= 1,000 pods/s not met (129-285
pods/s; 1,200-1,260 per CPU second without the futile preemption); whole diff under 4 GB met
(2.2 GB), under 60 s not met (125-135 s); exact status and gap reported (FEASIBLE, 1.2 % / 3.6 %).

Run: ``python benchmarks/huge_clusters.py [--variant gb200 dgx] [--steps load_yaml load_json
greedy exact diff] [--scale 1.0] [--time-limit 60] [--dir /tmp/gangplan-huge]``; writes
``benchmarks/results/huge_clusters.csv`` (one row per variant and step: wall and process CPU
seconds, which are all threads' CPU for the exact engine, and the load average at its start and
end).
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_time import write_list  # benchmarks/load_time.py  # noqa: E402
from results_csv import print_rows, write_csv  # benchmarks/results_csv.py  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "huge_clusters.csv"
STEPS = ("load_yaml", "load_json", "greedy", "exact", "diff")
FIELDS = [
    "variant",
    "step",
    "nodes",
    "bound",
    "pending",
    "mb",
    "seconds",
    "cpu_s",
    "pods_per_s",
    "status",
    "gap",
    "classification",
    "load_s",
    "peak_mb",
    "note",
    "load_avg",
    "load_avg_end",
]


def _rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _step(step: str, folder: str, variant: str, time_limit: float, profile: bool) -> dict[str, Any]:
    """One step in this (fresh) process; the row's ``peak_mb`` is the process's ``ru_maxrss``."""
    from gangplan.io.loader import load_snapshot

    base = Path(folder) / f"huge-{variant}"
    row: dict[str, Any] = {}
    load_path = base.with_suffix(".yaml" if step == "load_yaml" else ".json")
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    if step.startswith("load") and profile:
        import cProfile

        prof = cProfile.Profile()
        cluster = prof.runcall(load_snapshot, load_path)
    else:
        cluster = load_snapshot(load_path)
    load_s, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    bound = sum(1 for p in cluster.pods if p.node_name)
    row |= {
        "nodes": len(cluster.nodes),
        "bound": bound,
        "pending": len(cluster.pending_pods),
        "load_s": round(load_s, 2),
        "mb": round(load_path.stat().st_size / 2**20, 1),
    }
    if step.startswith("load"):
        row |= {"seconds": round(load_s, 2), "cpu_s": round(load_cpu, 2)}
    else:
        fn = _runner(step, cluster, time_limit)
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        if profile:
            import cProfile

            prof = cProfile.Profile()
            out = prof.runcall(fn)
        else:
            out = fn()
        secs = time.perf_counter() - t0
        row |= {"seconds": round(secs, 2), "cpu_s": round(time.process_time() - c0, 2)}
        if step == "greedy":
            row["pods_per_s"] = round(len(cluster.pending_pods) / secs)
            row["note"] = f"placed {sum(1 for p in out.pods.values() if p.node)}"
        elif step == "exact":
            t = out.trace.model_dump() if hasattr(out.trace, "model_dump") else dict(out.trace)
            timing, model = t.get("timing") or {}, t.get("model") or {}
            parts = [
                f"placed {sum(1 for p in out.pods.values() if p.node)}",
                f"vars {model.get('variables')}",
                f"classes {model.get('classes')}",
            ]
            parts += [
                f"{k} {float(timing[k]):.1f}s"
                for k in ("build", "start", "decision", "tiebreak")
                if k in timing
            ]
            row |= {
                "status": str(out.status),
                "gap": "" if out.gap is None else round(out.gap, 4),
                "note": "; ".join(parts),
            }
        else:
            row |= {"classification": out.classification}
    row["peak_mb"] = _rss_mb()
    if profile:
        import io
        import pstats

        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        row["profile"] = s.getvalue()
    return row


def _runner(step: str, cluster: Any, time_limit: float) -> Any:
    if step == "greedy":
        from gangplan.solver.greedy import solve_greedy

        return lambda: solve_greedy(cluster)
    if step == "exact":
        from gangplan.solver.exact import solve_exact

        return lambda: solve_exact(cluster, time_limit=time_limit)
    if step == "diff":
        from gangplan.solver.diff import diff_snapshot

        return lambda: diff_snapshot(cluster, time_limit=time_limit, explain=True)
    raise ValueError(step)


def _entry(queue: Any, *args: Any) -> None:
    queue.put(_step(*args))


def _rss_now_mb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def run_watched(args: tuple, max_rss_mb: int, timeout: float) -> dict[str, Any]:
    """:func:`_step` in a spawned process, killed past ``max_rss_mb`` resident or ``timeout`` s."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_entry, args=(queue, *args))
    t0 = time.perf_counter()
    proc.start()
    peak = 0
    while True:
        try:
            row = queue.get(timeout=0.5)
            break
        except Exception:  # queue.Empty: still running, or dead without a row
            peak = max(peak, _rss_now_mb(proc.pid))
            why = None
            if peak > max_rss_mb:
                why = f"killed: resident {peak} MB > {max_rss_mb} MB"
            elif time.perf_counter() - t0 > timeout:
                why = f"killed: wall {time.perf_counter() - t0:.0f} s > {timeout:.0f} s"
            elif not proc.is_alive():
                why = f"died without a row (exit code {proc.exitcode})"
            if why:
                if proc.is_alive():
                    proc.kill()
                row = {"note": why, "peak_mb": peak, "seconds": round(time.perf_counter() - t0, 1)}
                break
    proc.join()
    return row


def write_dumps(folder: Path, variant: str, scale: float, seed: int) -> tuple[Path, Path]:
    from gangplan.bench.generators.families import build_family

    params = {
        "variant": variant,
        "nodes": round(10_000 * scale),
        "bound_pods": round(100_000 * scale),
        "pending_pods": round(5_000 * scale),
    }
    objects = build_family("huge", params, seed)
    base = folder / f"huge-{variant}"
    return write_list(objects, base.with_suffix(".yaml")), write_list(
        objects, base.with_suffix(".json")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", nargs="+", choices=["gb200", "dgx"], default=["gb200", "dgx"])
    ap.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="share of 10,000 / 100,000 / 5,000 (0.01: the test's size)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0, help="exact and diff time limit (s)")
    ap.add_argument("--max-rss-gb", type=float, default=6.0)
    ap.add_argument("--step-timeout", type=float, default=900.0)
    ap.add_argument(
        "--dir",
        type=Path,
        default=Path("/tmp/gangplan-huge"),
        help="where the dumps go (reused if present)",
    )
    ap.add_argument("--rewrite", action="store_true", help="write the dumps even if present")
    ap.add_argument("--profile", choices=STEPS, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if not 0 < args.scale <= 1.0:
        print(f"error: --scale must be in (0, 1], got {args.scale}", file=sys.stderr)
        raise SystemExit(2)
    rows = []
    for variant in args.variant:
        yaml_path = args.dir / f"huge-{variant}.yaml"
        if args.rewrite or not yaml_path.exists() or not yaml_path.with_suffix(".json").exists():
            t0 = time.perf_counter()
            write_dumps(args.dir, variant, args.scale, args.seed)
            print(f"{variant}: dumps written in {time.perf_counter() - t0:.1f} s", flush=True)
        for step in args.steps:
            la = round(os.getloadavg()[0], 2)
            row = run_watched(
                (step, str(args.dir), variant, args.time_limit, args.profile == step),
                round(args.max_rss_gb * 1024),
                args.step_timeout,
            )
            profile = row.pop("profile", None)
            row = {
                "variant": variant,
                "step": step,
                **row,
                "load_avg": la,
                "load_avg_end": round(os.getloadavg()[0], 2),
            }
            print({k: v for k, v in row.items() if v not in ("", None)}, flush=True)
            if profile:
                print(profile)
            rows.append({k: row.get(k, "") for k in FIELDS})
    print_rows(rows, FIELDS)
    write_csv(args.out, rows, FIELDS)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
