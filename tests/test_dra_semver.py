"""Semantic-version attributes in DRA selectors (gangplan.dra.semver): a ``version`` attribute is
a Semver in CEL with the Kubernetes semver library, as upstream's DRA compiler passes it
(``dynamic-resource-allocation/cel/compile.go`` ``getAttributeValue``, ``library.SemverLib``).

* precedence: semver.org 2.0.0 item 11's example chain, and blang ``Compare`` on build metadata;
* the library functions as ``semverlib.go``'s documentation examples state them;
* a selector ``driverVersion.isGreaterThan(semver('1.9.5'))`` picks the 1.10.0 device a string
  comparison would refuse, in the allocator and both engines, each Result through the validator;
* matchAttribute compares version strings exactly; a version and a string attribute differ;
* a slice with an invalid version exits 2 naming the field.
"""

from __future__ import annotations

import itertools

import pytest

from gangplan.dra.allocator import allocate
from gangplan.dra.cel import CelError, evaluate
from gangplan.dra.model import Constraint, Device, DeviceClass, DeviceRequest
from gangplan.dra.semver import Semver, SemverError, compare, normalize_and_parse, parse
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

DRIVER = "gpu.example.com"
CHAIN = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.9.0",
    "1.10.0",
    "2.0.0",
]
"""semver.org 2.0.0, item 11's precedence example, then the numeric minor order a string order breaks."""


def test_precedence_follows_semver_org():
    for (i, a), (j, b) in itertools.product(enumerate(CHAIN), repeat=2):
        assert compare(parse(a), parse(b)) == (i > j) - (i < j), (a, b)
    assert compare(parse("1.0.0+build.1"), parse("1.0.0+build.2")) == 0  # build metadata is ignored


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1.0",
        "v1.0.0",
        "01.0.0",
        "1.0.0-",
        "1.0.0-01",
        "1.0.0+",
        "1.0.0-a..b",
        "1.0.0-α",
        "200K",
        "Three",
    ],
)
def test_strict_parse_refuses(text):
    with pytest.raises(SemverError):
        parse(text)


def test_normalize_as_semverlib():
    assert normalize_and_parse("v1.0.0").core() == "1.0.0"
    assert normalize_and_parse("1.0").core() == "1.0.0"
    assert normalize_and_parse("01.01.01").core() == "1.1.1"
    with pytest.raises(SemverError):
        normalize_and_parse("1.0-rc")  # a short version cannot carry prerelease data


def _dev(name: str, version: str, **attrs) -> Device:
    return Device(
        driver=DRIVER,
        pool="p",
        slice="s",
        name=name,
        attributes={DRIVER: {"driverVersion": Semver(version), **attrs}},
    )


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # the semverlib.go documentation's examples, on a device of driverVersion 1.2.3
        ("semver('1.2.3').compareTo(semver('1.2.3')) == 0", True),
        ("semver('1.2.3').compareTo(semver('2.0.0')) == -1", True),
        ("semver('1.2.3').compareTo(semver('0.1.2')) == 1", True),
        ("semver('1.2.3').major() == 1", True),
        (
            "isSemver('1.0.0') && !isSemver('hello') && !isSemver('v1.0') && isSemver('v1.0', true)",
            True,
        ),
        (
            "semver('v1.0.0', true) == semver('1.0.0') && semver('1.0', true) == semver('1.0.0') && semver('01.01.01', true) == semver('1.1.1')",
            True,
        ),
        ("device.attributes['gpu.example.com'].driverVersion == semver('1.2.3+build.7')", True),
        (
            "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('1.2.3-rc.1'))",
            True,
        ),
        ("device.attributes['gpu.example.com'].driverVersion.isLessThan(semver('1.10.0'))", True),
        (
            "device.attributes['gpu.example.com'].driverVersion.minor() == 2 && device.attributes['gpu.example.com'].driverVersion.patch() == 3",
            True,
        ),
    ],
)
def test_library_functions(expr, want):
    assert evaluate(expr, _dev("d", "1.2.3")) is want


@pytest.mark.parametrize(
    "expr",
    [
        "semver('1.0') == semver('1.0.0')",
        "semver('200K').major() == 0",
        "'abc'.isGreaterThan('abd')",
    ],
)
def test_errors_fail_the_allocation(expr):
    with pytest.raises(CelError):
        evaluate(expr, _dev("d", "1.2.3"))


def test_allocator_picks_by_version_order_not_string_order():
    cls = {"gpu": DeviceClass(name="gpu", selectors=(f"device.driver == '{DRIVER}'",))}
    sel = (f"device.attributes['{DRIVER}'].driverVersion.isGreaterThan(semver('1.9.5'))",)
    devices = [_dev("old", "1.9.0"), _dev("new", "1.10.0")]
    got = allocate([("c", (DeviceRequest("r", "gpu", selectors=sel),))], devices, set(), cls)
    assert got == {"c": ((DRIVER, "p", "new"),)}


def test_match_attribute_compares_versions_exactly():
    """TestAllocator "with-constraint-not-matching-version-attribute" (allocator_testing.go),
    and a version against a string of the same text: different attribute types never match."""
    cls = {"gpu": DeviceClass(name="gpu", selectors=(f"device.driver == '{DRIVER}'",))}
    cons = {"c": (Constraint(kind="match", attribute=(DRIVER, "driverVersion"), requests=()),)}
    two = (DeviceRequest("r", "gpu", count=2),)
    assert (
        allocate(
            [("c", two)], [_dev("a", "1.0.0"), _dev("b", "2.0.0")], set(), cls, constraints=cons
        )
        is None
    )
    assert (
        allocate(
            [("c", two)], [_dev("a", "1.0.0"), _dev("b", "1.0.0")], set(), cls, constraints=cons
        )
        is not None
    )
    mixed = [
        _dev("a", "1.0.0"),
        Device(
            driver=DRIVER,
            pool="p",
            slice="s",
            name="b",
            attributes={DRIVER: {"driverVersion": "1.0.0"}},
        ),
    ]
    assert allocate([("c", two)], mixed, set(), cls, constraints=cons) is None


def _objects(version_b: str = "1.10.0") -> list[dict]:
    def node(n):
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
        }

    def slice_(n, version):
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{n}-s"},
            "spec": {
                "driver": DRIVER,
                "nodeName": n,
                "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                "devices": [
                    {"name": f"gpu-{i}", "attributes": {"driverVersion": {"version": version}}}
                    for i in range(2)
                ],
            },
        }

    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "new-driver", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "g",
                                "exactly": {
                                    "deviceClassName": "gpu",
                                    "selectors": [
                                        {
                                            "cel": {
                                                "expression": "device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('1.9.5'))"
                                            }
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                }
            },
        },
        node("a"),
        node("b"),
        slice_("a", "1.9.0"),
        slice_("b", version_b),
        *(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "new-driver"}],
                },
            }
            for i in range(3)
        ),
    ]


def test_both_engines_place_only_on_the_newer_driver():
    c = load_objects(_objects())
    assert not any("version attributes" in w for w in c.warnings)
    for res in (solve_greedy(c), solve_exact(c, time_limit=5)):
        assert validate(c, res) == []
        nodes = sorted(o.node for o in res.pods.values() if o.node is not None)
        assert nodes == ["b", "b"], res.engine  # two GPUs on b, none on a (1.9.0 < 1.9.5 < 1.10.0)


def test_an_invalid_version_is_refused_naming_the_field():
    with pytest.raises(
        SnapshotError,
        match=r"devices\[0\]\.attributes\.driverVersion\.version.*not a semantic version",
    ):
        load_objects(_objects(version_b="1.10"))
