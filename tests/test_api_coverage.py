"""ember's coverage of the PyTorch API that public training code uses must not go down.

docs/coverage holds the derived tables of a scan of public repositories (tools/api_coverage.py;
no corpus is needed here), docs/coverage/heldout those of a second, held-out corpus (other
repositories, none of the first's): for each, this recomputes the figures against the current ember
and compares them with those committed in its coverage.json, which docs/api.md states. The tables hold
PyTorch's verdict on each entry, so the figures need no PyTorch; the tests of the verdicts do.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "tools" / "api_coverage.py")
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)

CORPORA = {name: ROOT / tables for name, tables in api_coverage.CORPORA.items()}
# the least each corpus holds (repositories, files), so that an accidental rescan of a few cannot pass
SIZES = {"main": (50, 1000), "heldout": (40, 1000)}
every_corpus = pytest.mark.parametrize("corpus", sorted(CORPORA))


@pytest.fixture(scope="module")
def figures():
    return {name: api_coverage.measure(tables) for name, tables in CORPORA.items()}


@every_corpus
def test_coverage_does_not_fall_below_the_committed_figures(figures, corpus):
    committed = json.loads((CORPORA[corpus] / "coverage.json").read_text())
    for key in api_coverage.FIGURES:
        assert figures[corpus][key] >= committed[key], (f"{corpus} {key}: {figures[corpus][key]} < {committed[key]} "
                                                        f"committed; newly missing: {figures[corpus]['missing'][:20]}")


@every_corpus
def test_api_doc_states_the_committed_figures(corpus):
    committed = json.loads((CORPORA[corpus] / "coverage.json").read_text())
    doc = (ROOT / "docs" / "api.md").read_text()
    section = doc[doc.index("## Coverage of the PyTorch that public code uses"):doc.index("### Public programs run")]
    stated = [committed] + ([committed["first_measured"]] if "first_measured" in committed else [])
    for figures in stated:
        for key in api_coverage.FIGURES:
            assert f"{figures[key]}%" in section, f"docs/api.md does not state {corpus}'s {key} = {figures[key]}%"


def test_the_held_out_corpus_shares_no_repository_with_the_main_one():
    main, heldout = ({r.lower() for r in api_coverage.repositories(CORPORA[c])} for c in ("main", "heldout"))
    assert main and heldout and not main & heldout


def test_scan_refuses_a_corpus_that_is_not_held_out(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "MANIFEST.tsv").write_text(f"karpathy/nanogpt\t{'0' * 40}\n")  # (in the main corpus as nanoGPT)
    with pytest.raises(SystemExit, match="karpathy/nanogpt"):
        api_coverage.scan(corpus, tmp_path / "out", disjoint_from=[CORPORA["main"]])
    assert not (tmp_path / "out").exists()


def test_first_measured_figures_are_kept(tmp_path, monkeypatch):
    (tmp_path / "usage.tsv").write_text("# entry\tfiles\toccurrences\tPyTorch's\ntorch.nn.Linear\t1\t1\tyes\n")
    (tmp_path / "files.tsv").write_text("# file\trows\n0\t0\n")
    pytest.importorskip("torch")
    api_coverage._write_figures(tmp_path)
    first = json.loads((tmp_path / "coverage.json").read_text())
    assert first["first_measured"] == {"files_covered_pct": 100.0, "entries_covered_pct": 100.0,
                                       "occurrences_covered_pct": 100.0}
    monkeypatch.setattr(api_coverage, "has_entry", lambda entry, root="ember": root == "torch")  # ember lost it
    api_coverage.rejudge(tmp_path)
    again = json.loads((tmp_path / "coverage.json").read_text())
    assert again["files_covered_pct"] == 0.0 and again["first_measured"] == first["first_measured"]


@every_corpus
def test_tables_are_consistent(corpus):
    tables = CORPORA[corpus]
    usage, files = api_coverage.load(tables)
    counted = [0] * len(usage)
    for rows in files:
        assert len(set(rows)) == len(rows)
        for r in rows:
            counted[r] += 1
    assert counted == [f for _, f, _, _ in usage], "usage.tsv's file counts differ from files.tsv"
    rows = [line for line in (tables / "usage.tsv").read_text().splitlines() if line[0] != "#"]
    assert all(line.split("\t")[3] in ("yes", "no") for line in rows), "usage.tsv lacks PyTorch's verdicts"
    repos = [line.split("\t") for line in (tables / "repos.tsv").read_text().splitlines() if line[0] != "#"]
    least_repos, least_files = SIZES[corpus]
    assert len(repos) >= least_repos and sum(int(n) for _, _, n in repos) == len(files) >= least_files
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


@every_corpus
def test_committed_verdicts_are_the_installed_pytorch_s(corpus):
    torch = pytest.importorskip("torch")
    committed = json.loads((CORPORA[corpus] / "coverage.json").read_text())
    if torch.__version__.split("+")[0] != committed["torch_version"]:
        pytest.skip(f"the tables were judged by PyTorch {committed['torch_version']}")
    usage, _ = api_coverage.load(CORPORA[corpus])
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
