"""``repr(tensor)`` must equal PyTorch's, with 'torch.' read as 'ember.'."""

import numpy as np
import pytest
import torch

import ember

CASES = [
    "t(3.)", "t(3)", "t(-2.5)", "t(True)", "t(1e-8)", "t(123456789.)", "t(float('nan'))", "t(float('-inf'))",
    "t([1., 2.])", "t([1, 2, 3])", "t([-1, 20, 300])", "t([True, False])", "t([1.5, -2.25])",
    "t([[2.1353, 0.7430, -0.4722], [1., -10., 100.]])", "t([0.1, 0.25, 1e-5])", "t([1e10, 1.])",
    "t([1e-4, 1.])", "t([1e3, 1.5])", "t([1e4, 1.5])", "t([123.456, -0.001])", "t([0., 0.])", "t([0., -0.])",
    "t([float('nan'), 1.5, float('inf')])", "t([float('nan'), 1., float('-inf')])", "t([1e20, -1e-20])",
    "t([1., 2.], dtype=e.float64)", "t([1, 2], dtype=e.int32)", "t([1.5], dtype=e.float64)",
    "t([])", "t([], dtype=e.int64)", "t([[]])", "e.zeros(0, 3)", "e.zeros(2, 0, dtype=e.int64)",
    "e.arange(2000)", "e.arange(2000.)", "e.arange(1200).reshape(30, 40)", "e.arange(24).reshape(2, 3, 4)",
    "e.arange(24.).reshape(2, 3, 4) / 7", "e.arange(60).reshape(3, 4, 5) - 30",
    "e.linspace(-1, 1, 30)", "e.ones(2, 2, 1, 1)", "e.ones(1, 1, 1)", "t([[True], [False]])",
    "t([1., 2.], requires_grad=True)", "t(2., requires_grad=True)", "t([1., 2.], requires_grad=True) * 2",
    "t([1., 2.], requires_grad=True).sum()", "t([1., 2.], requires_grad=True).double()",
    "t([100000., 2.5])", "t([-100000., 2.5])", "t([1.23456789, 1000.5])", "t([0.0001, 0.001])",
    "t([1, -1]) * 10**10", "e.arange(100).reshape(10, 10) * 1000", "e.arange(10.) * 1e5",
    "e.linspace(-5, 5, 2001)", "e.arange(2400.).reshape(4, 20, 30) / 7 - 150", "e.arange(1001) > 500",
    "e.arange(5000.).reshape(50, 100) * 1e-6", "e.arange(24.).reshape(1, 2, 3, 4)",
    "e.arange(40.).reshape(2, 20) * 1.5 - 7", "t([[1, -2], [3, 4]], dtype=e.int32)",
]


def _build(module, expr):
    return eval(expr, {"t": module.tensor, "e": module, "float": float})


@pytest.mark.parametrize("expr", CASES)
def test_repr_matches_torch(expr):
    e, t = _build(ember, expr), _build(torch, expr)
    assert repr(e) == repr(t).replace("torch.", "ember."), f"\nember:\n{e!r}\ntorch:\n{t!r}"


def test_repr_float_values_match_numpy_round_trip():
    x = np.random.default_rng(0).standard_normal((7, 5)).astype(np.float32)
    assert repr(ember.tensor(x)) == repr(torch.tensor(x))


def test_repr_grad_fn_name():
    x = ember.ones(2, requires_grad=True)
    assert repr(x * 2).endswith("grad_fn=<MulBackward0>)")
    assert repr(x + 1).endswith("grad_fn=<AddBackward0>)")


def test_str_and_format():
    x = ember.tensor([1.0, 2.0])
    assert str(x) == repr(x)
    assert f"{ember.tensor(2.5):.2f}" == "2.50"


def test_set_printoptions_precision():
    try:
        ember.set_printoptions(precision=2)
        torch.set_printoptions(precision=2)
        assert repr(ember.tensor([1.23456, 2.0])) == repr(torch.tensor([1.23456, 2.0]))
    finally:
        ember.set_printoptions(precision=4)
        torch.set_printoptions(precision=4)


@pytest.mark.parametrize("options", [
    {"sci_mode": True}, {"sci_mode": True, "precision": 3, "linewidth": 100}, {"sci_mode": False},
    {"profile": "short"}, {"profile": "full"}, {"profile": "full", "precision": 2}, {"linewidth": 40},
])
@pytest.mark.parametrize("expr", [
    "t([-0.1792, 0.0037, 0.1330, -0.2704] * 4)", "t([1e-6, 1., 250.])", "t([0., 0.])", "t([3., -4.])",
    "e.arange(1500.).reshape(30, 50) / 7", "t([[1, 2], [30, 4]])",
])
def test_set_printoptions_sci_mode_and_profiles(options, expr):
    """A forced sci_mode sets the width the elements are padded to (positives got no leading space and rows were
    laid out with the fixed-point width); "short" and "full" are PyTorch's profiles (they were ignored)."""
    try:
        ember.set_printoptions(**options)
        torch.set_printoptions(**options)
        e, t = _build(ember, expr), _build(torch, expr)
        assert repr(e) == repr(t).replace("torch.", "ember."), f"\nember:\n{e!r}\ntorch:\n{t!r}"
    finally:
        ember.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_repr_of_a_split_output_whose_base_changed_in_place():
    """PyTorch prints such a view (its grad_fn cannot be regenerated) with grad_fn=<Invalid>; reading it raised."""
    texts = []
    for fw in (torch, ember):
        p = fw.ones(2, 2, requires_grad=True)
        b = p * 1
        a, _ = b.chunk(2)
        b.mul_(2)
        texts.append(repr(a))
    assert texts[0] == texts[1] == "tensor([[2., 2.]], grad_fn=<Invalid>)"


@pytest.mark.parametrize("sci_mode", [False, True])
@pytest.mark.parametrize("expr", ["t([1e-8, 1., 1e8])", "t([1., 1e5])", "t([3.5, 1e6])", "t([0.5, 2.])",
                                  "t([float('nan'), 0., 1e9])", "t([0., 0.])"])
def test_forced_sci_mode_measures_the_width_in_the_forced_notation(expr, sci_mode):
    """set_printoptions(sci_mode=False) pads every value to the widest fixed-notation one (and sci_mode=True to
    the widest scientific one); ember measured the width in the notation it would have chosen itself."""
    try:
        for fw in (torch, ember):
            fw.set_printoptions(precision=2, sci_mode=sci_mode)
        e, t = _build(ember, expr), _build(torch, expr)
        assert repr(e) == repr(t).replace("torch.", "ember.")
    finally:
        for fw in (torch, ember):
            fw.set_printoptions(profile="default")


@pytest.mark.parametrize("profile", ["short", "full", "default", "no such profile"])
def test_set_printoptions_profiles_are_pytorchs(profile):
    """profile="short" is precision 2 with 2 edge items, "full" never summarizes, each resetting the linewidth;
    ember knew only "default" (a set linewidth stayed, and "short" printed with the previous precision)."""
    expressions = ["e.arange(16.).reshape(4, 4) * 100 / 7", "e.arange(1100.) / 7", "e.arange(1200).reshape(40, 30)"]
    try:
        for fw in (torch, ember):
            fw.set_printoptions(precision=3, linewidth=30, edgeitems=1)
            fw.set_printoptions(profile=profile)
        for expr in expressions:
            assert repr(_build(ember, expr)) == repr(_build(torch, expr)).replace("torch.", "ember.")
        for fw in (torch, ember):
            fw.set_printoptions(profile="short", precision=1)  # the options given apply over the profile's
        assert repr(_build(ember, expressions[0])) == repr(_build(torch, expressions[0]))
    finally:
        for fw in (torch, ember):
            fw.set_printoptions(profile="default")
