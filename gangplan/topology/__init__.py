"""Topology: the networkx domain tree built from a Kueue Topology or well-known node labels."""

from gangplan.topology.tree import ROOT, WELL_KNOWN_LEVELS, TopologyTree

__all__ = ["ROOT", "WELL_KNOWN_LEVELS", "TopologyTree"]
