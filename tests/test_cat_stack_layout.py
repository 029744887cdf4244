"""The layout of ``cat``'s and ``stack``'s result, as PyTorch's: ``cat`` allocates its result in the memory format
its inputs all suggest (channels-last inputs give a channels-last result), else contiguous (a transposed, permuted,
sliced or expanded input's cat is contiguous, where NumPy's concatenate keeps the inputs' order); ``stack`` below
the last dimension is that cat viewed with the dimension split, at the last a cat of the inputs unsqueezed."""

import numpy as np
import pytest
import torch

import ember

A = np.arange(12, dtype=np.float32).reshape(3, 4)
C = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)


def _from(m, a):
    return ember.from_numpy(a.copy()) if m is ember else torch.from_numpy(a.copy())


def _cl(m, a):
    return _from(m, a).to(memory_format=m.channels_last)


CASES = {
    "cat(xt, xt)": lambda m: m.cat([_from(m, A).t(), _from(m, A).t()]),
    "cat(xt, xt, 1)": lambda m: m.cat([_from(m, A).t(), _from(m, A).t()], 1),
    "cat(xt, y)": lambda m: m.cat([_from(m, A).t(), _from(m, A.T)]),
    "cat(xt)": lambda m: m.cat([_from(m, A).t()]),
    "cat(slices)": lambda m: m.cat([_from(m, A)[:, ::2], _from(m, A)[:, ::2]]),
    "cat(permuted 3-d, 2)": lambda m: m.cat([_from(m, C[0]).permute(2, 0, 1)] * 2, 2),
    "cat(expanded)": lambda m: m.cat([_from(m, A[:1]).expand(3, 4), _from(m, A[:1]).expand(3, 4)]),
    "cat(xt, 1-d empty)": lambda m: m.cat([_from(m, A).t(), m.empty(0)]),
    "cat(cl, cl)": lambda m: m.cat([_cl(m, C)] * 2),
    "cat(cl, cl, 3)": lambda m: m.cat([_cl(m, C)] * 2, 3),
    "cat(cl, contiguous)": lambda m: m.cat([_cl(m, C), _from(m, C)]),
    "cat(cl, 1-d empty)": lambda m: m.cat([_cl(m, C), m.empty(0)]),
    "cat(cl sliced, cl)": lambda m: m.cat([_cl(m, C)[:, :, ::2], _cl(m, C[:, :, :2])]),
    "cat(N111 cl)": lambda m: m.cat([_cl(m, C[:, :1, :1, :1])] * 2),
    "cat(empty cl)": lambda m: m.cat([_cl(m, C[:0])] * 2),
    "cat(xt requiring grad)": lambda m: m.cat([_from(m, A).t().requires_grad_(), _from(m, A).t()]),
    "hstack(xt, xt)": lambda m: m.hstack([_from(m, A).t(), _from(m, A).t()]),
    "vstack(xt, xt)": lambda m: m.vstack([_from(m, A).t(), _from(m, A).t()]),
    "stack(xt, xt)": lambda m: m.stack([_from(m, A).t(), _from(m, A).t()]),
    "stack(xt, xt, 1)": lambda m: m.stack([_from(m, A).t(), _from(m, A).t()], 1),
    "stack(xt, xt, 2)": lambda m: m.stack([_from(m, A).t(), _from(m, A).t()], 2),
    "stack(cl, cl)": lambda m: m.stack([_cl(m, C)] * 2),
    "stack(cl, cl, 1)": lambda m: m.stack([_cl(m, C)] * 2, 1),
    "stack(cl, cl, 3)": lambda m: m.stack([_cl(m, C)] * 2, 3),
    "stack(cl, cl, 4)": lambda m: m.stack([_cl(m, C)] * 2, 4),
    "stack(permuted 3-d, 3)": lambda m: m.stack([_from(m, C[0]).permute(2, 0, 1)] * 2, 3),
}


@pytest.mark.parametrize("name", CASES)
def test_cat_and_stack_strides_are_pytorchs(name):
    got = []
    for m in (ember, torch):
        z = CASES[name](m)
        got.append((tuple(z.shape), z.stride(), z.detach().numpy().tolist()))
    assert got[0] == got[1]


def test_gradients_flow_back_through_a_relaid_cat_and_stack():
    grads = []
    for m in (ember, torch):
        x = _from(m, A).t().requires_grad_()
        c = _cl(m, C).requires_grad_()
        w = _from(m, np.arange(24, dtype=np.float32).reshape(8, 3))
        ((m.cat([x, x]) * w).sum() + (m.stack([c, c], 1) * 2).sum()).backward()
        grads.append((x.grad.numpy().tolist(), c.grad.numpy().tolist(), c.grad.stride()))
    assert grads[0] == grads[1]
