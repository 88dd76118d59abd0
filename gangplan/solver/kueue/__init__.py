"""Kueue as Kueue runs it (issue 42): admission cycles, flavor assignment with quota, TAS placement.

:func:`admission_of` is the entry point the engines use: Kueue's admission pass on a snapshot
(:func:`gangplan.solver.kueue.admit.admit`), made once per snapshot and kept beside it; its
``cluster`` is what kube-scheduler then sees (:func:`kube_view`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangplan.models.base import Beside, kept_beside

if TYPE_CHECKING:
    from gangplan.models.cluster import Cluster
    from gangplan.solver.kueue.admit import Admission


def admission_of(cluster: Cluster) -> Admission | None:
    """Kueue's admission on ``cluster`` (None without Kueue objects), computed once."""
    if cluster.kueue is None:
        return None
    from gangplan.solver.kueue.admit import admit

    def made(c: Cluster) -> Admission:
        adm = admit(c)
        adm.cluster._kueue_admission = Beside((adm.cluster, adm))  # the admitted view is done
        return adm

    return kept_beside(cluster, "_kueue_admission", made)


def kube_view(cluster: Cluster) -> Cluster:
    """The snapshot kube-scheduler sees: after Kueue's admission when the snapshot has Kueue
    objects (admitted Workloads' pods released with their flavors and domains), else itself."""
    adm = admission_of(cluster)
    return adm.cluster if adm is not None else cluster


def with_kueue_version(cluster: Cluster, version: str | None) -> Cluster:
    """``cluster`` with Kueue's admission reproduced as ``version`` does it (``0.17``, ``0.18``,
    ``0.19``, ``main``, or a patch such as ``0.18.4``); itself when None or without Kueue
    objects. An unknown version is a ValueError naming the ones modelled."""
    if version is None or cluster.kueue is None:
        return cluster
    from gangplan.models.kueue import KUEUE_VERSIONS
    from gangplan.solver.kueue.tas import normalise_version

    text = str(version).strip().lstrip("v")
    try:
        normalise_version(text)
    except ValueError:
        raise ValueError(
            f"Kueue version {version!r} is not modelled (one of {', '.join(KUEUE_VERSIONS)}, "
            "or a patch release of one)"
        ) from None
    state = cluster.kueue.model_copy(update={"version": text})
    return cluster.model_copy(update={"kueue": state})
