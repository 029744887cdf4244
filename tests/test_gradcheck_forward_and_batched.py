"""gradcheck's ``check_forward_ad`` and ``check_batched_grad``, gradgradcheck's ``check_fwd_over_rev`` and
``check_batched_grad``, against PyTorch's: True where the derivatives are right, PyTorch's GradcheckError (False
with ``raise_exception=False``) for a Function whose jvp is wrong, and for a backward that cannot run batched."""

import pytest
import torch

import ember
from ember.autograd.gradcheck import GradcheckError


def _inputs(lib):
    gen = lib.Generator().manual_seed(0)
    return (lib.randn(3, dtype=lib.float64, generator=gen, requires_grad=True),
            lib.randn(3, dtype=lib.float64, generator=gen, requires_grad=True))


def _f(a, b):
    return a.sin() * b, (a * b).sum().exp()


@pytest.mark.parametrize("options", [{"check_batched_grad": True}, {"check_forward_ad": True},
                                     {"check_forward_ad": True, "fast_mode": True},
                                     {"check_batched_grad": True, "fast_mode": True}])
def test_gradcheck_forward_and_batched_checks_pass_where_torchs_do(options):
    for lib in (torch, ember):
        assert lib.autograd.gradcheck(_f, _inputs(lib), **options)


@pytest.mark.parametrize("options", [{"check_batched_grad": True}, {"check_fwd_over_rev": True},
                                     {"check_fwd_over_rev": True, "check_batched_grad": True}])
def test_gradgradcheck_forward_over_reverse_and_batched_pass_where_torchs_do(options):
    for lib in (torch, ember):
        assert lib.autograd.gradgradcheck(_f, _inputs(lib), **options)


def _doubling(lib):
    """A Function computing 2x, with its right backward (subclassed with a wrong jvp or vmap rule)."""

    class Doubling(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Doubling


def _wrong_jvp(lib):
    class WrongJvp(_doubling(lib)):
        """2x, whose jvp is 3 t."""

        @staticmethod
        def jvp(ctx, t):
            return t * 3

    return WrongJvp.apply


def _outcome(check, *args, **options):
    try:
        return check(*args, **options)
    except Exception as err:  # noqa: BLE001  (the outcome compared: its type and first line)
        return type(err).__name__, str(err).splitlines()[0]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_jvp_fails_the_forward_check_as_torchs(fast_mode):
    for lib in (torch, ember):
        fn, x = _wrong_jvp(lib), _inputs(lib)[0]
        assert lib.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)  # (backward is right)
        assert _outcome(lib.autograd.gradcheck, fn, (x,), check_forward_ad=True, fast_mode=fast_mode) == (
            "GradcheckError", "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,")
        assert lib.autograd.gradcheck(fn, (x,), check_forward_ad=True, fast_mode=fast_mode,
                                      raise_exception=False) is False


def test_a_wrong_jvp_fails_forward_over_reverse_as_torchs():
    outcomes = []
    for lib in (torch, ember):
        fn, x = _wrong_jvp(lib), _inputs(lib)[0]
        def times_input(a, fn=fn):
            return fn(a) * a

        assert lib.autograd.gradgradcheck(times_input, (x,))
        outcomes.append(_outcome(lib.autograd.gradgradcheck, times_input, (x,), check_fwd_over_rev=True))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0][0] == "GradcheckError"


def _copying_backward(lib):
    class CopyingBackward(lib.autograd.Function):
        """sin, whose backward writes its gradient into a new unbatched tensor (which vmap refuses)."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            out = lib.zeros_like(x)
            out.copy_(g * x.cos())
            return out

    return CopyingBackward.apply


def test_a_backward_vmap_refuses_fails_the_batched_check_as_torchs():
    for lib in (torch, ember):
        fn, x = _copying_backward(lib), _inputs(lib)[0]
        assert lib.autograd.gradcheck(fn, (x,))
        kind, message = _outcome(lib.autograd.gradcheck, fn, (x,), check_batched_grad=True)
        assert kind == "GradcheckError" and message.startswith("While computing batched gradients, got: vmap: ")
        assert lib.autograd.gradcheck(fn, (x,), check_batched_grad=True, raise_exception=False) is False


def test_a_wrong_vmap_rule_in_backward_fails_the_batched_check():
    """ember's batched backward uses a custom Function's vmap rule (PyTorch's check, under its legacy vmap, does
    not: docs/api.md): a rule that disagrees with the Function fails the check, and gradcheck alone passes."""

    class WrongVmap(_doubling(ember)):
        @staticmethod
        def vmap(info, in_dims, x):
            return x * 3, in_dims[0]

    class SinThroughWrongVmap(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return WrongVmap.apply(g * x.cos()) / 2

    x = _inputs(ember)[0]
    assert ember.autograd.gradcheck(SinThroughWrongVmap.apply, (x,))
    with pytest.raises(GradcheckError, match="^For output 0 and input 0:"):
        ember.autograd.gradcheck(SinThroughWrongVmap.apply, (x,), check_batched_grad=True)


def test_batched_forward_grad_check_runs():
    """(tests/test_gradcheck_batched_forward_grad.py compares it with PyTorch's.)"""
    assert ember.autograd.gradcheck(_f, _inputs(ember), check_forward_ad=True, check_batched_forward_grad=True)


@pytest.mark.parametrize("options", [{}, {"fast_mode": True}, {"check_batched_grad": True},
                                     {"check_forward_ad": True}])
def test_an_input_the_function_does_not_use_passes_as_in_torch(options):
    """PyTorch's backward-multiplied-by-grad_output check skips an input whose gradient is None (unused)."""
    for lib in (torch, ember):
        assert lib.autograd.gradcheck(lambda a, b: a * 2, _inputs(lib), **options)
        assert lib.autograd.gradgradcheck(lambda a, b: a * a, _inputs(lib))
