"""``torch._foreach_*`` take their arguments by PyTorch's names too: ``_foreach_lerp_(ema, params, weight=0.1)``
(timm's ModelEmaV3 writes its update so), ``_foreach_add(xs, scalar=1.)``, ``_foreach_mul(xs, other=t)``,
``_foreach_addcmul_(xs, t1, t2, value=0.5)``, ``_foreach_pow(xs, exponent=2)``; a name given a value of the wrong
kind, or beside the same argument given by position, is PyTorch's TypeError."""

import numpy as np
import pytest
import torch

import ember


def _outcome(m, call):
    xs = [m.ones(2), m.full((3,), 2.0)]
    ys = [m.zeros(2), m.full((3,), 4.0)]
    try:
        out = call(m, xs, ys)
    except Exception as e:  # noqa: BLE001 (the error's type and message are compared)
        return type(e).__name__, str(e).split("\n")[0]
    return [np.asarray(t.tolist()) for t in out] + [np.asarray(t.tolist()) for t in xs]  # (results, then self)


CALLS = {
    "lerp_ weight": lambda m, xs, ys: m._foreach_lerp_(xs, ys, weight=0.25),
    "lerp weight": lambda m, xs, ys: m._foreach_lerp(xs, ys, weight=0.25),
    "lerp weight 0-d": lambda m, xs, ys: m._foreach_lerp(xs, ys, weight=m.tensor(0.5)),
    "lerp weight list": lambda m, xs, ys: m._foreach_lerp(xs, ys, weight=[0.25, 0.5]),
    "lerp weights": lambda m, xs, ys: m._foreach_lerp(xs, ys, weights=[m.tensor(0.25), m.tensor(0.5)]),
    "lerp tensors1 weight": lambda m, xs, ys: m._foreach_lerp(xs, tensors1=ys, weight=0.25),
    "lerp self tensors1 weight": lambda m, xs, ys: m._foreach_lerp(self=xs, tensors1=ys, weight=0.25),
    "add scalar": lambda m, xs, ys: m._foreach_add(xs, scalar=1.0),
    "add scalar 0-d": lambda m, xs, ys: m._foreach_add(xs, scalar=m.tensor(1.0)),
    "add scalars": lambda m, xs, ys: m._foreach_add(xs, scalars=[1.0, 2.0]),
    "add other alpha": lambda m, xs, ys: m._foreach_add(xs, other=ys, alpha=2),
    "sub_ other alpha": lambda m, xs, ys: m._foreach_sub_(xs, other=ys, alpha=2),
    "mul_ scalar": lambda m, xs, ys: m._foreach_mul_(xs, scalar=3.0),
    "mul other 0-d": lambda m, xs, ys: m._foreach_mul(xs, other=m.tensor(3.0)),
    "clamp_min scalar": lambda m, xs, ys: m._foreach_clamp_min(xs, scalar=1.5),
    "maximum other": lambda m, xs, ys: m._foreach_maximum(xs, other=ys),
    "addcmul_ value": lambda m, xs, ys: m._foreach_addcmul_(xs, ys, ys, value=0.5),
    "addcmul tensor1 tensor2 value": lambda m, xs, ys: m._foreach_addcmul(xs, tensor1=ys, tensor2=ys, value=0.5),
    "addcdiv scalars": lambda m, xs, ys: m._foreach_addcdiv(xs, ys, xs, scalars=[1.0, 2.0]),
    "addcmul scalars packed": lambda m, xs, ys: m._foreach_addcmul(xs, ys, ys, scalars=m.tensor([0.5, 1.0])),
    "pow exponent": lambda m, xs, ys: m._foreach_pow(xs, exponent=2),
    "pow exponent list": lambda m, xs, ys: m._foreach_pow(xs, exponent=[2, 3]),
    # refused as PyTorch refuses them
    "add scalar list": lambda m, xs, ys: m._foreach_add(xs, scalar=[1.0, 2.0]),
    "add other number": lambda m, xs, ys: m._foreach_add(xs, other=1.0),
    "add scalars number": lambda m, xs, ys: m._foreach_add(xs, scalars=1.0),
    "add scalar twice": lambda m, xs, ys: m._foreach_add(xs, 1.0, scalar=2.0),
    "mul other numbers": lambda m, xs, ys: m._foreach_mul(xs, other=[2.0, 3.0]),
    "mul scalars tensor": lambda m, xs, ys: m._foreach_mul(xs, scalars=m.tensor([2.0, 3.0])),
    "lerp weights number": lambda m, xs, ys: m._foreach_lerp(xs, ys, weights=0.5),
    "lerp weight tensors": lambda m, xs, ys: m._foreach_lerp(xs, ys, weight=[m.tensor(0.5), m.tensor(0.5)]),
    "lerp_ alpha": lambda m, xs, ys: m._foreach_lerp_(xs, ys, alpha=0.25),
    "addcmul scalars number": lambda m, xs, ys: m._foreach_addcmul(xs, ys, ys, scalars=0.5),
    "addcdiv_ value list": lambda m, xs, ys: m._foreach_addcdiv_(xs, ys, xs, value=[1.0, 2.0]),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_foreach_keyword_as_torch(case):
    got, want = _outcome(ember, CALLS[case]), _outcome(torch, CALLS[case])
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)


def test_ema_update_by_foreach_lerp_matches_torch():
    """timm's ModelEmaV3 update: ``torch._foreach_lerp_(ema_params, model_params, weight=1 - decay)``."""
    values = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    results = []
    for m in (torch, ember):
        ema = [m.tensor(values[0, i]) for i in range(3)]
        model = [m.tensor(values[1, i]) for i in range(3)]
        for _ in range(3):
            m._foreach_lerp_(ema, model, weight=1.0 - 0.9)
            m._foreach_mul_(model, scalar=0.5)
        results.append(np.stack([t.numpy() for t in ema]))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
