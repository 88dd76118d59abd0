"""Names, UIDs and hashes of the objects gangplan synthesizes, deterministic by construction.

Upstream controllers name some objects from hashes or random suffixes. gangplan reproduces the
hashes it can (the Job controller's Workload and PodGroup names) and replaces randomness by
hashes of stable inputs, so the same snapshot always expands to the same objects:

* a missing ``metadata.uid`` is ``uuid5(NAMESPACE_URL, "gangplan.io/<kind>/<namespace>/<name>")``;
* a ``generateName`` suffix (the API server's ``names.SimpleNameGenerator``: the base cut to 58
  characters plus 5 random characters of ``k8s.io/apimachinery/pkg/util/rand``'s alphabet
  ``bcdfghjklmnpqrstvwxz2456789``) is 5 characters of that alphabet taken from
  ``sha256(<owner uid>/<ordinal>)`` (byte mod 27);
* the Job controller's Workload name ``<job>-<hash>`` and PodGroup name
  ``<workload>-<template>-<hash>`` follow ``computeWorkloadName`` / ``computePodGroupName`` of
  ``pkg/controller/job/job_scheduling_manager.go`` (kubernetes/kubernetes, stored version
  06aef7c6dc70e4149c09aaaf0862f4ca29f3b3d7): fnv32a, printed in decimal, then
  ``rand.SafeEncodeString``. For the Workload the hashed input is what ``hashutil.DeepHashObject``
  writes for a ``types.UID`` (spew ``%#v``: ``(types.UID)"<uid>"``); when the Job has no uid the
  hash therefore comes from the generated one and only the pattern matches a real cluster;
* stand-ins for hashes upstream computes from state gangplan does not have (the
  LeaderWorkerSet template revision) are documented where they are made.

>>> safe_encode("0123456789")
'456789bcdf'
>>> workload_name("gang-trainer", "00000000-0000-0000-0000-000000000000")[:13]
'gang-trainer-'
>>> generate_name("batch-processor-", "seed")
'batch-processor-8vkhm'
"""

from __future__ import annotations

import hashlib
import uuid

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
DNS1123_SUBDOMAIN_MAX = 253
MAX_GENERATED_BASE = 63 - 5  # names.maxGeneratedNameLength


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """``rand.SafeEncodeString``: every character mapped into the alphabet without vowels."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def deterministic_uid(kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gangplan.io/{kind}/{namespace}/{name}"))


def suffix(seed: str, n: int = 5) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in digest[:n])


def generate_name(base: str, seed: str) -> str:
    """What the API server makes of ``generateName: base``, with the random part from ``seed``."""
    return base[:MAX_GENERATED_BASE] + suffix(seed)


def workload_name(job_name: str, job_uid: str) -> str:
    """``computeWorkloadName``: ``<job name, cut to fit 253>-<hash of the Job UID>``."""
    h = safe_encode(str(fnv32a(f'(types.UID)"{job_uid}"'.encode())))
    return f"{job_name[: DNS1123_SUBDOMAIN_MAX - len(h) - 1]}-{h}"


def pod_group_name(workload: str, template: str) -> str:
    """``computePodGroupName``: ``<workload>-<template>-<hash of both>``, cut to fit 253 the way
    upstream shares the room between the two parts."""
    h = safe_encode(str(fnv32a((workload + template).encode())))
    room = DNS1123_SUBDOMAIN_MAX - len(h) - 2
    wl, tpl = workload, template
    if len(wl) + len(tpl) > room:
        half = room // 2
        if len(wl) <= half:
            tpl = tpl[: room - len(wl)]
        elif len(tpl) <= half:
            wl = wl[: room - len(tpl)]
        else:
            wl, tpl = wl[: room - half], tpl[:half]
    return f"{wl}-{tpl}-{h}"


def sha1_hex(s: str) -> str:
    """JobSet ``job-key`` and LeaderWorkerSet ``group-key``: sha1 of ``<namespace>/<name>``, hex."""
    return hashlib.sha1(s.encode()).hexdigest()
