"""Multi-document YAML read at the speed of libyaml's parser, with PyYAML's exact values.

``yaml.load_all(text, Loader=CSafeLoader)`` spends most of its time in Python: a Node object per
scalar, its tag found by running the implicit resolvers' regular expressions, then the
constructor's generator machinery walking the node tree. Kubernetes dumps repeat the same plain
scalars over and over (``cpu``, ``8``, ``'110'``, label keys and values), so :func:`load_all` reads
libyaml's events (``yaml._yaml.CParser``, the C parser PyYAML's CSafeLoader uses) and builds the
dicts and lists directly; a plain scalar is resolved and constructed once per distinct string,
with PyYAML's own resolver and constructors (YAML 1.1: ``yes`` / ``on`` are booleans, ``0777`` is
octal, ``1:30`` is 90, ``1e3`` is a string; timestamps stay strings, as the loader wants them).

Anything beyond plain trees (anchors and aliases, explicit tags, merge keys, ``=``, unhashable
keys) raises :class:`Unsupported`, and so does any error: :func:`load_all` then reads the text again
with the full loader, which gives the same objects, or raises the same error with the same line.
``benchmarks/yaml_parsers.py`` measures it against the other candidates.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import ScalarNode

from gangplan.gcpause import gc_paused

try:
    from yaml._yaml import CParser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    CParser = None

_STR = "tag:yaml.org,2002:str"
_SCALAR_TAGS = (
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
)
"""Implicit tags built here; any other (merge ``<<``, value ``=``) goes to the full loader."""


class Unsupported(Exception):
    """The text holds something :func:`events_load_all` does not build: the full loader reads it."""


_NO_KEY = object()


def events_load_all(text: str, loader: type) -> list[Any]:
    """The documents of ``text`` built from libyaml events; scalars resolved as ``loader`` does.
    Raises :class:`Unsupported` (or the parser's error) where the full loader must decide."""
    if CParser is None:
        raise Unsupported("libyaml is not available")
    helper = loader("")
    constructors = helper.yaml_constructors
    resolve = helper.resolve
    plain: dict[str, Any] = {}
    parser = CParser(text)
    get = parser.get_event
    docs: list[Any] = []
    stack: list[tuple[Any, Any, bool]] = []
    cur: Any = None  # the open container (None: at document level)
    key: Any = _NO_KEY
    is_map = False
    root: Any = None
    try:
        while True:
            ev = get()
            cls = ev.__class__
            if cls is ScalarEvent:
                if ev.anchor is not None:
                    raise Unsupported("anchor")
                tag = ev.tag
                value = ev.value
                if tag is not None and tag != "!":
                    raise Unsupported(f"tag {tag}")
                if ev.implicit[0]:
                    try:
                        value = plain[value]
                    except KeyError:
                        raw = value
                        tag = resolve(ScalarNode, raw, ev.implicit)
                        if tag != _STR:
                            if tag not in _SCALAR_TAGS:
                                raise Unsupported(f"tag {tag}") from None
                            value = constructors[tag](helper, ScalarNode(tag, raw))
                        plain[raw] = value
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                if ev.anchor is not None:
                    raise Unsupported("anchor")
                if ev.tag is not None and ev.tag != "!":
                    raise Unsupported(f"tag {ev.tag}")
                stack.append((cur, key, is_map))
                is_map = cls is MappingStartEvent
                cur = {} if is_map else []
                key = _NO_KEY
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                value = cur
                cur, key, is_map = stack.pop()
            elif cls is DocumentEndEvent:
                docs.append(root)
                root = None
                continue
            elif cls is DocumentStartEvent or cls is StreamStartEvent:
                continue
            elif cls is StreamEndEvent:
                return docs
            else:  # AliasEvent
                raise Unsupported(cls.__name__)
            if is_map:
                if key is _NO_KEY:
                    key = value
                else:
                    cur[key] = value  # TypeError for an unhashable key
                    key = _NO_KEY
            elif cur is not None:
                cur.append(value)
            else:
                root = value
    finally:
        parser.dispose()


def load_all(text: str, loader: type) -> list[Any]:
    """``list(yaml.load_all(text, Loader=loader))``, faster for plain Kubernetes dumps.

    ``loader`` is a ``CSafeLoader`` subclass (its resolver and scalar constructors are used); the
    garbage collector is paused while the objects are built (they hold no cycles), as every
    collection would walk all of them again."""
    try:
        with gc_paused():
            return events_load_all(text, loader)
    except Exception:  # noqa: BLE001 - whatever it was, the full loader decides (same error, same line)
        pass
    return list(yaml.load_all(text, Loader=loader))


__all__ = ["Unsupported", "events_load_all", "load_all"]
