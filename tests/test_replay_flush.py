"""Timed mode's 5-minute flush (``flushUnschedulablePodsLeftover``, every 30 s; a job more than
``DefaultPodMaxInUnschedulablePodsDuration`` = 5 min in the unschedulable pool moves out with no
event): kubernetes/kubernetes pkg/scheduler/backend/queue/scheduling_queue.go @003b4460, and
:mod:`gangplan.replay.timed`'s docstring. One 8-GPU node, so where each job runs is forced; the
queue's times and attempts are what is checked."""

from __future__ import annotations

import pytest

from gangplan.models.cluster import Cluster
from gangplan.models.version import KubeVersion
from gangplan.models.well_known import GPU
from gangplan.replay.timed import flush_time, run_timed
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy.testing import make_cluster, make_node

GI = 2**30


def _job(name, submit, duration, workers=1, gpu=8):
    return ReplayJob(
        name=name,
        submit=submit,
        duration=duration,
        workers=workers,
        cpu_milli=1000,
        memory_mib=1024,
        gpu=gpu,
    )


def _one_node(version: KubeVersion) -> Cluster:
    c = make_cluster([make_node("n0", cpu=64000, memory=512 * GI, extra={GPU: 8})])
    return c.model_copy(update={"kube_version": version})


def test_flush_ticks_are_the_first_30_s_multiple_more_than_5_minutes_after_the_failure():
    assert [flush_time(t) for t in (0, 10, 29.9, 30, 300.5)] == [330, 330, 330, 360, 630]


@pytest.mark.parametrize("version", [KubeVersion.V1_36, KubeVersion.V1_37])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_job_with_no_event_for_5_minutes_is_retried_by_the_flush(version, workers):
    # a holds the node 0..1000 s; b (a single pod, or a gang of 2 x 4 GPUs) fails at 10 s and no
    # event comes until a departs: the flush retries it at 330, 660 and 990 s (each failure
    # restarts its 5 minutes), a's departure at 1000 s moves it (its 8 s backoff from 990 s has
    # expired: straight to activeQ) and it starts
    jobs = [_job("a", 0, 1000), _job("b", 10, 50, workers=workers, gpu=8 // workers)]
    tr = run_timed(_one_node(version), jobs, "default", 0, typical=[])
    a, b = tr.records
    assert (a.start, b.start, b.end) == (0, 1000, 1050)
    assert b.attempts == 5  # 10, 330, 660, 990 (flush), 1000 (departure)
    assert tr.flushed == 3


def test_the_flush_resets_the_queue_timestamp_so_it_reorders_equal_priorities():
    # b fails at 10, c at 200; without the flush b (earlier timestamp) would go first at 1000 s.
    # With it: b retried at 330, 660, 990; c at 510, 810: at the departure c's timestamp (810)
    # is earlier than b's (990), so c starts first, as kube-scheduler's PrioritySort orders them
    jobs = [_job("a", 0, 1000), _job("b", 10, 50), _job("c", 200, 50)]
    tr = run_timed(_one_node(KubeVersion.V1_36), jobs, "default", 0, typical=[])
    _, b, c = tr.records
    assert (c.start, c.attempts) == (1000, 4)
    assert (b.start, b.attempts) == (1050, 6)  # 10, 330, 660, 990, 1000 (after c), 1050 (c departs)
    assert tr.flushed == 5


def test_a_job_that_never_fits_ends_the_run_when_only_flush_ticks_remain():
    # d (2 x 8 GPUs on one 8-GPU node) never fits: retried by the flush while other events remain,
    # then the run ends (each further retry would repeat the failed cycle on the same cluster)
    jobs = [_job("a", 0, 1000), _job("d", 5, 10, workers=2, gpu=8)]
    tr = run_timed(_one_node(KubeVersion.V1_36), jobs, "default", 0, typical=[])
    a, d = tr.records
    assert a.end == 1000 and d.start is None
    assert d.attempts <= 6
