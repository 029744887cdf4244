"""``torch.autograd.functional`` of two inputs of which some require grad and some do not, against PyTorch.

Every function and path (the forward-mode Jacobian's column-by-column path is taken exactly when grad mode is on and
some input requires grad), with grad mode on and off and ``create_graph`` where the function takes it: the values of
every block and whether each requires grad.
"""

import pytest
import torch

import ember


def _call(lib, name: str, requires: tuple, create_graph: bool):
    F = lib.autograd.functional
    x = lib.tensor([1.0, 2.0], dtype=lib.float64).requires_grad_(requires[0])
    y = lib.tensor([0.5, -1.0], dtype=lib.float64).requires_grad_(requires[1])
    v = (lib.tensor([1.0, 3.0], dtype=lib.float64), lib.tensor([-2.0, 0.5], dtype=lib.float64))

    def vector(a, b):
        return a * b.exp() + b * b

    def scalar(a, b):
        return (a * a * b.exp()).sum() + (b ** 3).sum()

    if name == "vjp":
        return F.vjp(vector, (x, y), v[0], create_graph=create_graph)
    if name == "jvp":
        return F.jvp(vector, (x, y), v, create_graph=create_graph)
    if name == "hvp":
        return F.hvp(scalar, (x, y), v, create_graph=create_graph)
    if name == "vhp":
        return F.vhp(scalar, (x, y), v, create_graph=create_graph)
    if name == "jacobian":
        return F.jacobian(vector, (x, y), create_graph=create_graph)
    if name == "jacobian_vectorized":
        return F.jacobian(vector, (x, y), create_graph=create_graph, vectorize=True)
    if name == "jacobian_forward":
        return F.jacobian(vector, (x, y), vectorize=True, strategy="forward-mode")
    if name == "hessian":
        return F.hessian(scalar, (x, y), create_graph=create_graph)
    if name == "hessian_forward":
        return F.hessian(scalar, (x, y), vectorize=True, outer_jacobian_strategy="forward-mode")
    raise AssertionError(name)


def _flat(res) -> list:
    if isinstance(res, (tuple, list)):
        return [e for r in res for e in _flat(r)]
    return [(tuple(res.shape), [round(float(t), 9) for t in res.detach().reshape(-1).tolist()], res.requires_grad)]


def _run(lib, name, requires, grad_mode, create_graph):
    with lib.set_grad_enabled(grad_mode):
        return _flat(_call(lib, name, requires, create_graph))


NAMES = ["vjp", "jvp", "hvp", "vhp", "jacobian", "jacobian_vectorized", "jacobian_forward", "hessian",
         "hessian_forward"]
CASES = [(name, requires, grad_mode, create_graph)
         for name in NAMES for requires in [(True, False), (False, True), (False, False), (True, True)]
         for grad_mode in (True, False)
         for create_graph in ((False,) if name.endswith("_forward") else (False, True))]


@pytest.mark.parametrize("name,requires,grad_mode,create_graph", CASES)
def test_inputs_that_do_and_do_not_require_grad_as_pytorchs(name, requires, grad_mode, create_graph):
    got = _run(ember, name, requires, grad_mode, create_graph)
    want = _run(torch, name, requires, grad_mode, create_graph)
    assert got == want


@pytest.mark.parametrize("requires,grad_mode", [((True, False), False), ((False, False), True)])
def test_forward_mode_hessian_blocks_require_grad_as_pytorchs(requires, grad_mode):
    """PyTorch's forward-mode outer Jacobian of a Hessian requires grad through its tangents' formulas also under
    no_grad or with no input requiring grad (its inner Jacobian records a graph)."""
    got = _run(ember, "hessian_forward", requires, grad_mode, False)
    assert got == _run(torch, "hessian_forward", requires, grad_mode, False)


def _inputs_seen(lib, strategy: str, requires: bool):
    seen = []

    def f(a):
        seen.append((a.requires_grad, a.is_leaf))
        return (a ** 3).sum()

    x = lib.tensor([1.0, 2.0], dtype=lib.float64).requires_grad_(requires)
    h = lib.autograd.functional.hessian(f, x, vectorize=True, outer_jacobian_strategy=strategy)
    return seen, h.tolist(), x.requires_grad


@pytest.mark.parametrize("requires", [False, True])
@pytest.mark.parametrize("strategy", ["forward-mode", "reverse-mode"])
def test_the_input_hessians_function_is_given_as_pytorchs(strategy, requires):
    """PyTorch's forward-mode Hessian makes its inner inputs require grad (``requires_grad_``) before the inner
    reverse-mode Jacobian: the function gets a non-leaf that requires grad, as on the reverse-mode path. (ember's
    forward-mode path calls the function twice where PyTorch's calls it once: only the first call is compared.)"""
    assert _inputs_seen(ember, strategy, requires) == _inputs_seen(torch, strategy, requires)
