"""torch.broadcast_tensors and torch.broadcast_shapes against PyTorch: shapes, values, views, gradients, errors."""

import numpy as np
import pytest
import torch
from oracle import assert_same_error

import ember


def pair(shape, dtype=np.float32, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("shapes", [[(2, 1), (3,)], [(4, 1, 3), (1, 5, 1), (3,)], [(2, 3), (2, 3)], [(), (2, 2)],
                                    [(0, 1), (3,)], [(1,), ()]])
def test_broadcast_tensors_values_views_and_gradients(shapes):
    pairs = [pair(s, seed=i) for i, s in enumerate(shapes)]
    ours = [e.requires_grad_() for e, _ in pairs]
    theirs = [t.requires_grad_() for _, t in pairs]
    out, ref = ember.broadcast_tensors(*ours), torch.broadcast_tensors(*theirs)
    assert isinstance(out, tuple) and len(out) == len(ref)
    for o, r, e, t in zip(out, ref, ours, theirs):
        assert tuple(o.shape) == tuple(r.shape)
        np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())
        assert (o is e) == (r is t)  # a tensor already of the common shape comes back itself
        if o is not e and o.numel():  # (torch.tensor of an empty NumPy array takes zero strides)
            assert type(o.grad_fn).__name__ == type(r.grad_fn).__name__ == "ExpandBackward0"
            assert o.stride() == r.stride()
    w = [np.arange(r.numel(), dtype=np.float32).reshape(r.shape) for r in ref]
    sum((o * ember.tensor(x)).sum() for o, x in zip(out, w)).backward()
    sum((r * torch.tensor(x)).sum() for r, x in zip(ref, w)).backward()
    for e, t in zip(ours, theirs):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_broadcast_tensors_keeps_dtypes_and_short_calls():
    (e16, t16), (e64, t64) = pair((2, 1), np.float16), pair((3,), np.int64)
    out, ref = ember.broadcast_tensors(e16, e64), torch.broadcast_tensors(t16, t64)
    assert [str(o.dtype) for o in out] == [str(r.dtype).replace("torch", "ember") for r in ref]
    assert ember.broadcast_tensors() == () and torch.broadcast_tensors() == ()
    (one,) = ember.broadcast_tensors(e16)
    assert one is e16 and torch.broadcast_tensors(t16)[0] is t16


@pytest.mark.parametrize("args", [lambda m: (m.ones(2), m.ones(3)), lambda m: (m.ones(2, 3), m.ones(4, 1, 1), m.ones(5)),
                                  lambda m: (m.ones(2), 3), lambda m: ([m.ones(2), m.ones(2, 1)],)])
def test_broadcast_tensors_errors_are_pytorchs(args):
    assert_same_error(lambda m: m.broadcast_tensors(*args(m)))


@pytest.mark.parametrize("shapes", [((2, 1), (3,), 1), (), ((2,),), (3, (1,)), ([4, 1], None, (1, 5)), ((0,), (1,)),
                                    ((2,), (3,)), ((2,), "a"), ((-1,), (2,)), ((2.0,),), ((1, 3), 5), (None,),
                                    ((2, 3), object())])
def test_broadcast_shapes_is_pytorchs(shapes):
    try:
        ref = torch.broadcast_shapes(*shapes)
    except Exception as e:  # noqa: BLE001 - the oracle's error, whichever it is
        with pytest.raises(type(e)) as ours:
            ember.broadcast_shapes(*shapes)
        assert str(ours.value).replace("ember.", "torch.") == str(e)
        return
    out = ember.broadcast_shapes(*shapes)
    assert isinstance(out, ember.Size) and tuple(out) == tuple(ref)
    assert ember.broadcast_shapes(*[ember.Size(s) for s in shapes if isinstance(s, tuple)]) == \
        torch.broadcast_shapes(*[torch.Size(s) for s in shapes if isinstance(s, tuple)])


def test_distributions_broadcast_with_pytorchs_rule():
    # the distributions broadcast their batch shapes with the same function (a mismatch names the dimension)
    from ember.distributions import utils

    assert utils.broadcast_shapes is ember.broadcast_shapes
