"""``autograd.functional.jvp`` of a function that changes its input in place under ``no_grad``. PyTorch's jvp is the
double-backward trick: the in-place change is outside the graph, the product is the derivative of what follows
it, and ``v`` is only read. ember's forward-mode shortcut (``_forward_mode_jvp``, taken without ``create_graph``
or ``strict``) gives the input ``v`` itself as its tangent, which forward AD changes in place with the input (no_grad
does not stop forward AD): the product differs and the caller's ``v`` is changed. Listed, expected to fail."""

import pytest
import torch

import ember


def _run(m, requires_grad):
    def f(x):
        with m.no_grad():
            x.mul_(2)
        return x * 3

    x, v = m.tensor([1.0, 2.0]), m.tensor([1.0, -1.0], requires_grad=requires_grad)
    out, product = m.autograd.functional.jvp(f, x, v)
    return out.tolist(), product.tolist(), v.tolist(), x.tolist()


@pytest.mark.xfail(strict=True, reason="the forward-mode jvp's tangent is the caller's v, changed in place with the "
                                       "input (ember/autograd/functional.py _forward_mode_jvp)")
@pytest.mark.parametrize("requires_grad", [False, True])
def test_jvp_of_a_function_changing_its_input_under_no_grad_as_pytorchs(requires_grad):
    assert _run(ember, requires_grad) == _run(torch, requires_grad)


@pytest.mark.parametrize("create_graph,strict", [(True, False), (False, True)])
def test_the_double_backward_path_as_pytorchs(create_graph, strict):
    def run(m):
        def f(x):
            with m.no_grad():
                x.mul_(2)
            return x * 3

        x, v = m.tensor([1.0, 2.0]), m.tensor([1.0, -1.0])
        out, product = m.autograd.functional.jvp(f, x, v, create_graph=create_graph, strict=strict)
        return out.tolist(), product.tolist(), v.tolist(), x.tolist()

    assert run(ember) == run(torch)
