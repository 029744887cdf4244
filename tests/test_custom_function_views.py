"""A custom ``autograd.Function`` whose ``forward`` returns a view (of an input, or of a tensor it made) or an input
as it is: the output is a view in PyTorch (``_is_view()``, ``_base``, its own node as grad_fn, the base's version
counter), and changing it (or a view of it) in place while recording is PyTorch's error, as using it after its base
changed; an input marked dirty must be returned. Compared with PyTorch."""

import pytest
import torch

import ember

FORWARDS = {
    "view": lambda x: x.view(-1),
    "select": lambda x: x[0],
    "as_is": lambda x: x,
    "view_of_a_temporary": lambda x: x.exp().view(-1),
}


def _function(m, forward):
    class Viewing(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(x)

        @staticmethod
        def backward(ctx, g):
            return g

    return Viewing


def _outcome(f):
    try:
        f()
        return "ok"
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non_leaf"])
@pytest.mark.parametrize("kind", FORWARDS)
def test_the_output_is_a_view_as_pytorchs(kind, leaf):
    results = []
    for m in (torch, ember):
        x = m.ones(2, 2, requires_grad=True)
        x = x if leaf else x * 1
        y = _function(m, FORWARDS[kind]).apply(x)
        facts = [y._is_view(), y._base is x, y._base is not None, type(y.grad_fn).__name__, y.is_leaf]
        facts.append(_outcome(lambda y=y: y.mul_(2)))
        facts.append(_outcome(lambda y=y: y[:1].add_(1) if y.dim() else y.add_(1)))  # (a view of it: the same error)
        with m.no_grad():
            facts.append(_outcome(lambda m=m, x=x: _function(m, FORWARDS[kind]).apply(x).mul_(2)))
        results.append(facts)
    assert results[1] == results[0]


def test_using_the_view_after_its_base_changed_is_pytorchs_error():
    results = []
    for m in (torch, ember):
        a = m.ones(4, requires_grad=True) * 1
        y = _function(m, FORWARDS["view"]).apply(a)
        same_version = y._version == a._version
        a.add_(1)
        results.append((same_version, y._version == a._version, y.tolist(),
                        _outcome(lambda y=y: y.sum().backward())))
    assert results[1] == results[0]


def test_an_input_marked_dirty_must_be_returned():
    messages = []
    for m in (torch, ember):
        class DirtyView(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x.view(-1)

            @staticmethod
            def backward(ctx, g):
                return g

        messages.append(_outcome(lambda m=m, f=DirtyView: f.apply(m.ones(2, requires_grad=True) * 1)))
    assert messages[1] == messages[0] != "ok"
