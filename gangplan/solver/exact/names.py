"""The exact engine's constraint family names, defined once (as upstream's
``pkg/scheduler/framework/plugins/names/names.go`` defines its plugin names).

A family's name is what :func:`gangplan.solver.exact.check_feasible` reports when the family
rejects a placement, what ``skip`` leaves out of :func:`gangplan.solver.exact.build_model`, and the
key of its static mask in :class:`.eligibility.Eligibility`. Where the validator has a rule for the
same thing the names agree (``capacity``, ``host-port``, ``pod-affinity``, ...), so a verdict reads
the same from both sides; the validator keeps its own copy (it imports neither engine).
"""

from __future__ import annotations

FIXED = "fixed"
UNSCHEDULABLE = "unschedulable"
TAINT = "taint"
NODE_SELECTOR = "node-selector"
CAPACITY = "capacity"
GANG = "gang"
COMPOSITE = "composite"
PREEMPTION = "preemption"
TOPOLOGY = "topology"
HOST_PORT = "host-port"
POD_ANTI_AFFINITY = "pod-anti-affinity"
POD_AFFINITY = "pod-affinity"
TOPOLOGY_SPREAD = "topology-spread"
LOCALITY = "locality"
