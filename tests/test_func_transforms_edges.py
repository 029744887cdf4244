"""``torch.func``'s transforms at their edges, against PyTorch: each argument check of ``jvp`` (empty, non-tensor
primals or tangents), ``jacfwd``'s ``randomness`` checked when the Jacobian is computed (not when it is built),
``jacrev`` of outputs without elements (alone, next to others, chunked), ``linearize``'s tangents of another
structure."""

import pytest
import torch

import ember
from tests.autodiff_oracle import arrays, assert_same, same_error

X = arrays((2, 3))[0]


@pytest.mark.parametrize("primals,tangents", [
    ((), ()),  # no primal
    (((),), ((),)),  # a primal that is an empty pytree
    ((2.0,), (1.0,)),  # a primal that is not a tensor
    (("x", 2.0), ("x", 1.0)),  # a tensor, then a number
    (("x",), (1.0,)),  # a tangent that is not a tensor
])
def test_jvp_refuses_primals_and_tangents_as_pytorch(primals, tangents):
    def call(m):
        def made(tree):
            return tuple(m.tensor(X) if v == "x" else v for v in tree)

        return m.func.jvp(lambda *a: a[0] * 2, made(primals), made(tangents))

    same_error(call)


def test_jacfwd_checks_randomness_when_called():
    """PyTorch builds ``jacfwd(f, randomness=...)`` with any value and refuses an unknown one only when the
    Jacobian is computed; the three known values give the same Jacobian of a function without random ops."""
    for m in (torch, ember):
        fn = m.func.jacfwd(lambda a: a.sin(), randomness="bad")  # no error yet
        with pytest.raises(RuntimeError, match="^Only allowed values for randomness are 'error', 'different', or "
                                               "'same'. Got bad$"):
            fn(m.tensor(X))
    for randomness in ("error", "different", "same"):
        assert_same(ember.func.jacfwd(lambda a: a.sin(), randomness=randomness)(ember.tensor(X)),
                    torch.func.jacfwd(lambda a: a.sin(), randomness=randomness)(torch.tensor(X)))


@pytest.mark.parametrize("chunk_size", [None, 2, 4])  # (PyTorch asserts on chunk_size=1 of an empty output)
def test_jacrev_of_outputs_without_elements(chunk_size):
    """An output with no elements has a Jacobian block of shape ``(0, *input.shape)`` (zero rows), whether it is
    the only output (no backward pass at all), or next to outputs that have elements (whose blocks are computed
    as usual), for each input of a tuple ``argnums``."""
    y = arrays((3,), seed=1)[0]

    def call(m):
        a, b = m.tensor(X), m.tensor(y)
        jac = m.func.jacrev
        return (jac(lambda a: a.sum(0)[:0], chunk_size=chunk_size)(a),
                jac(lambda a, b: a[:0] * b, argnums=(0, 1), chunk_size=chunk_size)(a, b),
                jac(lambda a, b: (a[:0], (a * b).sum(0), {"e": b[:0]}), argnums=(0, 1), chunk_size=chunk_size)(a, b))

    mine, theirs = call(ember), call(torch)
    assert_same(mine, theirs)
    assert tuple(mine[0].shape) == (0, 2, 3) and [tuple(t.shape) for t in mine[1]] == [(0, 3, 2, 3), (0, 3, 3)]


@pytest.mark.parametrize("tangents", ["one", "three", "a list"])
def test_linearize_refuses_tangents_of_another_structure(tangents):
    def call(m):
        x = m.tensor(X)
        _, jvp_fn = m.func.linearize(lambda a, b: a * b, x, x)
        given = {"one": (x,), "three": (x, x, x), "a list": ([x, x],)}[tangents]
        return jvp_fn(*given)

    same_error(call)
