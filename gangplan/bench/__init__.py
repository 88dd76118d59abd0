"""Benchmark support: deterministic instance generators (see :mod:`gangplan.bench.generators`)."""
