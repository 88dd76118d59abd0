"""The Kubernetes quantity grammar (``k8s.io/apimachinery/pkg/api/resource/quantity.go``) and the
scheduler integers derived from it; every expected value below was worked out by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gangplan.models.quantity import (
    QuantityError,
    format_quantity,
    parse_quantity,
    to_scheduler_int,
)

Ki, Mi, Gi = 2**10, 2**20, 2**30

PARSE_CASES = [
    ("milli suffix is a thousandth", "100m", Fraction(1, 10)),
    ("a plain decimal keeps its fraction", "1.5", Fraction(3, 2)),
    ("Gi is a power of two", "2Gi", 2 * Gi),
    ("M is a power of ten", "500M", 500 * 10**6),
    ("a lowercase e is an exponent", "1e3", Fraction(1000)),
    ("an uppercase E followed by digits is an exponent", "1E3", Fraction(1000)),
    ("a bare uppercase E is the exa suffix", "1E", Fraction(10**18)),
    ("a negative exponent gives a fraction", "1e-3", Fraction(1, 1000)),
    ("an exponent may carry a plus sign", "2e+2", Fraction(200)),
    ("a fractional mantissa with an exponent", "1.5e3", Fraction(1500)),
    ("a leading dot is a fraction", ".5", Fraction(1, 2)),
    ("a trailing dot is allowed", "1.", Fraction(1)),
    ("a leading plus sign is allowed", "+1", Fraction(1)),
    ("a minus sign parses (requests reject it later)", "-1", Fraction(-1)),
    ("a fractional binary quantity", "1.5Gi", 3 * Gi // 2),
    ("Ki is 1024", "1Ki", Fraction(Ki)),
    ("k is 1000", "1k", Fraction(1000)),
    ("Ei is two to the sixtieth", "1Ei", Fraction(2**60)),
    ("nano and micro suffixes", "5n", Fraction(5, 10**9)),
    ("micro suffix", "7u", Fraction(7, 10**6)),
    ("one tenth stays exact", "0.1", Fraction(1, 10)),
    ("an integer from YAML", 4, Fraction(4)),
    ("a float from YAML is read through its decimal text", 0.1, Fraction(1, 10)),
    ("a float with an exponent from YAML", 1e20, Fraction(10**20)),
    ("surrounding whitespace is trimmed as UnmarshalJSON does", " 2Gi ", 2 * Gi),
    ("minus zero is zero", "-0", Fraction(0)),
    # "Things written by trolls" in upstream's TestQuantityParse / TestParseQuantityString:
    ("a lone dot is zero upstream", ".", Fraction(0)),
    ("a signed lone dot is zero upstream", "-.", Fraction(0)),
    ("a trailing dot before a suffix", "1.G", Fraction(10**9)),
    ("a bare fraction with a suffix", ".0001k", Fraction(1, 10)),
    ("a fractional Ki", "100.035Ki", Fraction(100035 * 1024, 1000)),
    ("a fractional exponent mantissa", "1.3E+6", Fraction(1_300_000)),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES]
)
def test_parse_quantity_gives_the_exact_value(text, expected):
    assert parse_quantity(text) == expected


GARBAGE = [
    ("two dots", "1.2.3"),
    ("a suffix without a number", "Gi"),
    ("a space between number and suffix", "1 Gi"),
    ("the empty string", ""),
    ("an exponent without digits", "1e"),
    ("a sign without a number", "+"),
    ("upstream: two dots before a suffix", "1.1.M"),
    ("upstream: a plus inside the number", "1+1.0M"),
    ("upstream: mi is not a suffix", "0.1mi"),
    ("upstream: am is not a suffix", "0.1am"),
    ("upstream: a word", "aoeu"),
    ("upstream: i alone is not a suffix", ".5i"),
    ("upstream: a negative with i", "-3.01i"),
    ("upstream: an exponent sign without digits", "-3.01e-"),
    ("an inner space", "1 000"),
    ("an unknown suffix K", "1K"),
    ("an exponent followed by a suffix", "1e3Gi"),
    ("hexadecimal", "0x10"),
    ("digit separators", "1_000"),
    ("a doubled sign", "+-1"),
    ("a list", ["1"]),
    ("a boolean true", True),
    ("a boolean false", False),
    ("null", None),
    ("a mapping", {"cpu": 1}),
    ("infinity", float("inf")),
    ("not a number", float("nan")),
    ("an exponent out of range", "1e999"),
    ("a number longer than Python's int conversion limit", "1" * 5000),
]


@pytest.mark.parametrize("value", [c[1] for c in GARBAGE], ids=[c[0] for c in GARBAGE])
def test_parse_quantity_rejects_garbage_with_quantity_error(value):
    with pytest.raises(QuantityError):
        parse_quantity(value)


SCHEDULER_INT_CASES = [
    ("cpu in whole cores becomes millicores", "cpu", "2", 2000),
    ("cpu in millicores stays", "cpu", "100m", 100),
    ("a fractional core", "cpu", "1.5", 1500),
    ("a tenth of a core", "cpu", "0.1", 100),
    ("a sub-millicore cpu rounds up to 1m", "cpu", "0.0001", 1),
    ("250.5m rounds up like MilliValue", "cpu", "250.5m", 251),
    ("a YAML float cpu", "cpu", 0.25, 250),
    ("memory in Gi is bytes", "memory", "2Gi", 2 * Gi),
    ("memory in M is bytes", "memory", "500M", 500_000_000),
    ("memory in milli-bytes rounds up like Value", "memory", "1500m", 2),
    ("an exponent memory value", "memory", "1e3", 1000),
    ("a GPU count", "nvidia.com/gpu", "8", 8),
    ("pods", "pods", "110", 110),
    ("zero is allowed", "cpu", "0", 0),
]


@pytest.mark.parametrize(
    ("resource", "value", "expected"),
    [c[1:] for c in SCHEDULER_INT_CASES],
    ids=[c[0] for c in SCHEDULER_INT_CASES],
)
def test_to_scheduler_int_gives_the_scheduler_integer(resource, value, expected):
    assert to_scheduler_int(resource, value) == expected


@pytest.mark.parametrize(
    "value",
    ["-1", "-100m", -2, "-0.5Gi"],
    ids=["minus one", "minus 100m", "a negative int", "a negative binary"],
)
def test_negative_quantities_are_rejected_for_requests(value):
    with pytest.raises(QuantityError, match="negative"):
        to_scheduler_int("cpu", value)


FORMAT_CASES = [
    ("whole cores print without a suffix", "cpu", 2000, "2"),
    ("partial cores print in millicores", "cpu", 1500, "1500m"),
    ("memory prints the largest exact binary suffix", "memory", 2 * Gi, "2Gi"),
    ("memory that is not a binary multiple prints plain bytes", "memory", 500_000_000, "500000000"),
    ("1536Mi is not a whole Gi", "memory", 1536 * Mi, "1536Mi"),
    ("counts print plainly", "nvidia.com/gpu", 8, "8"),
    ("zero memory prints 0", "memory", 0, "0"),
]


@pytest.mark.parametrize(
    ("resource", "amount", "expected"),
    [c[1:] for c in FORMAT_CASES],
    ids=[c[0] for c in FORMAT_CASES],
)
def test_format_quantity_prints_short_exact_strings(resource, amount, expected):
    assert format_quantity(resource, amount) == expected


# ---- properties ---------------------------------------------------------------------------------
MULTIPLIERS = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "m": Fraction(1, 1000),
    "u": Fraction(1, 10**6),
    "n": Fraction(1, 10**9),
}


@given(n=st.integers(min_value=0, max_value=10**12), suffix=st.sampled_from(sorted(MULTIPLIERS)))
def test_an_integer_with_a_suffix_is_the_integer_times_the_multiplier(n, suffix):
    assert parse_quantity(f"{n}{suffix}") == n * MULTIPLIERS[suffix]


@given(
    n=st.integers(min_value=0, max_value=10**9), exponent=st.integers(min_value=-9, max_value=18)
)
def test_an_exponent_scales_by_a_power_of_ten(n, exponent):
    assert parse_quantity(f"{n}e{exponent}") == n * Fraction(10) ** exponent


@given(n=st.integers(min_value=0, max_value=10**9))
def test_n_milli_cpu_is_n_millicores(n):
    assert to_scheduler_int("cpu", f"{n}m") == n


@given(amount=st.integers(min_value=0, max_value=2**62))
def test_format_quantity_round_trips_cpu(amount):
    assert to_scheduler_int("cpu", format_quantity("cpu", amount)) == amount


@given(
    amount=st.integers(min_value=0, max_value=2**62),
    resource=st.sampled_from(["memory", "ephemeral-storage", "nvidia.com/gpu"]),
)
def test_format_quantity_round_trips_bytes_and_counts(amount, resource):
    assert to_scheduler_int(resource, format_quantity(resource, amount)) == amount


@given(text=st.text(max_size=12))
def test_any_text_parses_or_raises_quantity_error(text):
    try:
        value = parse_quantity(text)
    except QuantityError:
        return
    assert isinstance(value, Fraction)
