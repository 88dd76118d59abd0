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

SNAP = Path(__file__).resolve().parent.parent / "scenarios" / "showcase" / "tas-nvl72-fragmentation.yaml"


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
    assert not any(isinstance(v, dict) and k.isupper() for k, v in vars(result_module).items()), "no module table"
