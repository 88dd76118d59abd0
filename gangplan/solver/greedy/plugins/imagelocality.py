"""ImageLocality: ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``
(kubernetes/kubernetes v1.36). Score only: the sizes of the pod's images already on the node,
each scaled by the share of nodes that have it, clamped to [23MB, 1000MB x containers] and mapped
linearly onto 0..100. 0 on nodes that list no images."""

from __future__ import annotations

from collections import Counter

import numpy as np

from gangplan.solver.greedy.framework import MAX_NODE_SCORE
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin, StaticFilterCache

NAME = names.IMAGE_LOCALITY
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Add ``:latest`` when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(Plugin):
    name = NAME

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self._cache = StaticFilterCache()
        self._spread = Counter(name for n in cluster.nodes for name in n.images)

    def score(self, cs, pod, snap, feasible):
        return self._cache.get(pod.images, lambda: self._all_nodes(pod.images, snap))[feasible]

    def _all_nodes(self, images: tuple[str, ...], snap) -> np.ndarray:
        total = snap.n
        out = np.zeros(snap.n, dtype=np.int64)
        if not images or not self._spread:
            return out
        for i, node in enumerate(snap.nodes):
            s = 0
            for img in images:
                name = normalized_image_name(img)
                if name in node.images:
                    s += int(node.images[name] * (self._spread[name] / total))
            out[i] = calculate_priority(s, len(images))
        return out
