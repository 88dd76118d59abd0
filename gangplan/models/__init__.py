"""Pydantic v2 models: the Kubernetes objects read, the Cluster, the Result."""

from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    Affinity,
    CompositePodGroup,
    LabelSelector,
    Node,
    Pod,
    PodAffinityTerm,
    PodGroup,
    Requirement,
    SchedulerProfile,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from gangplan.models.result import GroupOutcome, PodOutcome, Result, Status, result_json_schema

__all__ = [
    "Affinity",
    "Cluster",
    "CompositePodGroup",
    "GroupOutcome",
    "LabelSelector",
    "Node",
    "Pod",
    "PodAffinityTerm",
    "PodGroup",
    "PodOutcome",
    "Requirement",
    "Result",
    "SchedulerProfile",
    "Status",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "result_json_schema",
]
