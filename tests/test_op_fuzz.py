"""tools/op_fuzz.py, the differential fuzzer against PyTorch: a fixed sample of its calls gives no silently wrong
result (values, dtypes, shapes, gradients, contiguity) outside the intended differences docs/api.md lists, and the
fuzzer itself notices a wrong value, dtype, gradient or error when there is one."""

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ember

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("op_fuzz", ROOT / "tools" / "op_fuzz.py")
op_fuzz = sys.modules.setdefault("op_fuzz", importlib.util.module_from_spec(_spec))  # (dataclasses look it up)
_spec.loader.exec_module(op_fuzz)

# the kinds of a silently wrong result (an error mismatch is the other kind of finding)
SILENT = {"value", "dtype", "shape", "structure", "grad", "requires_grad", "stride", "crash"}


def test_a_fixed_sample_of_calls_has_no_silently_wrong_result():
    count = 300
    found, _ = op_fuzz.fuzz(seed=0, count=count)
    silent = [f for f in found if f[2] in SILENT]
    assert not silent, op_fuzz.report(silent, [], count, 3)


# the op families whose calls no longer raise where PyTorch computes, nor compute where PyTorch raises, nor raise
# another error type than PyTorch's (the shape ops with sizes and dims of every type: other_argument_forms)
ERROR_CLEAN = ("activation", "join", "shape")


def test_the_error_clean_families_raise_as_pytorch():
    count = 400
    ops = [op for family in ERROR_CLEAN for op in op_fuzz.CATEGORIES[family][1]]
    found, _ = op_fuzz.fuzz(seed=0, count=count, ops=ops)
    wrong = [f for f in found if f[2] in ("error-ember-only", "error-type", "error-torch-only")]
    assert not wrong, op_fuzz.report(wrong, [], count, 3)


def _cases_with(families: tuple, test, count: int) -> list:
    """The first ``count`` calls of seed 0 among ``families``' ops for which ``test(case)`` holds."""
    ops = [op for family in families for op in op_fuzz.CATEGORIES[family][1]]
    cases, index = [], 0
    while len(cases) < count:
        case = op_fuzz.draw_case(np.random.default_rng([0, index]), ops)
        index += 1
        if test(case):
            cases.append((index - 1, case))
    return cases


def test_numpy_array_operands_are_refused_as_pytorch_refuses_them():
    """A call of any family given a NumPy array for a tensor or number operand (``A``): PyTorch's argument parser
    refuses it with a TypeError, and ember must neither compute nor fail with another error type."""
    families = ("binary", "join", "indexing", "unary", "reduce", "sorting", "activation", "shape", "cumulative")
    cases = _cases_with(families, lambda c: any(isinstance(a, op_fuzz.A) for a in (*c.args, *c.kwargs.values())),
                        80)
    wrong = [(i, c, k, d) for i, c in cases for k, d in op_fuzz.run_case(c)
             if k in ("error-torch-only", "error-type") or k in SILENT]
    assert not wrong, op_fuzz.report(wrong, [], len(cases), 3)


def test_draws_are_reproducible_from_the_seed_and_index():
    ops = sorted(op_fuzz.OP_CATEGORY)
    first = [op_fuzz.draw_case(np.random.default_rng([7, i]), ops).text() for i in range(40)]
    again = [op_fuzz.draw_case(np.random.default_rng([7, i]), ops).text() for i in range(40)]
    assert first == again
    assert len(set(first)) > 30  # (different calls, not one repeated)


def test_every_allowed_difference_is_documented():
    docs = (ROOT / "docs" / "api.md").read_text().replace("`", "")
    differences = " ".join(docs[docs.index("# Differences from PyTorch"):].split())  # (lines joined)
    for op, kind, _, reference in op_fuzz.ALLOWED:
        assert kind in op_fuzz.KIND_ORDER
        assert op == "*" or op in op_fuzz.OP_CATEGORY
        entry = reference.split(": ", 1)[1]
        assert re.search(re.escape(entry.split(" (")[0]), differences, re.IGNORECASE), reference


def _exp_case():
    a = np.array([[0.5, -1.0, 2.0], [0.0, 1.5, -0.25]], dtype=np.float32)
    return op_fuzz.Case("exp", "fn", [op_fuzz.T(a, "float32", "contig", a.shape, grad=True)])


_exp = ember.exp


@pytest.mark.parametrize("wrong,kind", [
    (lambda x: ember.sin(x), "value"),
    (lambda x: _exp(x.double()), "dtype"),
    (lambda x: _exp(x.detach()) + 0 * x.sum(), "grad"),  # the same values, a zero gradient
    (lambda x: _exp(x.detach()), "requires_grad"),
    (lambda x: _exp(x.t().contiguous()).t(), "stride"),  # the same values, transposed memory
])
def test_the_fuzzer_notices_a_wrong_result(monkeypatch, wrong, kind):
    assert op_fuzz.run_case(_exp_case()) == []
    monkeypatch.setattr(ember, "exp", wrong)
    assert kind in [k for k, _ in op_fuzz.run_case(_exp_case())]


def test_the_fuzzer_notices_an_error_of_another_type_or_one_side_only(monkeypatch):
    def refuse(x):
        raise TypeError("refused")

    monkeypatch.setattr(ember, "exp", refuse)
    assert [k for k, _ in op_fuzz.run_case(_exp_case())] == ["error-ember-only"]
    case = _exp_case()
    case.kwargs["bogus"] = 1  # PyTorch's TypeError; ember's call now raises its own TypeError too
    assert op_fuzz.run_case(case) == []
    monkeypatch.setattr(ember, "exp", lambda x, bogus: (_ for _ in ()).throw(ValueError("other")))
    assert [k for k, _ in op_fuzz.run_case(case)] == ["error-type"]
