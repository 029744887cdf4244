"""In-place ops outside inference mode on an inference tensor, itself, a view of it, its ``.data`` and its
``detach()``: PyTorch refuses them on the tensor and its views, and lets ``.data`` / ``detach()`` change in place
(``add_``, ``zero_``, ``copy_``, ``resize_``, ``t_``; the result is still an inference tensor), while ``x.data[0] = v``
(a write through a view; not ``x.data[...] = v``, ``[:]``, a mask's or index tensor's) and ``requires_grad_()`` are
refused."""

import pytest
import torch

import ember

_VIA = {"data": lambda x: x.data, "detach": lambda x: x.detach(), "self": lambda x: x,
        "view": lambda x: x.view(4), "detach then view": lambda x: x.detach().view(4)}
_OPS = {"add_": lambda y, m: y.add_(1), "zero_": lambda y, m: y.zero_(),
        "copy_": lambda y, m: y.copy_(m.zeros(y.shape)), "setitem": lambda y, m: y.__setitem__(0, 5),
        # (no view of y written: into y itself, or index_put_ into it)
        "setitem ...": lambda y, m: y.__setitem__(..., 5), "setitem :": lambda y, m: y.__setitem__(slice(None), 5),
        "setitem mask": lambda y, m: y.__setitem__(y > 0, 5), "setitem index": lambda y, m: y.__setitem__([0], 5),
        "setitem -2:": lambda y, m: y.__setitem__(slice(-2, None), 5),
        "setitem ..., index": lambda y, m: y.__setitem__((..., m.tensor([1])), 5),
        "resize_": lambda y, m: y.resize_(4), "requires_grad_": lambda y, m: y.requires_grad_(),
        "t_": lambda y, m: y.t_() if y.dim() == 2 else y.unsqueeze_(0), "mul_ twice": lambda y, m: y.mul_(3).mul_(2)}


def _outcome(m, via, op):
    with m.inference_mode():
        x = m.ones(2, 2)
    y = _VIA[via](x)
    try:
        _OPS[op](y, m)
    except RuntimeError as e:
        return "RuntimeError", str(e)[:80]
    return "ok", x.tolist(), y.is_inference(), tuple(y.shape)


@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("via", sorted(_VIA))
def test_inplace_on_inference_tensor_outside_inference_mode_as_torch(via, op):
    assert _outcome(ember, via, op) == _outcome(torch, via, op)


def test_inside_inference_mode_everything_changes_in_place():
    for m in (torch, ember):
        with m.inference_mode():
            x = m.ones(2, 2)
            x.data.add_(1)
            x.detach()[0] = 5
            x.view(4).mul_(2)
        assert x.tolist() == [[10.0, 10.0], [4.0, 4.0]]
