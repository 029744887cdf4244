"""Found by writing small training programs as a new user would, each checked against PyTorch."""

import pytest
import torch

import ember

# -- views of an inference tensor outside inference mode record no history ------------------------------------
_VIEWS = {
    "t": lambda w: w.t(), "view": lambda w: w.view(8), "select": lambda w: w[0], "slice": lambda w: w[:, 1:3],
    "none": lambda w: w[None], "expand": lambda w: w.expand(3, 2, 4), "unbind": lambda w: w.unbind(0)[0],
    "split": lambda w: w.split(1)[0], "chunk": lambda w: w.chunk(2, 1)[1], "mT": lambda w: w.mT,
    "narrow": lambda w: w.narrow(1, 0, 2), "as_strided": lambda w: w.as_strided((2,), (1,)),
    "movedim": lambda w: w.movedim(0, 1), "diagonal": lambda w: w.diagonal(), "unfold": lambda w: w.unfold(1, 2, 1),
    "mul (not a view)": lambda w: w * 2,
}


def _view_outcome(m, name):
    with m.inference_mode():
        w = m.ones(2, 4, requires_grad=True)
    v = _VIEWS[name](w)
    return v.requires_grad, type(v.grad_fn).__name__, v.is_leaf, v.is_inference()


@pytest.mark.parametrize("name", sorted(_VIEWS))
def test_view_of_inference_tensor_outside_inference_mode_as_torch(name):
    assert _view_outcome(ember, name) == _view_outcome(torch, name)


# -- a model built under inference_mode(), trained outside it: linear's weight.t() passes no gradient -------
_CALLS = {
    "2-d": lambda m, mod: mod["lin"](m.ones(4, 3)),
    "3-d": lambda m, mod: mod["lin"](m.ones(2, 4, 3)),
    "1-d": lambda m, mod: mod["lin"](m.ones(3)),
    "input requires grad": lambda m, mod: mod["lin"](m.ones(4, 3, requires_grad=True)),
    "no bias": lambda m, mod: mod["nb"](m.ones(4, 3)),
    "matmul by weight.T": lambda m, mod: m.ones(4, 3) @ mod["lin"].weight.T,
    "conv": lambda m, mod: mod["conv"](m.ones(1, 2, 5)),
}


def _train_outcome(m, call):
    with m.inference_mode():
        mods = {"lin": m.nn.Linear(3, 2), "nb": m.nn.Linear(3, 2, bias=False), "conv": m.nn.Conv1d(2, 2, 3)}
    try:
        out = _CALLS[call](m, mods)
        out.sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)[:70]  # (the gist: ember's says more after it of why there is no grad_fn)
    got = sorted(f"{k}.{n}" for k, mod in mods.items() for n, p in mod.named_parameters() if p.grad is not None)
    return type(out.grad_fn).__name__, got


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_training_a_model_built_in_inference_mode_as_torch(call):
    assert _train_outcome(ember, call) == _train_outcome(torch, call)
