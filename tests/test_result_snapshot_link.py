"""Issue 38 ("leaks in the public face"): ``Result.to_frame()`` found its Cluster through a
module table keyed by ``id()``, so a copy of the Result (``model_copy``) could not, and the
table held clusters for as long as the Results lived elsewhere. The Cluster is now held beside
the Result (a private attribute), shared by its copies, outside its fields, JSON and equality."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import gangplan as gp
import gangplan.models.result as result_module

SNAP = (
    Path(__file__).resolve().parent.parent
    / "scenarios"
    / "showcase"
    / "tas-nvl72-fragmentation.yaml"
)


def test_copies_of_a_result_know_their_snapshot() -> None:
    cluster = gp.load(SNAP)
    r = gp.solve(cluster)
    frame = r.to_frame()
    for copy in (r.model_copy(), r.model_copy(deep=True), r.model_copy(update={"victims": []})):
        assert copy.to_frame().equals(frame)
    assert gp.Result.from_json(r.to_json()) == r == r.model_copy(deep=True)


def test_the_link_holds_nothing_once_the_results_are_gone() -> None:
    cluster = gp.load(SNAP)
    d = gp.diff(cluster)
    assert d.optimal.to_frame().shape[0] == len(cluster.pending_pods)
    alive = weakref.ref(cluster)
    del cluster, d
    gc.collect()
    assert alive() is None
    assert not any(isinstance(v, dict) and k.isupper() for k, v in vars(result_module).items()), (
        "no module table"
    )


def test_twenty_loads_and_dra_views_leave_no_live_view() -> None:
    """Issue 38: ``capacity_view`` kept each view (a full copy of nodes and pods) in seven module
    dicts keyed by ``id(view)``; the view and its rows now hang on the snapshot and die with it."""
    import gangplan.dra.capacity as capacity

    refs = []
    for _ in range(20):
        cluster = gp.load(
            Path(__file__).resolve().parent.parent
            / "scenarios"
            / "showcase"
            / "h100-dra-extended-resource.yaml"
        )
        view = capacity.capacity_view(cluster)
        assert (
            view is not cluster and capacity.capacity_view(cluster) is view
        )  # cached beside the snapshot
        assert capacity.view_source(view) is cluster and capacity.view_rows(view) is not None
        assert (
            capacity.view_rows(view.model_copy()) is None
        )  # a copy is not the view its rows were made for
        refs += [weakref.ref(cluster), weakref.ref(view)]
    del cluster, view
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert not [
        k
        for k, v in vars(capacity).items()
        if isinstance(v, dict) and k.startswith("_") and not k.startswith("__")
    ], "no module tables"
