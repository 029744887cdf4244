"""scripts/mutation_sample.py finds one-line mutants and applies them exactly (the sampling itself is run by hand)."""

import importlib.util
import os

import pytest
from conftest import ROOT

spec = importlib.util.spec_from_file_location("mutation_sample", os.path.join(ROOT, "scripts", "mutation_sample.py"))
mutation_sample = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation_sample)

SOURCE = '''"""A module docstring: 1 + 2 is never mutated."""


def f(a, b):
    """Nor is this: a < b."""
    if a < b and not b:
        return a + b * 2
    return max(a, b) - 1
'''


def test_candidates_cover_operators_constants_and_calls_but_not_docstrings(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    found = {(m["line"], m["before"], m["after"]) for m in mutation_sample.candidates("m.py", root=str(tmp_path))}
    assert (6, "a < b", "a <= b") in found
    assert (6, "a < b and not b", "a < b or not b") in found
    assert (6, "not b", "b") in found
    assert (7, "a + b * 2", "a - b * 2") in found
    assert (7, "b * 2", "b / 2") in found
    assert (7, "2", "3") in found
    assert (8, "max(a, b)", "min(a, b)") in found
    assert not any(line in (1, 5) for line, _, _ in found)  # docstrings untouched


def test_apply_writes_exactly_one_change_and_returns_the_original(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    mutant = next(m for m in mutation_sample.candidates("m.py", root=str(tmp_path)) if m["after"] == "min(a, b)")
    original = mutation_sample._apply(str(tmp_path), mutant)
    assert original == SOURCE
    changed = (tmp_path / "m.py").read_text().splitlines()
    assert changed[7] == "    return min(a, b) - 1"
    assert [a for a, b in zip(changed, SOURCE.splitlines()) if a != b] == ["    return min(a, b) - 1"]


def _judge(tmp_path, monkeypatch, unmutated_s, outcomes):
    """Limits.judge on a mutant whose test runs give ``outcomes`` in turn; (outcome, limits asked, mutant)."""
    path = "ember/ops/reduction.py"
    (tmp_path / "ember" / "ops").mkdir(parents=True)
    (tmp_path / path).write_text("mutated\n")
    asked = []

    def fake_run(scratch, tests, timeout, info=None):
        asked.append(timeout)
        assert (tmp_path / path).read_text() == ("original\n" if len(asked) == 2 and unmutated_s is None else
                                                 "mutated\n")
        return outcomes.pop(0)

    monkeypatch.setattr(mutation_sample, "run_tests", fake_run)
    limits = mutation_sample.Limits(str(tmp_path), timeout=150, factor=4)
    if unmutated_s is not None:
        limits.baseline[path] = unmutated_s
    mutant = {"file": path}
    return limits.judge(mutant, "original\n"), asked, mutant


def test_a_run_past_the_limit_on_a_slow_machine_is_run_again_with_a_limit_from_the_unmutated_time(
        tmp_path, monkeypatch):
    outcome, asked, mutant = _judge(tmp_path, monkeypatch, 100.0, ["timeout", "survived"])
    assert (outcome, asked) == ("survived", [150, 400.0])
    assert (mutant["unmutated_s"], mutant["limit_s"]) == (100.0, 400.0)


def test_a_run_past_the_factor_times_the_unmutated_time_is_a_timeout(tmp_path, monkeypatch):
    assert _judge(tmp_path, monkeypatch, 10.0, ["timeout"])[:2] == ("timeout", [150])
    # the unmutated tests timed on the original file (a fast pass here), the mutated file then put back
    outcome, asked, mutant = _judge(tmp_path / "b", monkeypatch, None, ["timeout", "survived"])
    assert (outcome, asked, mutant["limit_s"]) == ("timeout", [150, 600], 150)
    assert (tmp_path / "b" / mutant["file"]).read_text() == "mutated\n"


def test_an_outcome_within_the_limit_is_final(tmp_path, monkeypatch):
    assert _judge(tmp_path, monkeypatch, None, ["caught"])[:2] == ("caught", [150])


def test_a_timeout_of_a_module_whose_unmutated_tests_do_not_pass_in_time_is_unjudged(tmp_path, monkeypatch):
    outcome, asked, mutant = _judge(tmp_path, monkeypatch, None, ["timeout", "timeout"])
    assert (outcome, asked) == ("unjudged", [150, 600])
    assert (tmp_path / mutant["file"]).read_text() == "mutated\n"


def test_every_mapped_test_exists():
    """A file or test named in TARGETS that pytest cannot find exits with a usage error, which the script would
    otherwise count as every mutant of that module caught (a renamed test did that to activation.py's mutants)."""
    import ast

    for module, tests in mutation_sample.TARGETS.items():
        assert os.path.exists(os.path.join(ROOT, module)), module
        for test in tests:
            path, _, name = test.partition("::")
            assert os.path.exists(os.path.join(ROOT, path)), test
            if name:
                with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                    tree = ast.parse(f.read())
                assert name in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, test


def test_the_failing_test_is_recorded_and_a_test_pytest_cannot_find_is_an_error(tmp_path):
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    assert False\n")
    assert mutation_sample.run_tests(str(tmp_path), ["test_a.py::test_a"], 60) == "survived"
    info = {}
    assert mutation_sample.run_tests(str(tmp_path), ["test_a.py"], 60, info) == "caught"
    assert info == {"failed": "FAILED test_a.py::test_b"}
    with pytest.raises(RuntimeError, match="exit status 4"):
        mutation_sample.run_tests(str(tmp_path), ["test_a.py::test_renamed"], 60)


def test_a_mutant_that_breaks_a_test_files_import_is_caught_not_a_wrong_map(tmp_path):
    """A mutant that makes a module raise on import (seed 44: a node class named None in activation.py) fails the
    collection of every test file importing it, and pytest then reports that file's node ids unfound (exit status
    4): that is the mutant's failure, not a test missing from the map."""
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "test_a.py").write_text("from helper import VALUE\n\n\ndef test_a():\n    assert VALUE == 1\n")
    assert mutation_sample.run_tests(str(tmp_path), ["test_a.py::test_a"], 60) == "survived"
    (tmp_path / "helper.py").write_text("VALUE = type(None, (), {})\n")
    info = {}
    assert mutation_sample.run_tests(str(tmp_path), ["test_a.py::test_a"], 60, info) == "caught"
    assert info == {"failed": "ERROR test_a.py"}


def test_a_mapped_test_the_unmutated_copy_does_not_collect_stops_the_run(tmp_path, monkeypatch):
    """Before any mutant runs, every node id of the map is collected in the unmutated copy: only then is an
    unfound node id under a mutant the mutant's doing."""
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    monkeypatch.setattr(mutation_sample, "TARGETS", {"m.py": ["test_a.py::test_a"]})
    mutation_sample._check_map(str(tmp_path))
    monkeypatch.setattr(mutation_sample, "TARGETS", {"m.py": ["test_a.py::test_a", "test_a.py::test_renamed"]})
    with pytest.raises(RuntimeError, match="do not all collect"):
        mutation_sample._check_map(str(tmp_path))
