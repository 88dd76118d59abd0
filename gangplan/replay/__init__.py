"""Replay over time: a trace of jobs played against a cluster with the
greedy engine's plugins, in fill mode (the FGD paper's experiment) or timed mode (a
discrete-event clock). See docs/tutorials/replay.md.

>>> from gangplan.replay import replay, write_outputs   # doctest: +SKIP
>>> out = replay("openb_pod_list_default.csv", "openb_node_list_gpu_node.csv", policies=["fgd"], seeds=[42])  # doctest: +SKIP
>>> write_outputs(out, "out/")  # doctest: +SKIP
"""

from gangplan.replay.output import ReplayOutput
from gangplan.replay.run import parse_policies, parse_seeds, replay, write_outputs

__all__ = ["ReplayOutput", "parse_policies", "parse_seeds", "replay", "write_outputs"]
