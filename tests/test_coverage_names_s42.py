"""Names public training code uses that ember lacked (docs/api.md's coverage report): each against torch."""

import pytest
import torch
import torch.optim.optimizer as torch_optimizer

import ember
import ember.optim.optimizer as ember_optimizer


def _params(lib):
    return {
        "float": [lib.ones(2)],
        "parameter and None": [lib.nn.Parameter(lib.ones(2)), None],
        "only None": [None, None],
        "integer": [lib.ones(2, dtype=lib.long)],
        "float64 and float16": [lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float16)],
        "none": [],
        "meta": [lib.ones(2, device="meta")],
    }


@pytest.mark.parametrize("kind", list(_params(torch)))
@pytest.mark.parametrize("differentiable", [False, True])
@pytest.mark.parametrize("use_fused", [None, False, True])
def test_default_to_fused_or_foreach(kind, differentiable, use_fused):
    def choice(module, lib):
        params = _params(lib)[kind]
        if use_fused is None:
            return module._default_to_fused_or_foreach(params, differentiable)
        return module._default_to_fused_or_foreach(params, differentiable=differentiable, use_fused=use_fused)

    assert choice(ember_optimizer, ember) == choice(torch_optimizer, torch)


@pytest.mark.parametrize("differentiable", [False, True])
def test_use_grad_for_differentiable(differentiable):
    """Within the step, gradient recording is on exactly for a differentiable optimizer (its ``defaults``; ember's
    optimizers refuse ``differentiable=True``, a custom one may set it), and as it was after."""

    def run(lib, module):
        class Opt:
            defaults = {"differentiable": differentiable}

            @module._use_grad_for_differentiable
            def step(self, closure=None):
                """A step."""
                return lib.is_grad_enabled()

        with lib.no_grad():
            inside_no_grad = Opt().step()
        inside = Opt().step()
        return inside_no_grad, inside, lib.is_grad_enabled(), Opt.step.__name__, Opt.step.__doc__

    assert run(ember, ember_optimizer) == run(torch, torch_optimizer)


def test_use_grad_for_differentiable_restores_the_mode_after_an_error():
    for lib, module in ((ember, ember_optimizer), (torch, torch_optimizer)):
        class Opt(lib.optim.SGD):
            @module._use_grad_for_differentiable
            def step(self, closure=None):
                raise KeyError("step")

        opt = Opt([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        with pytest.raises(KeyError):
            opt.step()
        assert lib.is_grad_enabled()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "int64"])
def test_cholesky_inverse_out(dtype):
    def run(lib):
        L = lib.tensor([[2.0, 0.0], [1.0, 3.0]], dtype=lib.float64)
        out = lib.empty(0, dtype=getattr(lib, dtype))
        try:
            result = lib.cholesky_inverse(L, out=out)
        except RuntimeError as e:
            return str(e)
        assert result is out
        return out.dtype.__repr__().split(".")[-1], out.to(lib.complex128).flatten().tolist()

    got, want = run(ember), run(torch)
    assert got == want if isinstance(want, str) else (got[0] == want[0] and got[1] == pytest.approx(want[1], 1e-3))


def test_cholesky_inverse_out_refused_under_autograd_as_pytorch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            lib.cholesky_inverse(lib.eye(2, requires_grad=True), out=lib.empty(0))


def test_element_size():
    import torch._utils

    import ember._utils

    names = [n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype) and hasattr(ember, n)]
    assert len(names) > 20
    for name in names:
        assert ember._utils._element_size(getattr(ember, name)) == torch._utils._element_size(getattr(torch, name))
    for value in ("float32", 4, None):
        with pytest.raises(RuntimeError) as want:
            torch._utils._element_size(value)
        with pytest.raises(RuntimeError) as got:
            ember._utils._element_size(value)
        assert str(got.value) == str(want.value)
