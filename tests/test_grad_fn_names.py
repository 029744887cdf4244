"""The nodes of view and shape ops carry PyTorch's names: ``type(y.grad_fn).__name__``, ``repr(y.grad_fn)`` and
a printed tensor's ``grad_fn=<...>`` read as under PyTorch (programs print them; error messages name them)."""

import pytest
import torch

import ember

CASES = {
    "split": lambda x: x.split(2, 1)[1],
    "split_sizes": lambda x: x.split([2, 4], 1)[0],
    "split_with_sizes": lambda x: x.split_with_sizes([1, 3])[1],
    "chunk": lambda x: x.chunk(3, 1)[2],
    "unbind": lambda x: x.unbind(1)[3],
    "tensor_split": lambda x: x.tensor_split(3, 1)[0],
    "narrow": lambda x: x.narrow(1, 0, 2),
    "select": lambda x: x.select(1, 2),
    "view": lambda x: x.view(24),
    "reshape": lambda x: x.reshape(2, 12),
    "reshape_copy": lambda x: x.t().reshape(-1),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 3)),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x[:1].squeeze(),
    "squeeze_dim": lambda x: x[:1].squeeze(0),
    "squeeze_dims": lambda x: x[:1].unsqueeze(0).squeeze((0, 1)),
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "mT": lambda x: x.mT,
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "T": lambda x: x.T,
    "contiguous": lambda x: x.t().contiguous(),
    "stack": lambda x: torch_or_ember(x).stack([x, x]),
    "cat": lambda x: torch_or_ember(x).cat([x, x]),
    "expand": lambda x: x[:, :1].expand(4, 3),
}
# x[...]'s name: the last step PyTorch's indexing takes (type(grad_fn) stays ember's BasicIndex)
INDEXING = ["x[0]", "x[-1]", "x[:, 1:3]", "x[1:3, 0]", "x[0, 1:3]", "x[None]", "x[1:, None]", "x[None, 0]",
            "x[..., 0]", "x[..., 1:2]", "x[:]", "x[:, :]", "x[...]", "x[0, ...]", "x[:, ::2]", "x[0][None]"]


def torch_or_ember(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _pair(fn):
    out = []
    for m in (torch, ember):
        x = m.arange(24.0).reshape(4, 6).requires_grad_()
        out.append(fn(x))
    return out


@pytest.mark.parametrize("op", list(CASES))
def test_node_class_and_repr_are_pytorchs(op):
    t, e = _pair(CASES[op])
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert repr(e.grad_fn).split(" object at")[0] == repr(t.grad_fn).split(" object at")[0]
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]


@pytest.mark.parametrize("expr", INDEXING)
def test_indexing_node_name_is_pytorchs(expr):
    t, e = _pair(lambda x: eval(expr))
    assert e.grad_fn.name() == t.grad_fn.name()
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]


# nodes whose class names end in a digit without being PyTorch's "...Backward<N>" (Atan2, Exp2, Expm1, Log10, Log2):
# their name gets "Backward0" as every other's
@pytest.mark.parametrize("expr", ["m.atan2(x, x + 1)", "m.exp2(x)", "m.expm1(x)", "m.log10(x + 1)", "m.log2(x + 1)"])
def test_a_node_class_named_with_a_final_digit_is_named_as_pytorchs(expr):
    t, e = _pair(lambda x: eval(expr, {"m": torch_or_ember(x), "x": x}))
    assert e.grad_fn.name() == t.grad_fn.name()
    assert repr(e).split("grad_fn=")[1] == repr(t).split("grad_fn=")[1]
