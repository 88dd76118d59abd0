"""The in-tree plugins, one module each, named like upstream's packages; the registry.

The registry (:mod:`.registry`) mirrors ``pkg/scheduler/framework/plugins/registry.go`` (``NewInTreeRegistry``): a
plugin name (a :mod:`.names` constant) maps to its type, one line each. Which extension points a
plugin serves is read off its methods (:attr:`.base.Plugin.points`); which of them a run uses is
the profile's business (:mod:`gangplan.solver.greedy.profile`, from the KubeSchedulerConfiguration).
A plugin outside the package is added with :func:`register` (docs/how-to/extend.md).
"""

from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.plugins.registry import REGISTRY, Registry, register, unregister

__all__ = ["REGISTRY", "Plugin", "Registry", "register", "unregister"]
