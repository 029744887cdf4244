"""scripts/mutation_sample.py finds one-line mutants and applies them exactly (the sampling itself is run by hand)."""

import importlib.util
import os

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
