"""ember's coverage of the PyTorch API that public training code uses must not go down.

docs/coverage holds the derived tables of a scan of public repositories (tools/api_coverage.py;
no corpus is needed here): this recomputes the figures against the current ember and compares
them with those committed in docs/coverage/coverage.json, which docs/api.md states.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "docs" / "coverage"

_spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "tools" / "api_coverage.py")
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)


@pytest.fixture(scope="module")
def figures():
    return api_coverage.measure(TABLES)


def test_coverage_does_not_fall_below_the_committed_figures(figures):
    committed = json.loads((TABLES / "coverage.json").read_text())
    for key in ("files_covered_pct", "entries_covered_pct", "occurrences_covered_pct"):
        assert figures[key] >= committed[key], (
            f"{key}: {figures[key]} < {committed[key]} committed; newly missing: {figures['missing'][:20]}")


def test_api_doc_states_the_committed_figures():
    committed = json.loads((TABLES / "coverage.json").read_text())
    doc = (ROOT / "docs" / "api.md").read_text()
    for key in ("files_covered_pct", "entries_covered_pct", "occurrences_covered_pct"):
        assert f"{committed[key]}%" in doc, f"docs/api.md does not state {key} = {committed[key]}%"


def test_tables_are_consistent():
    usage, files = api_coverage.load(TABLES)
    counted = [0] * len(usage)
    for rows in files:
        assert len(set(rows)) == len(rows)
        for r in rows:
            counted[r] += 1
    assert counted == [f for _, f, _ in usage], "usage.tsv's file counts differ from files.tsv"
    repos = [line.split("\t") for line in (TABLES / "repos.tsv").read_text().splitlines() if line[0] != "#"]
    assert len(repos) >= 50 and sum(int(n) for _, _, n in repos) == len(files) >= 1000
    assert all(len(commit) == 40 for _, commit, _ in repos)


@pytest.mark.parametrize("entry, expected", [
    ("torch.nn.functional.relu", True), ("torch.nn.Linear(bias=)", True), (".view[T]", True),
    (".eval[M]", True), (".sum[T](keepdim=)", True), ("torch.no_such_thing", False),
    ("torch.nn.Linear(no_such_keyword=)", False), (".no_such_method[T]", False),
])
def test_entries_resolve_in_ember_as_in_torch(entry, expected):
    assert api_coverage.has_entry(entry, "ember") is expected
    assert api_coverage.has_entry(entry, "torch") is expected
