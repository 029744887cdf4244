"""Activation checkpointing (``torch.utils.checkpoint``) and saved-tensor hooks, against PyTorch."""

import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcheck

import ember
import ember.utils.checkpoint as echeck
from ember.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks


def _pair(seed=0, dropout=0.0):
    """The same small network in PyTorch and ember (weights copied), and one input batch."""
    torch.manual_seed(seed)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Dropout(dropout),
                               torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    enet = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.GELU(), ember.nn.Dropout(dropout),
                               ember.nn.Linear(8, 8), ember.nn.Tanh(), ember.nn.Linear(8, 3))
    enet.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    x = np.random.default_rng(seed).standard_normal((5, 4)).astype(np.float32)
    return tnet, enet, x


def _grads(net, x):
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()]


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpointed_gradients_equal_pytorchs(reentrant):
    tnet, enet, x = _pair()
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tcheck.checkpoint(tnet, tx, use_reentrant=reentrant).pow(2).sum().backward()
    echeck.checkpoint(enet, ex, use_reentrant=reentrant).pow(2).sum().backward()
    for a, b in zip(_grads(tnet, tx), _grads(enet, ex)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reentrant", [True, False])
def test_dropout_draws_the_same_numbers_in_the_recomputation(reentrant):
    _, net, x = _pair(dropout=0.5)

    def grads(checkpointed, preserve=True):
        for p in net.parameters():
            p.grad = None
        ex = ember.tensor(x, requires_grad=True)
        ember.manual_seed(3)
        h = (echeck.checkpoint(net, ex, use_reentrant=reentrant, preserve_rng_state=preserve) if checkpointed
             else net(ex))
        ember.randn(7)  # the program draws more numbers before backward: the recomputation must not see them
        h.pow(2).sum().backward()
        return _grads(net, ex)

    for a, b in zip(grads(False), grads(True)):  # the same masks (summation order may differ by an ulp)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)
    other_masks = grads(True, preserve=False)
    assert max(float(np.abs(a - b).max()) for a, b in zip(grads(False), other_masks)) > 1e-3


def test_non_reentrant_keeps_nothing_and_reruns_the_function_once():
    _, net, x = _pair()
    calls, packed = [0], []

    def counted(inp):
        calls[0] += 1
        return net(inp)

    ex = ember.tensor(x, requires_grad=True)
    with saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        outside = ex.exp().sum()  # packed by the outer hooks: the checkpoint's own hooks are innermost inside
    assert len(packed) == 1
    out = echeck.checkpoint(counted, ex, use_reentrant=False)
    assert calls[0] == 1
    node = out.grad_fn
    assert node._packed and all(not isinstance(s, np.ndarray) for s in node.saved)  # indices, no arrays
    (out.sum() + outside).backward()
    assert calls[0] == 2  # one recomputation serves every node
    np.testing.assert_allclose(ex.grad.numpy()[:, 0].sum() != 0, True)


def test_non_reentrant_reaches_parameters_when_no_input_requires_grad():
    tnet, enet, x = _pair()
    tcheck.checkpoint(tnet, torch.tensor(x), use_reentrant=False).sum().backward()
    echeck.checkpoint(enet, ember.tensor(x), use_reentrant=False).sum().backward()
    for tp, ep in zip(tnet.parameters(), enet.parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_reentrant_without_inputs_requiring_grad_warns_as_pytorch():
    tnet, enet, x = _pair()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True") as theirs:
        tout = tcheck.checkpoint(tnet, torch.tensor(x), use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        eout = echeck.checkpoint(enet, ember.tensor(x), use_reentrant=True)
    assert eout.requires_grad == tout.requires_grad is False
    assert theirs


def test_missing_use_reentrant_warns_pytorchs_words_and_means_true():
    tnet, enet, x = _pair()
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        tout = tcheck.checkpoint(tnet, torch.tensor(x, requires_grad=True))
    with warnings.catch_warnings(record=True) as mine:
        warnings.simplefilter("always")
        out = echeck.checkpoint(enet, ember.tensor(x, requires_grad=True))
    assert [str(w.message) for w in mine] == [str(w.message) for w in theirs if "use_reentrant" in str(w.message)]
    assert out.grad_fn.name() == tout.grad_fn.name() == "CheckpointFunctionBackward"
    with pytest.raises(ValueError, match="Unexpected keyword arguments: extra"):
        echeck.checkpoint(enet, ember.tensor(x), use_reentrant=True, extra=1)


def test_autograd_grad_through_a_non_reentrant_checkpoint():
    tnet, enet, x = _pair()
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(tcheck.checkpoint(tnet, tx, use_reentrant=False).sum(), tx)
    (eg,) = ember.autograd.grad(echeck.checkpoint(enet, ex, use_reentrant=False).sum(), ex)
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_sequential_equals_pytorchs(reentrant):
    tnet, enet, x = _pair()
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tout = tcheck.checkpoint_sequential(tnet, 3, tx, use_reentrant=reentrant)
    eout = echeck.checkpoint_sequential(enet, 3, ex, use_reentrant=reentrant)
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    tout.sum().backward()
    eout.sum().backward()
    for a, b in zip(_grads(tnet, tx), _grads(enet, ex)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_saved_tensors_hooks_unpack_result_is_what_backward_uses():
    a = np.array([1.0, 2.0, 3.0])
    results = []
    for m in (torch, ember):
        x, w = m.tensor(a, requires_grad=True), m.tensor(a[::-1].copy(), requires_grad=True)
        pack_graph = torch.autograd.graph if m is torch else ember.autograd.graph
        with pack_graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            y = (x * w).sum()
        y.backward()
        results.append((x.grad.numpy().copy(), w.grad.numpy().copy()))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, expected)


def test_disable_saved_tensors_hooks_refuses_new_hooks():
    with disable_saved_tensors_hooks("no hooks here"), pytest.raises(RuntimeError, match="no hooks here"):
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # usable again after it
        pass


def test_device_states_of_cpu_tensors_are_empty_and_restore_nothing_as_in_pytorch():
    """Reversible layers (reformer_pytorch's) save ``get_device_states(*args)`` and hand it back to
    ``set_device_states``: for CPU tensors PyTorch answers two empty lists, and restoring them does nothing."""
    tc, ec = tcheck, echeck
    assert tc.get_device_states(torch.ones(2), 3, (torch.zeros(1),)) == ([], [])
    assert ec.get_device_states(ember.ones(2), 3, (ember.zeros(1),)) == ([], [])
    state = ember.get_rng_state()
    assert ec.set_device_states(*ec.get_device_states(ember.ones(2))) is None
    assert ec.set_device_states([0], [state], device_type="meta") is None
    assert ember.equal(ember.get_rng_state(), state)
    with pytest.raises(RuntimeError, match="cuda:0"):
        ec.set_device_states([0], [state])


@pytest.mark.parametrize("how", ["autograd.grad", "backward(inputs=...)"])
def test_reentrant_checkpoint_refuses_a_backward_of_some_inputs_as_pytorch(how):
    messages = []
    for m in (torch, ember):
        x = m.ones(3, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(lambda t: t.sin(), x, use_reentrant=True)
        with pytest.raises(RuntimeError) as caught:
            if how == "autograd.grad":
                m.autograd.grad(y.sum(), x)
            else:
                y.sum().backward(inputs=[x])
        messages.append(str(caught.value))
    assert messages[1] == messages[0]
