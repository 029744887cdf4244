"""The rank test files (tests/ranks/rank_*.py: ordinary pytest tests) run on several ranks by ember's launcher;
each of their tests passes here when it passed on every rank."""

import ast
import os
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")

from conftest import ROOT  # noqa: E402

RANKS = os.path.join(ROOT, "tests", "ranks")
FAMILIES = {"rank_ddp_eval.py": 2}  # file: world size
_runs: dict = {}


def names_in(family: str) -> list[str]:
    with open(os.path.join(RANKS, family)) as f:
        tree = ast.parse(f.read())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def run_family(family: str, nproc: int, tmp_path_factory):
    """Launch the family once: {test name: {rank: outcome}} and the job."""
    if family not in _runs:
        out = tmp_path_factory.mktemp("ranks")
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "--timeout", "170",
               "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "rank_plugin", os.path.join("tests", "ranks", family)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, RANKS]), "RANK_RESULTS_DIR": str(out)}
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        results: dict = {}
        for rank in range(nproc):
            path = out / f"rank{rank}.txt"
            for line in path.read_text().splitlines() if path.exists() else []:
                name, when, outcome = line.split(" ")
                if outcome != "passed" or when == "call":
                    results.setdefault(name, {})[rank] = outcome if when == "call" else f"{outcome} in {when}"
        _runs[family] = (results, proc)
    return _runs[family]


@pytest.mark.parametrize("family,name", [(f, t) for f in FAMILIES for t in names_in(f)])
def test_on_every_rank(family, name, tmp_path_factory):
    nproc = FAMILIES[family]
    results, proc = run_family(family, nproc, tmp_path_factory)
    outcomes = results.get(name, {})
    assert outcomes == {r: "passed" for r in range(nproc)}, (
        f"{family}::{name} on each rank: {outcomes} (exit code {proc.returncode})\n"
        + proc.stdout[-4000:] + proc.stderr[-3000:])


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_job_ends_cleanly(family, tmp_path_factory):
    results, proc = run_family(family, FAMILIES[family], tmp_path_factory)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    assert set(results) == set(names_in(family))
