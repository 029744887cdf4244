"""Every refusal of the ``Optimizer`` base (``ember/optim/optimizer.py``) against PyTorch's: the same inputs, the
same exception type and message (ember's load_state_dict messages add the sizes after PyTorch's text, its base
``step`` says what a subclass must write), and the
inputs PyTorch accepts next to each refusal (a non-leaf that retains its gradient, a set at the top level) accepted.

A table, so that a refusal whose condition or wording drifts fails one row; the base's defaults (``set_to_none``,
``prepend``) are checked beside them."""

import functools
import re
import warnings

import pytest
import torch
import torch.optim.optimizer as torch_optimizer

import ember
import ember.optim.optimizer as ember_optimizer

OPTIMIZER_MODULES = {torch: torch_optimizer, ember: ember_optimizer}


def leaf(fw, n=2):
    return fw.zeros(n, requires_grad=True)


def non_leaf_retained(fw):
    x = leaf(fw) * 2
    x.retain_grad()
    return x


class Required:
    """A custom optimizer written the PyTorch way, with a required option."""

    @staticmethod
    def make(fw, params):
        base = OPTIMIZER_MODULES[fw]

        class Custom(base.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": base.required, "momentum": 0.5})

        return Custom(params)


def add_group(fw, first, second):
    opt = fw.optim.SGD(first, lr=0.1)
    opt.add_param_group(second)
    return opt


def load(fw, mine, theirs):
    opt = fw.optim.SGD(mine, lr=0.1)
    opt.load_state_dict(fw.optim.SGD(theirs, lr=0.1).state_dict())


def bad_pre_hook(fw):
    p = leaf(fw)
    p.grad = fw.ones(2)
    opt = fw.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda *args: 5)
    opt.step()


def sparse_step(fw, name):
    emb = fw.nn.Embedding(4, 2, sparse=True)
    opt = getattr(fw.optim, name)(emb.parameters())
    emb(fw.tensor([1, 2])).sum().backward()
    opt.step()


def no_step(fw):
    p = leaf(fw)
    p.grad = fw.ones(2)
    OPTIMIZER_MODULES[fw].Optimizer([p], {"lr": 0.1}).step()


CASES = {
    "a tensor as params": lambda fw: fw.optim.SGD(leaf(fw), lr=0.1),
    "an empty list": lambda fw: fw.optim.SGD([], lr=0.1),
    "a group that is a list": lambda fw: add_group(fw, [leaf(fw)], [leaf(fw)]),
    "a set in a group": lambda fw: fw.optim.SGD([{"params": {leaf(fw)}}], lr=0.1),
    "a set added as a group's params": lambda fw: add_group(fw, [leaf(fw)], {"params": {leaf(fw)}}),
    "a set at the top level": lambda fw: fw.optim.SGD({leaf(fw)}, lr=0.1),
    "names missing": lambda fw: fw.optim.SGD([("a", leaf(fw)), leaf(fw)], lr=0.1),
    "names given": lambda fw: fw.optim.SGD([("a", leaf(fw)), ("b", leaf(fw))], lr=0.1),
    "a named group after an unnamed one": lambda fw: add_group(fw, [leaf(fw)], {"params": [("b", leaf(fw))]}),
    "an unnamed group after a named one": lambda fw: add_group(fw, [("a", leaf(fw))], {"params": [leaf(fw)]}),
    "two named groups": lambda fw: add_group(fw, [("a", leaf(fw))], {"params": [("b", leaf(fw))]}),
    "an int among the params": lambda fw: fw.optim.SGD([leaf(fw), 3], lr=0.1),
    "a NumPy array among the params": lambda fw: fw.optim.SGD([leaf(fw), leaf(fw).detach().numpy()], lr=0.1),
    "None among the params": lambda fw: fw.optim.SGD([leaf(fw), None], lr=0.1),
    "a non-leaf": lambda fw: fw.optim.SGD([leaf(fw) * 2], lr=0.1),
    "a non-leaf that retains its grad": lambda fw: fw.optim.SGD([non_leaf_retained(fw)], lr=0.1),
    "a leaf without grad": lambda fw: fw.optim.SGD([fw.zeros(2)], lr=0.1),
    "a required option missing": lambda fw: Required.make(fw, [leaf(fw)]),
    "a required option given": lambda fw: Required.make(fw, [{"params": [leaf(fw)], "lr": 0.1}]),
    "a required option missing in a second group": lambda fw: Required.make(
        fw, [{"params": [leaf(fw)], "lr": 0.1}, {"params": [leaf(fw)]}]),
    "a parameter in two groups": lambda fw: (lambda p: fw.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1))(
        leaf(fw)),
    "a parameter added again": lambda fw: (lambda p: add_group(fw, [p], {"params": [p]}))(leaf(fw)),
    "a pre hook returning a number": bad_pre_hook,
    "a state dict with more groups": lambda fw: (lambda p, q: load(fw, [p], [{"params": [p]}, {"params": [q]}]))(
        leaf(fw), leaf(fw)),
    "a state dict with fewer groups": lambda fw: (lambda p, q: load(fw, [{"params": [p]}, {"params": [q]}], [p]))(
        leaf(fw), leaf(fw)),
    "a state dict with a larger group": lambda fw: (lambda p, q: load(fw, [p], [p, q]))(leaf(fw), leaf(fw)),
    "a state dict with a smaller group": lambda fw: (lambda p, q: load(fw, [p, q], [p]))(leaf(fw), leaf(fw)),
    "the base class's step": no_step,
    **{f"a sparse gradient to {name}": functools.partial(sparse_step, name=name)
       for name in ("Adam", "AdamW", "RMSprop", "Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "Rprop")},
}


def outcome(fw, case):
    """(exception type name or None, its message normalised: the framework's name and a function's address out)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the duplicate-parameter warning is checked below)
        try:
            CASES[case](fw)
        except Exception as error:  # noqa: BLE001 (what is compared is which exception)
            text = re.sub(r"<function [\w.]+ at 0x[0-9a-f]+>", "<function step>", str(error))
            return type(error).__name__, text.replace("torch.FloatTensor", "ember.Tensor")
    return None, ""


@pytest.mark.parametrize("case", list(CASES))
def test_refusal_as_pytorchs(case):
    expected_type, expected = outcome(torch, case)
    got_type, got = outcome(ember, case)
    assert got_type == expected_type, (got, expected)
    if case.startswith("a state dict with"):  # (ember's message goes on with the sizes)
        assert got.startswith(expected) and len(got) > len(expected), (got, expected)
    elif case == "the base class's step":  # (PyTorch's NotImplementedError has no message; ember's says what to write)
        assert expected == "" and "_update" in got and "step()" in got
    else:
        assert got == expected


def duplicate_warnings(fw):
    p = leaf(fw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fw.optim.SGD([p, p], lr=0.1)
        fw.optim.SGD([p, leaf(fw)], lr=0.1)
    return [(w.category, str(w.message)) for w in caught]


def test_duplicate_parameters_warn_once_as_pytorchs():
    expected = duplicate_warnings(torch)
    assert len(expected) == 1
    assert duplicate_warnings(ember) == expected


def zero_grad_default(fw):
    p = leaf(fw)
    p.grad = fw.ones(2)
    opt = fw.optim.SGD([p], lr=0.1)
    opt.zero_grad()
    with_none = p.grad
    p.grad = fw.ones(2)
    opt.zero_grad(set_to_none=False)
    return with_none, p.grad.tolist()


def test_zero_grad_sets_to_none_by_default_as_pytorchs():
    assert zero_grad_default(ember) == zero_grad_default(torch) == (None, [0.0, 0.0])


HOOK_KINDS = ("register_state_dict_pre_hook", "register_state_dict_post_hook", "register_load_state_dict_pre_hook",
              "register_load_state_dict_post_hook")


def hook_order(fw, kind):
    """Which hooks run in which order: one registered plainly, one with ``prepend=True``, one more plainly."""
    p = leaf(fw)
    opt = fw.optim.SGD([p], lr=0.1)
    calls = []
    register = getattr(opt, kind)
    register(lambda *args: calls.append("first"))
    register(lambda *args: calls.append("prepended"), prepend=True)
    register(lambda *args: calls.append("default"))
    saved = opt.state_dict()
    opt.load_state_dict(saved)
    return calls


@pytest.mark.parametrize("kind", HOOK_KINDS)
def test_state_dict_hooks_append_by_default_and_prepend_as_pytorchs(kind):
    assert hook_order(ember, kind) == hook_order(torch, kind) == ["prepended", "first", "default"]
