"""Kueue's flavor assigner: for a pending workload, a ResourceFlavor per PodSet and resource, the
mode (Fit / Preempt / NoFit) and the borrowing, or the reasons, in Kueue's words (issue 42).

Reproduced from kubernetes-sigs/kueue ``pkg/scheduler/flavorassigner/flavorassigner.go`` at
v0.19.2 (``assignFlavors``, ``findFlavorForPodSets``, ``checkFlavorForPodSets``,
``fitsResourceQuota``, ``isPreferred``, ``shouldTryNextFlavor``, ``flavorSelector``,
``resolvePodSetFlavors``, ``resolveNoFitReason``), ``flavor_assigner_attempts.go`` (the
per-flavor attempts and their "does not provide resource" merge), ``tas_flavorassigner.go``
(``checkPodSetAndFlavorMatchForTAS``); partial admission (``podset_reducer.go``) is
:mod:`.partial`. ``main``
ff69552e79 differs only in how the usage is stored. Quota arithmetic: :mod:`gangplan.predicates.
quota`. Feature gates at their v0.19 defaults: FlavorFungibility, TopologyAwareScheduling,
ReclaimablePods, PartialAdmission, VectorizedResourceRequests (resources in name order) on;
UnadmittedWorkloadsObservability (the ``no_fit_reason`` fields) is computed always.

Versions (``version``: "0.17", "0.18", "0.19", "main" or a patch "0.18.4"; a bare minor means
its last patch): a flavor matches a PodSet's node selector / affinity on that flavor's own label
keys from v0.17.6, v0.18.2 and v0.19.0 (before: the union of the resource group's flavors' keys,
kueue #12449); a flavor whose preemption finds no candidates ranks below every flavor that can be
used from v0.18.5 and v0.19.1 (kueue #13896).

Preemption is not reproduced here. Where Kueue asks its preemption oracle
(``pkg/scheduler/preemption/preemption_oracle.go``, ``SimulatePreemption``) whether preempting
could make room, this module calls ``oracle(OracleQuery) -> (possibility, borrow)`` with
possibility "NoCandidates", "Preempt" (a victim in the same ClusterQueue) or "Reclaim" (victims
only elsewhere in the cohort). The default, :func:`no_candidates_oracle`, answers "NoCandidates"
with the borrowing height of the quota as it is, which is what Kueue's oracle answers when nothing
can be preempted; the flavor's mode is then Preempt (Kueue's ``FlavorAssignmentMode`` for
``noPreemptionCandidates``), ranked below a flavor that fits.

Topology-aware flavors. The static match (a TAS PodSet needs a TAS flavor whose topology has the
requested levels, a non-TAS PodSet refuses a TAS flavor) is done here; the placement is not. After
the quota step Kueue runs its TAS placement on the chosen TAS flavors: with the current usage if
every PodSet fits (a failure turns that PodSet to Preempt with the placement's reason), then, if
the mode is Preempt, on an empty cluster (a failure turns it to NoFit). ``tas_check`` is that
placement: ``tas_check(requests, flavor, simulate_empty) -> (podset name, reason) | None``, called
per TAS flavor in name order with that flavor's :class:`TASRequest` list; None means "not
checked" (every placement succeeds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gangplan.models.kueue import (
    ClusterQueue,
    KueuePodSet,
    KueueState,
    KueueWorkload,
    ResourceFlavor,
    ResourceGroup,
)
from gangplan.models.labels import requirement_matches
from gangplan.models.objects import Taint
from gangplan.predicates.quota import FlavorResource, QuotaTree, QuotaUsage, format_amount
from gangplan.predicates.taints import tolerates
from gangplan.solver.kueue.assignment import (  # noqa: F401 (re-exported)
    _BEST,
    _FIT,
    _NO_CANDIDATES,
    _NO_FIT,
    _POSSIBILITY,
    _POSSIBILITY_NAME,
    _PREEMPT,
    _RECLAIM,
    _SEVERITY,
    _WORST,
    EXCEEDS_MAX_QUOTA,
    NO_MATCHING_FLAVOR,
    TOPOLOGY_PLACEMENT_FAILED,
    WAITING_FOR_QUOTA,
    Assignment,
    FlavorAssignment,
    FlavorAttempt,
    Mode,
    OracleQuery,
    PodSetAssignment,
    PreemptionOracle,
    PreemptionPossibility,
    TASCheck,
    TASRequest,
    _assignment_mode,
    _most_severe,
    _replace_mode,
    no_candidates_oracle,
)

__all__ = [
    "Assignment",
    "FlavorAssignment",
    "FlavorAttempt",
    "Mode",
    "OracleQuery",
    "PodSetAssignment",
    "TASRequest",
    "assign_flavors",
    "no_candidates_oracle",
]


@dataclass(frozen=True)
class _Version:
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> _Version:
        if text in ("main", "", "latest"):
            return cls(99, 0)
        m = re.fullmatch(r"v?0\.(\d+)(?:\.(\d+))?", text.strip())
        if not m:
            raise ValueError(f"unknown Kueue version {text!r}")
        return cls(int(m.group(1)), int(m.group(2)) if m.group(2) else 99)

    def at_least(self, patches: Mapping[int, int], since_minor: int) -> bool:
        """On for a minor >= since_minor, or a listed minor from that patch on."""
        if self.minor in patches:
            return self.patch >= patches[self.minor]
        return self.minor >= since_minor

    @property
    def own_label_keys(self) -> bool:  # kueue #12449
        return self.at_least({17: 6, 18: 2}, 19)

    @property
    def no_candidates_below(self) -> bool:  # kueue #13896
        return self.at_least({18: 5, 19: 1}, 20)


def _is_preferred(a: tuple[int, int], b: tuple[int, int], cq: ClusterQueue, v: _Version) -> bool:
    """``isPreferred``: is granular mode ``a`` (preemption mode, borrowing level) better than
    ``b`` under the ClusterQueue's ``flavorFungibility.preference``."""
    if a[0] == _NO_FIT:
        return False
    if b[0] == _NO_FIT:
        return True
    if v.no_candidates_below:
        a_none, b_none = a[0] == _NO_CANDIDATES, b[0] == _NO_CANDIDATES
        if a_none != b_none:
            return not a_none
    if cq.flavor_fungibility.preference == "PreemptionOverBorrowing":
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _should_try_next(mode: tuple[int, int], cq: ClusterQueue) -> bool:
    """``shouldTryNextFlavor`` (``whenCanBorrow`` / ``whenCanPreempt``; v1beta1's ``Borrow`` and
    ``Preempt`` are read as ``MayStopSearch``)."""
    fung = cq.flavor_fungibility
    if mode[0] in (_NO_FIT, _NO_CANDIDATES):
        return True
    if mode[0] in (_PREEMPT, _RECLAIM) and fung.when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and fung.when_can_borrow == "TryNextFlavor"


def _taint_text(t: Taint) -> str:
    """A ``corev1.Taint`` printed with ``%s`` (a struct: ``{key value effect <nil>}``)."""
    return f"{{{t.key} {t.value} {t.effect} <nil>}}"


def _flavor_matches_selector(
    ps: KueuePodSet, node_labels: Mapping[str, str], keys: set[str]
) -> bool:
    """``flavorSelector`` then ``RequiredNodeAffinity.Match`` on a node carrying the flavor's
    labels: the PodSet's nodeSelector and required affinity terms, restricted to ``keys``; a term
    left empty makes the affinity match anything."""
    for k, val in ps.node_selector.items():
        if k in keys and node_labels.get(k) != val:
            return False
    terms = ps.node_affinity or ()
    kept = []
    for t in terms:
        exprs = [e for e in t.match_expressions if e.key in keys]
        if not exprs:
            kept = []
            break
        kept.append(exprs)
    if not kept:
        return True
    return any(all(requirement_matches(e, dict(node_labels)) for e in exprs) for exprs in kept)


@dataclass
class _Status:
    reasons: list[str] = field(default_factory=list)
    error: str | None = None
    no_fit_reason: str = ""


def _explicit_tas(ps: KueuePodSet) -> bool:
    """``IsExplicitlyRequestingTAS``."""
    tr = ps.topology_request
    return tr is not None and bool(
        tr.unconstrained
        or tr.required
        or tr.preferred
        or tr.slice_required
        or tr.slice_size is not None
        or tr.slice_constraints
    )


def _has_level(ps: KueuePodSet, levels: Sequence[str]) -> bool:
    """``TASFlavorSnapshot.HasLevel``: the requested level, the slice level and every
    multi-layer slice level are levels of the flavor's topology."""
    tr = ps.topology_request
    if tr is None or not levels:
        return False
    constraints = list(tr.slice_constraints)
    if not constraints and tr.slice_required:
        constraints = [(tr.slice_required, tr.slice_size or 0)]
    if tr.required:
        main = tr.required
    elif tr.preferred:
        main = tr.preferred
    elif constraints:
        main = levels[0]
    elif tr.unconstrained:
        main = levels[-1]
    else:
        return False
    slice_key = constraints[0][0] if constraints else levels[-1]
    if main not in levels or slice_key not in levels:
        return False
    return all(level in levels for level, _ in constraints)


class _Assigner:
    def __init__(
        self,
        wl: KueueWorkload,
        cq: ClusterQueue,
        tree: QuotaTree,
        usage: QuotaUsage,
        flavors: Mapping[str, ResourceFlavor],
        oracle: PreemptionOracle,
        enable_fair_sharing: bool,
        tas_check: TASCheck | None,
        topology_levels: Mapping[str, Sequence[str]] | None,
        version: _Version,
        start_flavor: Mapping[tuple[int, str], int] | None,
    ) -> None:
        self.wl, self.cq, self.tree, self.usage = wl, cq, tree, usage
        self.flavors, self.oracle = flavors, oracle
        self.fair_sharing = enable_fair_sharing
        self.tas_check, self.topology_levels = tas_check, topology_levels
        self.v = version
        self.start_flavor = start_flavor or {}
        names = cq.flavor_names()
        self.tas_flavors = {
            n for n in names if n in flavors and flavors[n].topology_name is not None
        }
        self.tas_only = bool(names) and all(n in self.tas_flavors for n in names)

    # -- TAS match ---------------------------------------------------------------------------

    def _implied(self, ps: KueuePodSet) -> bool:
        return not _explicit_tas(ps) and self.tas_only

    def _tas_requested(self, ps: KueuePodSet) -> bool:
        return _explicit_tas(ps) or self._implied(ps)

    def _tas_mismatch(self, ps: KueuePodSet, flavor: ResourceFlavor, rg: ResourceGroup) -> str:
        """``checkPodSetAndFlavorMatchForTAS``: "" when they match."""
        if self._tas_requested(ps):
            if self._implied(ps):
                return ""
            if flavor.topology_name is None:
                if not any(r in rg.covered_resources for r in ps.requests):
                    return ""
                return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
            if self.topology_levels is not None:
                levels = self.topology_levels.get(flavor.topology_name)
                if levels is None:
                    return f'Flavor "{flavor.name}" information missing in TAS cache'
                if not _has_level(ps, levels):
                    return f'Flavor "{flavor.name}" does not contain the requested level'
            return ""
        if flavor.topology_name is not None:
            return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
        return ""

    # -- one flavor against the PodSets ------------------------------------------------------

    def _check_flavor(self, fname: str, podsets: list[KueuePodSet], rg: ResourceGroup) -> _Status:
        """``checkFlavorForPodSets``: TAS match, untolerated taints, node selector / affinity."""
        status = _Status()
        flavor = self.flavors.get(fname)
        if flavor is None:
            status.reasons.append(f"flavor {fname} not found")
            return status
        if self.v.own_label_keys:
            keys = set(flavor.node_labels)
        else:
            keys = set()
            for f in rg.flavors:
                if f.name in self.flavors:
                    keys.update(self.flavors[f.name].node_labels)
        for ps in podsets:
            msg = self._tas_mismatch(ps, flavor, rg)
            if msg:
                status.reasons.append(msg)
                return status
            tols = (*ps.tolerations, *flavor.tolerations)
            for taint in flavor.node_taints:
                if taint.effect not in ("NoSchedule", "NoExecute"):
                    continue
                if not any(tolerates(t, taint) for t in tols):
                    status.reasons.append(
                        f"untolerated taint {_taint_text(taint)} in flavor {fname}"
                    )
                    return status
            if not _flavor_matches_selector(ps, flavor.node_labels, keys):
                status.reasons.append(f"flavor {fname} doesn't match node affinity")
                return status
        return status

    def _can_preempt_while_borrowing(self) -> bool:
        p = self.cq.preemption
        bwc = p.borrow_within_cohort is not None and p.borrow_within_cohort.policy != "Never"
        return bwc or (self.fair_sharing and p.reclaim_within_cohort != "Never")

    def _fits_resource_quota(
        self, fr: FlavorResource, assumed: int, request: int
    ) -> tuple[int, int, _Status | None]:
        """``fitsResourceQuota``: (preemption mode, borrowing level, status)."""
        status = _Status(no_fit_reason=WAITING_FOR_QUOTA)
        cq = self.cq.name
        available = self.tree.available(cq, fr[0], fr[1], self.usage)
        max_capacity = self.tree.potential_available(cq, fr[0], fr[1])
        val = assumed + request
        if val > max_capacity:
            status.reasons.append(
                f"insufficient quota for {fr[1]} in flavor {fr[0]}, previously considered "
                f"podsets requests ({format_amount(fr[1], assumed)}) + current podset request "
                f"({format_amount(fr[1], request)}) > maximum capacity "
                f"({format_amount(fr[1], max_capacity)})"
            )
            status.no_fit_reason = EXCEEDS_MAX_QUOTA
            return _NO_FIT, 0, status
        borrow, may_reclaim = self.tree.lowest_subtree_height(cq, fr, val, self.usage)
        if val <= available:
            return _FIT, borrow, None
        status.reasons.append(
            f"insufficient unused quota for {fr[1]} in flavor {fr[0]}, "
            f"{format_amount(fr[1], val - available)} more needed"
        )
        nominal = self.tree.cluster_queues[cq].quota(fr).nominal
        if nominal >= val or may_reclaim or self._can_preempt_while_borrowing():
            q = OracleQuery(self.tree, self.usage, cq, self.wl, fr[0], fr[1], val)
            possibility, borrow_after = self.oracle(q)
            mode = _POSSIBILITY[possibility]
            status.no_fit_reason = ""
            return mode, borrow_after, status
        return _NO_FIT, borrow, status

    def find_flavor(
        self,
        ps_ids: list[int],
        requests: Mapping[str, int],
        res_name: str,
        assigned: Mapping[FlavorResource, int],
    ) -> tuple[dict[str, FlavorAssignment] | None, _Status | None, list[FlavorAttempt]]:
        """``findFlavorForPodSets``: the flavor for every resource of ``res_name``'s group."""
        rg = self.cq.group_of(res_name)
        if rg is None:
            return None, _Status([f"resource {res_name} unavailable in ClusterQueue"]), []
        status = _Status()
        reqs = {r: q for r, q in sorted(requests.items()) if r in rg.covered_resources}
        podsets = [self.wl.podsets[i] for i in ps_ids]
        best: dict[str, FlavorAssignment] | None = None
        best_mode = _WORST
        attempts: list[FlavorAttempt] = []
        attempted = -1
        n = len(rg.flavors)
        for idx in range(self.start_flavor.get((ps_ids[0], res_name), 0), n):
            attempted = idx
            fname = rg.flavors[idx].name
            fstatus = self._check_flavor(fname, podsets, rg)
            if fstatus.reasons or fstatus.error:
                status.reasons += fstatus.reasons
                attempts.append(
                    FlavorAttempt(
                        fname,
                        Mode.NoFit,
                        reasons=tuple(fstatus.reasons),
                        no_fit_reason=NO_MATCHING_FLAVOR,
                    )
                )
                continue
            assignments: dict[str, FlavorAssignment] = {}
            rep = _BEST
            max_borrow = 0
            flavor_reasons: list[str] = []
            nfr = ""
            for r, val in reqs.items():
                fr = (fname, r)
                pm, borrow, s = self._fits_resource_quota(fr, assigned.get(fr, 0), val)
                if s is not None:
                    flavor_reasons += s.reasons
                    status.reasons += s.reasons
                    nfr = _most_severe(nfr, s.no_fit_reason)
                max_borrow = max(max_borrow, borrow)
                mode = (pm, borrow)
                if _is_preferred(rep, mode, self.cq, self.v):
                    rep = mode
                if rep[0] == _NO_FIT:
                    continue
                assignments[r] = FlavorAssignment(fname, _assignment_mode(pm), borrow=borrow)
            attempts.append(
                FlavorAttempt(
                    fname,
                    _assignment_mode(rep[0]),
                    max_borrow,
                    _POSSIBILITY_NAME.get(rep[0]),
                    tuple(sorted(flavor_reasons)),
                    nfr,
                )
            )
            if not _should_try_next(rep, self.cq):
                best, best_mode = assignments, rep
                break
            if _is_preferred(rep, best_mode, self.cq, self.v):
                best, best_mode = assignments, rep
        if best is not None:
            tried = -1 if attempted == n - 1 else attempted
            best = {r: FlavorAssignment(f.name, f.mode, tried, f.borrow) for r, f in best.items()}
        if best_mode[0] == _FIT:
            return best, None, attempts
        return best, status, attempts

    # -- the whole workload ------------------------------------------------------------------

    def assign(self, counts: Sequence[int] | None) -> Assignment:
        wl = self.wl
        reclaim = wl.reclaimable_pods
        has_pods_quota = self.cq.group_of("pods") is not None
        totals: list[dict[str, int]] = []
        ps_counts: list[int] = []
        for i, ps in enumerate(wl.podsets):
            count = ps.count - min(reclaim.get(ps.name, 0), ps.count)
            if counts and count != 0:  # PodSetResources.ScaledTo keeps a PodSet of 0 pods
                count = counts[i]
            req = {r: max(0, q) * count for r, q in ps.requests.items()}
            if has_pods_quota:
                req["pods"] = count
            totals.append(dict(sorted(req.items())))
            ps_counts.append(count)
        groups: dict[str, list[int]] = {}
        for i, ps in enumerate(wl.podsets):
            tr = ps.topology_request
            key = tr.podset_group if tr is not None and tr.podset_group else str(i)
            groups.setdefault(key, []).append(i)
        out = Assignment()
        for ids in groups.values():
            requests: dict[str, int] = {}
            for i in ids:
                for r, q in totals[i].items():
                    requests[r] = requests.get(r, 0) + q
            considered: dict[str, FlavorAttempt] = {}
            group_flavors: dict[str, FlavorAssignment] | None = {}
            group_status = _Status()
            for res in sorted(requests):
                q = requests[res]
                if self.cq.group_of(res) is None and q == 0:
                    continue  # kueue #8079
                assert group_flavors is not None
                if res in group_flavors:
                    continue
                found, status, attempts = self.find_flavor(ids, requests, res, out.usage)
                self._merge_attempts(considered, attempts, res)
                if (status is not None and status.error) or (not found and requests):
                    group_flavors = None
                    group_status = status or _Status()
                    break
                group_flavors.update(found or {})
                if status is not None:
                    group_status.reasons += status.reasons
            final = tuple(considered[k] for k in sorted(considered))
            failed = False
            for i in ids:
                ps = wl.podsets[i]
                flv = self._resolve_podset_flavors(ps, totals[i], group_flavors or {})
                psa = PodSetAssignment(
                    ps.name,
                    flv,
                    list(group_status.reasons),
                    group_status.error,
                    totals[i],
                    ps_counts[i],
                    final,
                )
                out._append(totals[i], psa)
                if psa.error is not None or (totals[i] and not flv):
                    failed = True
            if failed:
                self._resolve_no_fit_reason(out)
                return out
        if out.representative_mode() == Mode.NoFit:
            self._resolve_no_fit_reason(out)
            return out
        self._tas(out)
        self._resolve_no_fit_reason(out)
        return out

    def _resolve_podset_flavors(
        self, ps: KueuePodSet, requests: Mapping[str, int], group: Mapping[str, FlavorAssignment]
    ) -> dict[str, FlavorAssignment]:
        """``resolvePodSetFlavors``: the group's flavors for the resources this PodSet requests;
        a PodSet requesting none in a PodSet group keeps the group's TAS flavors."""
        if requests:
            return {r: f for r, f in group.items() if r in requests}
        if ps.topology_request is not None and ps.topology_request.podset_group:
            return {r: f for r, f in group.items() if f.name in self.tas_flavors}
        return {}

    def _merge_attempts(
        self, dst: dict[str, FlavorAttempt], src: list[FlavorAttempt], res: str
    ) -> None:
        """``mergeFlavorAttemptsForResource``: the worst outcome per flavor over resources, and
        "flavor F does not provide resource R" for a flavor of R's group not tried for R."""
        for at in src:
            old = dst.get(at.flavor)
            if old is None:
                dst[at.flavor] = FlavorAttempt(
                    at.flavor,
                    at.mode,
                    at.borrow,
                    at.preemption_possibility,
                    tuple(sorted(set(at.reasons))),
                    at.no_fit_reason,
                )
                continue
            pp = old.preemption_possibility
            if at.preemption_possibility is not None and (
                pp is None or _POSSIBILITY[at.preemption_possibility] < _POSSIBILITY[pp]
            ):
                pp = at.preemption_possibility
            dst[at.flavor] = FlavorAttempt(
                at.flavor,
                min(at.mode, old.mode),
                max(at.borrow, old.borrow),
                pp,
                tuple(sorted(set(old.reasons) | set(at.reasons))),
                _most_severe(old.no_fit_reason, at.no_fit_reason),
            )
        if not src:
            return
        rg = self.cq.group_of(res)
        rg_flavors = {f.name for f in rg.flavors} if rg else set()
        present = {at.flavor for at in src}
        for flv, at in list(dst.items()):
            if flv in rg_flavors and flv not in present:
                msg = f"flavor {flv} does not provide resource {res}"
                dst[flv] = FlavorAttempt(
                    flv,
                    Mode.NoFit,
                    at.borrow,
                    at.preemption_possibility,
                    tuple(sorted(set(at.reasons) | {msg})),
                    NO_MATCHING_FLAVOR,
                )

    def _resolve_no_fit_reason(self, a: Assignment) -> None:
        """``resolveNoFitReason``: per NoFit PodSet the least severe reason of each resource
        group's flavors, the most severe over groups and PodSets."""
        if a.representative_mode() != Mode.NoFit:
            return
        overall = ""
        for ps in a.podsets:
            if ps.representative_mode() != Mode.NoFit:
                continue
            if not ps.attempts:
                overall = _most_severe(overall, NO_MATCHING_FLAVOR)
                continue
            rg_min: dict[int, str] = {}
            for i, at in enumerate(ps.attempts):
                if at.mode != Mode.NoFit:
                    continue
                idxs = [
                    j
                    for j, g in enumerate(self.cq.resource_groups)
                    if at.flavor in {f.name for f in g.flavors}
                ] or [-1 - i]
                for j in idxs:
                    old = rg_min.get(j)
                    if old is None or _SEVERITY.get(at.no_fit_reason, 0) < _SEVERITY.get(old, 0):
                        rg_min[j] = at.no_fit_reason
            ps_reason = ""
            for r in rg_min.values():
                ps_reason = _most_severe(ps_reason, r)
            overall = _most_severe(overall, ps_reason)
        a.no_fit_reason = overall

    def _tas(self, a: Assignment) -> None:
        """The TAS step of ``assignFlavors`` through ``tas_check``."""
        requests: dict[str, list[TASRequest]] = {}
        for ps, psa in zip(self.wl.podsets, a.podsets, strict=True):
            if not self._tas_requested(ps) or psa.error is not None or psa.count == 0:
                continue
            tas = sorted({f.name for f in psa.flavors.values() if f.name in self.tas_flavors})
            if not self.tas_flavors:
                psa.error = "workload requires Topology, but there is no TAS cache information"
            elif not tas:
                psa.error = "no TAS flavor assigned"
            elif len(tas) > 1:
                psa.error = f"more than one TAS flavor assigned: {', '.join(tas)}"
            if psa.error is not None:
                a._mode = None
                continue
            tr = ps.topology_request
            requests.setdefault(tas[0], []).append(
                TASRequest(
                    ps, psa.count, tas[0], self._implied(ps), tr.podset_group if tr else None
                )
            )
        if self.tas_check is None:
            return

        def run(simulate_empty: bool) -> tuple[str, str, str] | None:
            assert self.tas_check is not None
            for flavor in sorted(requests):
                failure = self.tas_check(requests[flavor], flavor, simulate_empty)
                if failure is not None:
                    return failure[0], failure[1], flavor
            return None

        if a.representative_mode() == Mode.Fit:
            failure = run(False)
            if failure is not None:
                for psa in a.podsets:
                    if psa.name == failure[0]:
                        psa.reasons.append(failure[1])
                a._update_mode(failure[0], Mode.Preempt)
        if a.representative_mode() == Mode.Preempt:
            failure = run(True)
            if failure is not None:
                # markFlavorAttempt: Go's PodSets of one group share the attempts' backing
                # array, so the mark shows on every PodSet of the failing one's group.
                shared = next(p.attempts for p in a.podsets if p.name == failure[0])
                marked = tuple(
                    FlavorAttempt(
                        at.flavor,
                        Mode.NoFit,
                        at.borrow,
                        at.preemption_possibility,
                        at.reasons,
                        TOPOLOGY_PLACEMENT_FAILED,
                    )
                    if at.flavor == failure[2]
                    else at
                    for at in shared
                )
                for psa in a.podsets:
                    if psa.attempts is shared:
                        psa.attempts = marked
                a._update_mode(failure[0], Mode.NoFit)
            else:
                for reqs in requests.values():
                    for r in reqs:
                        a._update_mode(r.podset.name, Mode.Preempt)


def assign_flavors(
    wl: KueueWorkload,
    cq: ClusterQueue,
    tree: QuotaTree,
    usage: QuotaUsage,
    flavors: Mapping[str, ResourceFlavor],
    *,
    counts: Sequence[int] | None = None,
    oracle: PreemptionOracle = no_candidates_oracle,
    enable_fair_sharing: bool = False,
    tas_check: TASCheck | None = None,
    topology_levels: Mapping[str, Sequence[str]] | None = None,
    version: str = "0.19",
    start_flavor: Mapping[tuple[int, str], int] | None = None,
) -> Assignment:
    """Kueue's ``FlavorAssigner.Assign`` for ``wl`` in ``cq`` against ``usage`` (not changed).

    ``counts``: pods per PodSet (partial admission), default each PodSet's count minus its
    reclaimable pods. ``flavors``: the ResourceFlavors by name (``KueueState.flavors``).
    ``oracle``: see the module docstring. ``topology_levels``: Topology name -> its level label
    keys, for the TAS level check (None: not checked). ``start_flavor``: (first PodSet index of
    the group, resource) -> flavor index to start from, Kueue's ``LastAssignment`` carried
    between scheduling cycles (default: the first flavor).
    """
    return _Assigner(
        wl,
        cq,
        tree,
        usage,
        flavors,
        oracle,
        enable_fair_sharing,
        tas_check,
        topology_levels,
        _Version.parse(version),
        start_flavor,
    ).assign(counts)


def flavor_allowed(
    state: KueueState,
    cq: ClusterQueue,
    group: int,
    ps: KueuePodSet,
    flavor: str,
    topology_levels: Mapping[str, Sequence[str]] | None = None,
) -> bool:
    """May the assigner give ``flavor`` of ``cq``'s resource group ``group`` to ``ps``, quota
    aside (``checkFlavorForPodSets``: the TAS match, the flavor's taints, nodeSelector /
    affinity)? The assigner's own check, asked for one PodSet: the exact engine's flavor choices
    and the reading of a placement use it (``topology_levels``: Topology name -> levels, for the
    TAS level check)."""
    wl = KueueWorkload(namespace="", name="", podsets=(ps,))
    assigner = _Assigner(
        wl,
        cq,
        None,  # type: ignore[arg-type]  (the flavor check reads no quota)
        None,  # type: ignore[arg-type]
        state.flavors,
        no_candidates_oracle,
        False,
        None,
        topology_levels,
        _Version.parse(state.version),
        None,
    )
    status = assigner._check_flavor(flavor, [ps], cq.resource_groups[group])
    return not status.reasons and status.error is None
