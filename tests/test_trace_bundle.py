"""The trace copies shipped in ``tests/data/traces`` are the upstream files byte for byte: each
decompresses to the sha256 its README lists, and every file the ``traces`` tests read is there."""

from __future__ import annotations

import hashlib
import re

from conftest import BUNDLED, TRACE_FILES, missing_traces

from gangplan.io.compressed import open_text, resolve


def _readme_hashes() -> dict[str, str]:
    rows = re.findall(
        r"^\| `([^`]+)` \|.*?\| `([0-9a-f]{64})` \|",
        (BUNDLED / "README.md").read_text(),
        flags=re.M,
    )
    return dict(rows)


def test_every_file_the_trace_tests_read_is_shipped():
    assert missing_traces(BUNDLED) == []
    assert set(TRACE_FILES) <= set(_readme_hashes())


def test_each_copy_decompresses_to_the_upstream_bytes():
    hashes = _readme_hashes()
    assert len(hashes) == 8
    for name, digest in hashes.items():
        path = resolve(BUNDLED / name)
        assert path.suffix == ".xz", name
        with open_text(path) as f:
            data = f.read().encode("utf-8")
        assert hashlib.sha256(data).hexdigest() == digest, name
