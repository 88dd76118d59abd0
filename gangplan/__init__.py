"""gangplan: place Kubernetes pod groups (gangs) the way kube-scheduler would, and optimally."""

__version__ = "0.1.0"
