"""A reduction over several dims keeps them in the order given on its node (``grad_fn._saved_dim``), as PyTorch's
does, though ember reduces over them sorted: sum, mean (dim overloads), amax, amin. A negative dim reads back as
PyTorch's, a 64-bit unsigned number."""

import pytest
import torch

import ember


@pytest.mark.parametrize("op", [
    lambda m, x, d: x.sum(d), lambda m, x, d: x.sum(d, dtype=m.float64), lambda m, x, d: x.mean(d, keepdim=True),
    lambda m, x, d: x.amax(d), lambda m, x, d: m.amin(x, d, keepdim=True)])
@pytest.mark.parametrize("dim", [(2, 0), [1, 0], (2, 0, 1), (0, 2), (1,), 2])
def test_saved_dim_keeps_the_order_given_as_torchs(op, dim):
    saved = [op(m, m.zeros(2, 3, 4, requires_grad=True), dim).grad_fn._saved_dim for m in (torch, ember)]
    assert saved[1] == saved[0]


def test_a_negative_dim_reads_back_as_pytorchs_in_the_order_given():
    saved = [(x.amax((-1, 0)).grad_fn._saved_dim, x.sum((-1, -3)).grad_fn._saved_dim)
             for x in (m.zeros(2, 3, 4, requires_grad=True) for m in (torch, ember))]
    assert saved[1] == saved[0] and saved[0][0] == (2 ** 64 - 1, 0)
