"""``torch.func`` transforms refuse a custom ``autograd.Function`` whose ``forward`` takes ``ctx`` (no
``setup_context``), as PyTorch's: its RuntimeError, under every transform and nested ones, while plain autograd and
``torch.autograd.functional`` still run it."""

import pytest
import torch

import ember


def _square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Square


TRANSFORMS = {
    "grad": lambda lib, f, x: lib.func.grad(lambda t: f(t).sum())(x),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x)[1](lib.ones(3)),
    "jvp": lambda lib, f, x: lib.func.jvp(f, (x,), (lib.ones(3),)),
    "vmap": lambda lib, f, x: lib.func.vmap(f)(x),
    "vmap_unbatched_input": lambda lib, f, x: lib.func.vmap(lambda row: f(x) + row)(x),
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x),
    "jacfwd": lambda lib, f, x: lib.func.jacfwd(f)(x),
    "hessian": lambda lib, f, x: lib.func.hessian(lambda t: f(t).sum())(x),
    "grad_of_vmap": lambda lib, f, x: lib.func.grad(lambda t: lib.func.vmap(f)(t).sum())(x),
}


def _error(lib, transform):
    with pytest.raises(RuntimeError) as err:
        TRANSFORMS[transform](lib, _square(lib).apply, lib.arange(3.0))
    return str(err.value)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_refused_as_torch(transform):
    want = _error(torch, transform)
    assert "must override the setup_context staticmethod" in want
    assert _error(ember, transform) == want


def test_outside_transforms_it_runs():
    for lib in (torch, ember):
        f = _square(lib).apply
        x = lib.arange(3.0, requires_grad=True)
        f(x).sum().backward()
        assert x.grad.tolist() == [0.0, 2.0, 4.0]
        assert lib.autograd.functional.jacobian(f, lib.arange(3.0)).diagonal().tolist() == [0.0, 2.0, 4.0]
        # (vectorized: PyTorch's legacy vmap, no torch.func transform)
        jac = lib.autograd.functional.jacobian(f, lib.arange(3.0), vectorize=True)
        assert jac.diagonal().tolist() == [0.0, 2.0, 4.0]
        x = lib.arange(3.0, requires_grad=True)
        (batched,) = lib.autograd.grad(f(x), x, lib.eye(3), is_grads_batched=True)
        assert batched.diagonal().tolist() == [0.0, 2.0, 4.0]
        # a transform that ended (by an error, too) leaves none active
        with pytest.raises(RuntimeError):
            lib.func.grad(lambda t, f=f: f(t).sum())(lib.arange(3.0))
        assert f(lib.arange(3.0)).tolist() == [0.0, 1.0, 4.0]


def _apply_while_another_thread_maps(lib):
    """A transform running on one thread refuses ctx-style Functions on that thread only, as PyTorch's (its
    functorch interpreter stack is per thread): another thread's plain autograd still runs one meanwhile."""
    import threading

    inside, done = threading.Event(), threading.Event()

    def waiting(row):
        inside.set()
        done.wait(30)
        return row * 2

    mapper = threading.Thread(target=lambda: lib.func.vmap(waiting)(lib.ones(2, 3)))
    mapper.start()
    try:
        assert inside.wait(30)
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        _square(lib).apply(x).sum().backward()
        return x.grad.tolist()
    finally:
        done.set()
        mapper.join(30)


def test_another_threads_transform_leaves_this_threads_functions_alone():
    assert _apply_while_another_thread_maps(ember) == _apply_while_another_thread_maps(torch) == [2.0, 4.0, 6.0]
