"""ember's coverage of the PyTorch API that public training code uses must not go down.

docs/coverage holds the derived tables of a scan of public repositories (tools/api_coverage.py;
no corpus is needed here): this recomputes the figures against the current ember and compares
them with those committed in docs/coverage/coverage.json, which docs/api.md states. The tables hold
PyTorch's verdict on each entry, so the figures need no PyTorch; the tests of the verdicts do.
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
    assert counted == [f for _, f, _, _ in usage], "usage.tsv's file counts differ from files.tsv"
    rows = [line for line in (TABLES / "usage.tsv").read_text().splitlines() if line[0] != "#"]
    assert all(line.split("\t")[3] in ("yes", "no") for line in rows), "usage.tsv lacks PyTorch's verdicts"
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
    pytest.importorskip("torch")
    assert api_coverage.has_entry(entry, "torch") is expected


@pytest.mark.parametrize("entry, expected", [
    # C methods and functions: judged by PyTorch's type stubs (any overload) ...
    (".sum[T](keepdim=)", True), (".sum[T](dtype=)", True), (".scatter[T](reduce=)", True),
    ("torch.gather(sparse_grad=)", True), ("torch.nn.functional.gelu(approximate=)", True),
    (".matmul[T](reduce=)", False), (".sort[T](key=)", False), (".take[T](indices=)", False),
    ("torch.gather(no_such_keyword=)", False), ("torch.nn.functional.gelu(no_such_keyword=)", False),
    # ... with the NumPy spellings its argument parser maps, where the own name exists
    (".sum[T](axis=)", True), (".mean[T](keepdims=)", True), ("torch.add(x2=)", True), ("torch.sum(a=)", True),
    (".repeat[T](axis=)", False),
    # Lightning's self.log and matplotlib's ax.scatter are not Tensor methods; Module's are Python
    (".log[T](prog_bar=)", False), (".scatter[T](color=)", False), (".to[TM](non_blocking=)", True),
    (".load_state_dict[M](strict=)", True), (".load_state_dict[M](no_such_keyword=)", False),
])
def test_pytorch_verdict_on_keywords(entry, expected):
    pytest.importorskip("torch")
    assert api_coverage.has_entry(entry, "torch") is expected


def test_committed_verdicts_are_the_installed_pytorch_s():
    torch = pytest.importorskip("torch")
    committed = json.loads((TABLES / "coverage.json").read_text())
    if torch.__version__.split("+")[0] != committed["torch_version"]:
        pytest.skip(f"the tables were judged by PyTorch {committed['torch_version']}")
    usage, _ = api_coverage.load(TABLES)
    keywords = [(e, v) for e, _, _, v in usage if e.endswith("=)")]
    assert [e for e, v in keywords if api_coverage.has_entry(e, "torch") is not v] == []


def test_entries_pytorch_lacks_are_left_out_of_the_figures(tmp_path):
    (tmp_path / "usage.tsv").write_text(
        "# entry\tfiles\toccurrences\tPyTorch's\n"
        "torch.nn.Linear\t2\t5\tyes\n.log[T](prog_bar=)\t1\t7\tno\ntorch.no_such_thing\t1\t1\tyes\n")
    (tmp_path / "files.tsv").write_text("# file\trows\n0\t0 1\n1\t0 2\n")
    figures = api_coverage.measure(tmp_path)
    assert (figures["entries"], figures["occurrences"], figures["entries_not_pytorch"]) == (2, 6, 1)
    assert figures["files_covered_pct"] == 50.0  # file 0 counts as covered: prog_bar= is not PyTorch's
    assert figures["entries_covered_pct"] == 50.0 and figures["occurrences_covered_pct"] == round(500 / 6, 1)
    assert figures["missing"] == [("torch.no_such_thing", 1)]
    assert figures["not_pytorch"] == [(".log[T](prog_bar=)", 1)]
