"""The CLI is a client of the library face (issue 38, "one options and document model from flag to
Result to suite row"): ``solve``, ``why``, ``diff``, ``diff --suite`` and ``whatif`` run their
engines through :mod:`gangplan.api` with the options model of :mod:`gangplan.models.options`, and
no ``gangplan/cli*.py`` module imports an engine.

The run-time test wraps the api entry points and the two engines: every engine run must happen
inside an api call (the CLI's own ``solve_greedy`` before this change would fail it), and each
command must call the entry point it is meant to."""

from __future__ import annotations

import ast
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gangplan.api as api
import gangplan.solver.exact as exact_engine
import gangplan.solver.greedy as greedy_engine
from gangplan.cli import app, command_tree
from gangplan.models import defaults as D
from gangplan.models.options import DiffOptions, EngineOptions, SolveOptions
from gangplan.models.version import NEWEST, KubeVersion

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase"
SMALL = SHOWCASE / "driver-without-selector.yaml"
GB200 = SHOWCASE / "tas-nvl72-fragmentation.yaml"
runner = CliRunner()

ENTRY_POINTS = ("solve", "diff", "whatif", "suite")
ENGINES = ((greedy_engine, "solve_greedy"), (exact_engine, "solve_exact"))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts api calls (``api.solve``, ``api.solve:exact`` ...) and engine runs; an engine run
    outside an api call counts as ``outside:<engine>``."""
    seen: Counter = Counter()
    depth = [0]

    def entry(name: str, real):
        def wrapper(*args, **kwargs):
            engine = args[1] if name == "solve" and len(args) > 1 else kwargs.get("engine", "")
            seen[f"api.{name}"] += 1
            if engine:
                seen[f"api.{name}:{engine}"] += 1
            depth[0] += 1
            try:
                return real(*args, **kwargs)
            finally:
                depth[0] -= 1

        return wrapper

    def engine(name: str, real):
        def wrapper(*args, **kwargs):
            seen[name if depth[0] else f"outside:{name}"] += 1
            return real(*args, **kwargs)

        return wrapper

    for name in ENTRY_POINTS:
        monkeypatch.setattr(api, name, entry(name, getattr(api, name)))
    for module, name in ENGINES:
        monkeypatch.setattr(module, name, engine(name, getattr(module, name)))
    return seen


def _outside(seen: Counter) -> list[str]:
    return sorted(k for k in seen if k.startswith("outside:"))


def test_solve_runs_greedy_through_api_solve(calls: Counter) -> None:
    res = runner.invoke(app, ["solve", str(SMALL), "--json"])
    assert res.exit_code == 0, res.output
    assert calls["api.solve"] == 1 and calls["api.solve:greedy"] == 1 and calls["solve_greedy"] == 1
    assert _outside(calls) == [] and calls["solve_exact"] == 0


def test_solve_exact_is_two_api_solves_the_exact_one_seeded_with_greedy(
    calls: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    hints = []
    real = api.solve

    def record_hint(*args, **kwargs):
        hints.append(kwargs.get("hint"))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "solve", record_hint)
    res = runner.invoke(
        app,
        ["solve", str(GB200), "--engine", "exact", "--explain", "ml/train-0"],
        env={"COLUMNS": "100"},
    )
    assert res.exit_code == 0, res.output
    assert calls["api.solve:greedy"] == 1 and calls["api.solve:exact"] == 1
    assert calls["solve_greedy"] == 1 and calls["solve_exact"] == 1 and _outside(calls) == []
    assert hints[0] is None and hints[1] is not None and hints[1].engine == "greedy"


def test_why_runs_greedy_through_api_solve(calls: Counter) -> None:
    res = runner.invoke(app, ["why", str(SMALL), "worker-1", "--json"])
    assert res.exit_code == 0, res.output
    assert calls["api.solve:greedy"] == 1 and calls["solve_greedy"] == 1 and _outside(calls) == []


def test_diff_runs_its_engines_inside_api_diff(calls: Counter) -> None:
    res = runner.invoke(app, ["diff", str(GB200), "--json", "--trace", "none"])
    assert res.exit_code == 3, res.output
    assert calls["api.diff"] == 1 and calls["api.solve"] == 0
    assert calls["solve_greedy"] >= 1 and calls["solve_exact"] >= 1 and _outside(calls) == []


def test_diff_suite_runs_through_api_suite(calls: Counter, tmp_path: Path) -> None:
    for name in ("driver-without-selector.yaml", "gang-fits.yaml"):
        shutil.copy(SHOWCASE / name, tmp_path / name)
    res = runner.invoke(app, ["diff", "--suite", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    assert calls["api.suite"] == 1 and calls["api.diff"] == 0
    assert calls["solve_greedy"] >= 2 and calls["solve_exact"] >= 2 and _outside(calls) == []


def test_whatif_runs_through_api_whatif(calls: Counter) -> None:
    res = runner.invoke(app, ["whatif", str(SMALL), "--scoring", "MostAllocated", "--json"])
    assert res.exit_code == 0, res.output
    assert calls["api.whatif"] == 1
    assert calls["solve_greedy"] >= 2 and calls["solve_exact"] >= 2 and _outside(calls) == []


def test_a_flag_the_options_model_refuses_is_bad_input_naming_the_flag() -> None:
    """``whatif --time-limit`` has no range of its own: the options model refuses 0 as the API does."""
    res = runner.invoke(
        app, ["whatif", str(SMALL), "--scoring", "MostAllocated", "--time-limit", "0"]
    )
    assert res.exit_code == 2
    assert "error: <arguments>: --time-limit: must be positive, not 0.0" in res.output
    with pytest.raises(
        ValueError, match="whatif\\(\\) option 'time_limit' must be positive, not 0"
    ):
        api.whatif(None, [], sources=("x",), time_limit=0)  # type: ignore[arg-type]


# ---- what the CLI imports ----------------------------------------------------------------------
ENGINE_MODULES = ("gangplan.solver.greedy", "gangplan.solver.exact", "gangplan.solver.diff")
ENGINE_NAMES = {
    "solve_greedy",
    "solve_exact",
    "diff_snapshot",
    "run_whatif",
    "run_suite",
    "run_scenario",
}


def _engine_imports(path: Path) -> list[str]:
    """Each import in ``path`` (module level or inside a function) of an engine module, or of an
    engine function from anywhere, as ``line: module[.name]``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: {a.name}" for a in node.names if a.name.startswith(ENGINE_MODULES)
            ]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            if (
                node.module.startswith(ENGINE_MODULES)
                or node.module == "gangplan.solver"
                and {a.name for a in node.names} & {"greedy", "exact", "diff"}
            ):
                found += [f"{node.lineno}: {n}" for n in names]
            else:
                found += [
                    f"{node.lineno}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name in ENGINE_NAMES
                ]
    return found


def test_no_cli_module_imports_an_engine() -> None:
    modules = sorted((ROOT / "gangplan").glob("cli*.py"))
    assert {p.name for p in modules} >= {"cli.py", "cli_common.py", "cli_solve.py", "cli_diff.py"}
    assert {p.name: _engine_imports(p) for p in modules} == {p.name: [] for p in modules}


def test_the_import_check_sees_a_lazy_engine_import(tmp_path: Path) -> None:
    sample = tmp_path / "cli_x.py"
    sample.write_text(
        "import gangplan.api\n\ndef f():\n    from gangplan.solver.greedy import solve_greedy\n    from gangplan.solver import exact\n"
        "    from gangplan.solver.whatif import run_whatif, WhatIfRow\n    import gangplan.solver.diff.run\n"
    )
    assert _engine_imports(sample) == [
        "4: gangplan.solver.greedy.solve_greedy",
        "5: gangplan.solver.exact",
        "6: gangplan.solver.whatif.run_whatif",
        "7: gangplan.solver.diff.run",
    ]


# ---- one options model: the flags' defaults and choices are the model's -----------------------
def _params(command: str) -> dict:
    return {p.name: p for p in command_tree().commands[command].params}


@pytest.mark.parametrize(
    ("command", "model"),
    [
        ("solve", SolveOptions),
        ("why", SolveOptions),
        ("diff", DiffOptions),
        ("whatif", DiffOptions),
    ],
)
def test_each_engine_flag_defaults_to_the_options_model(
    command: str, model: type[EngineOptions]
) -> None:
    params = _params(command)
    shared = sorted(set(params) & set(model.model_fields))
    assert {"seed", "tie_break", "preemption", "kube_version"} <= set(shared)
    for name in shared:
        default = params[name].default
        assert getattr(default, "value", default) == model.model_fields[name].default, (
            command,
            name,
        )


def test_the_defaults_come_from_one_module() -> None:
    o = DiffOptions()
    assert (
        o.time_limit,
        o.probe_time_limit,
        o.workers,
        o.seed,
        o.tie_break,
        o.samples,
        o.explain,
    ) == (D.TIME_LIMIT, D.PROBE_TIME_LIMIT, D.WORKERS, D.SEED, D.TIE_BREAK, D.SAMPLES, D.EXPLAIN)
    assert SolveOptions().objective == D.OBJECTIVE
    assert _params("solve")["engine"].default == D.ENGINE


@pytest.mark.parametrize(
    "command", ["inspect", "validate", "expand", "solve", "why", "diff", "whatif"]
)
def test_kube_version_choices_and_default_are_the_version_model(command: str) -> None:
    p = _params(command)["kube_version"]
    assert p.type_descriptor.annotation is KubeVersion
    assert p.show_default == NEWEST.value


def test_the_cli_spells_no_kubernetes_version() -> None:
    """The versions and the newest release are written once, in gangplan.models.version."""
    for path in sorted((ROOT / "gangplan").glob("cli*.py")):
        assert not [v.value for v in KubeVersion if f'"{v.value}"' in path.read_text()], path.name
