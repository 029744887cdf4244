"""The in-place random fills and ``torch.bernoulli`` on each dtype, as PyTorch's kernels take or refuse it:
exponential_ only floating (its RuntimeError naming the type), log_normal_ only floating, geometric_ floating and
integer (no bool or complex), bernoulli_ no complex, its probabilities floating and in [0, 1]; the argument checks
first, and an empty tensor never refused (the kernel does not run)."""

import pytest
from oracle import outcomes

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool", "complex64",
          "complex128"]
CALLS = {
    "exponential_": lambda m, x: x.exponential_(),
    "exponential_ bad lambd": lambda m, x: x.exponential_(-1.0),
    "geometric_": lambda m, x: x.geometric_(0.5),
    "geometric_ bad p": lambda m, x: x.geometric_(2.0),
    "log_normal_": lambda m, x: x.log_normal_(),
    "log_normal_ bad std": lambda m, x: x.log_normal_(0.0, -1.0),
    "cauchy_": lambda m, x: x.cauchy_(),
    "uniform_": lambda m, x: x.uniform_(),
    "normal_": lambda m, x: x.normal_(),
    "random_": lambda m, x: x.random_(0, 2),
    "bernoulli_": lambda m, x: x.bernoulli_(0.5),
    "bernoulli_ bad p": lambda m, x: x.bernoulli_(2.0),
    "bernoulli_ tensor": lambda m, x: x.bernoulli_(m.full((3,), 0.5)),
    "bernoulli_ tensor past 1": lambda m, x: x.bernoulli_(m.tensor([0.5, 1.5, 0.0])),
    "bernoulli_ tensor nan": lambda m, x: x.bernoulli_(m.tensor([0.5, float("nan"), 0.0])),
    "bernoulli_ int tensor": lambda m, x: x.bernoulli_(m.tensor([0, 1, 1])),
    "bernoulli": lambda m, x: m.bernoulli(x),
    "bernoulli p": lambda m, x: m.bernoulli(x, 0.5),
}


def _result(outcome):
    r, _ = outcome
    return (type(r).__name__, str(r)) if isinstance(r, Exception) else ("ok", str(r.dtype).split(".")[-1],
                                                                        tuple(r.shape))


@pytest.mark.parametrize("empty", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CALLS)
def test_random_fill_by_dtype(name, dtype, empty):
    call = CALLS[name]
    got, want = outcomes(lambda m: call(m, m.zeros(0 if empty and "tensor" not in name else 3,
                                                    dtype=getattr(m, dtype))))
    if empty and "tensor" in name:
        got, want = outcomes(lambda m: m.zeros(0, dtype=getattr(m, dtype)).bernoulli_(m.zeros(0)))
    assert _result(got) == _result(want)
    assert got[1] == want[1]  # (no warning where PyTorch gives none)


@pytest.mark.parametrize("p_dtype", ["complex64", "complex128", "int64"])
def test_empty_bernoulli_takes_any_probabilities_silently(p_dtype):
    # no element to fill: PyTorch's kernel does not run, so probabilities of a dtype it refuses are not cast
    got, want = outcomes(lambda m: m.zeros(0).bernoulli_(m.zeros(0, dtype=getattr(m, p_dtype))))
    assert _result(got) == _result(want) == ("ok", "float32", (0,))
    assert got[1] == want[1] == []  # (no warning: NumPy's ComplexWarning of a complex cast to float32 included)
