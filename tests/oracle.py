"""Compare ember against PyTorch on the same inputs: forward values and gradients.

    check(lambda m, x, y: m.matmul(x, y), [(3, 4), (4, 5)])

runs the function once with ``m = ember`` and once with ``m = torch`` on the
same random float64-or-given-dtype inputs (leaves requiring grad; a complex dtype
gets random real and imaginary parts, and so does a complex output's upstream gradient), compares the
outputs, then back-propagates the same random upstream gradient through both and
compares every input's ``.grad``.
"""

from __future__ import annotations

import numpy as np
import torch

import ember


def to_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().resolve_neg().numpy()
    if isinstance(t, ember.Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def make_inputs(specs, dtype=np.float32, seed=0, positive=False):
    """Arrays from shapes (random) or from given arrays."""
    rng = np.random.default_rng(seed)
    arrays = []
    for s in specs:
        if isinstance(s, np.ndarray):
            arrays.append(s)
        elif np.dtype(dtype).kind == "c":  # complex: random real and imaginary parts
            arrays.append((rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(dtype))
        else:
            a = rng.standard_normal(s).astype(dtype)
            arrays.append(np.abs(a) + 0.5 if positive else a)
    return arrays


def assert_close(actual, expected, atol=1e-5, rtol=1e-4, msg=""):
    a, e = to_np(actual), to_np(expected)
    assert a.shape == e.shape, f"{msg} shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{msg} dtype {a.dtype} != {e.dtype}"
    np.testing.assert_allclose(a, e, atol=atol, rtol=rtol, err_msg=msg)


def check(fn, specs, *, dtype=np.float32, atol=1e-5, rtol=1e-4, grad=True, positive=False, seed=0):
    """Run ``fn(module, *inputs)`` on ember and torch; compare outputs and input gradients."""
    arrays = make_inputs(specs, dtype=dtype, seed=seed, positive=positive)
    floating = [a.dtype.kind in "fc" for a in arrays]
    e_in = [ember.tensor(a, requires_grad=grad and f) for a, f in zip(arrays, floating)]
    t_in = [torch.tensor(a, requires_grad=grad and f) for a, f in zip(arrays, floating)]
    e_out = fn(ember, *e_in)
    t_out = fn(torch, *t_in)
    e_outs = e_out if isinstance(e_out, (tuple, list)) else [e_out]
    t_outs = t_out if isinstance(t_out, (tuple, list)) else [t_out]
    for i, (eo, to) in enumerate(zip(e_outs, t_outs)):
        assert_close(eo, to, atol, rtol, msg=f"output {i}")
    if not grad:
        return
    rng = np.random.default_rng(seed + 1)
    e_roots, t_roots, e_grads, t_grads = [], [], [], []
    for eo, to in zip(e_outs, t_outs):
        if isinstance(to, torch.Tensor) and to.requires_grad:
            g = rng.standard_normal(tuple(to.shape)).astype(to_np(to).dtype)
            if to.is_complex():  # a complex upstream gradient: both parts random
                g = g + 1j * rng.standard_normal(tuple(to.shape)).astype(g.real.dtype)
            e_roots.append(eo)
            t_roots.append(to)
            e_grads.append(ember.tensor(g))
            t_grads.append(torch.tensor(g))
    if not t_roots:
        return
    ember.autograd.backward(e_roots, e_grads)
    torch.autograd.backward(t_roots, t_grads)
    for i, (ei, ti) in enumerate(zip(e_in, t_in)):
        if ti.grad is None:
            assert ei.grad is None or np.allclose(to_np(ei.grad), 0), f"input {i}: torch has no grad"
        else:
            assert ei.grad is not None, f"input {i}: ember computed no grad"
            assert_close(ei.grad, ti.grad, atol, rtol, msg=f"grad of input {i}")


def outcomes(fn):
    """``fn(module)`` for ember and for torch: per module, (its result or the exception it raised, the warnings it
    gave as (category, text), the text without PyTorch's "(Triggered internally ...)" suffix)."""
    import warnings

    out = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = fn(m)
            except Exception as err:  # noqa: BLE001 - the callers compare it with torch's
                r = err
        out.append((r, [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]))
    return out


def assert_same_error(fn):
    """``fn(module)`` raises for torch, and for ember the same exception type with the same message."""
    (got, _), (want, _) = outcomes(fn)
    assert isinstance(want, Exception), f"torch raised nothing: {want!r}"
    assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))


def assert_same_outcome(fn, **tolerances):
    """``fn(module)`` for ember and torch: where torch raises, ember raises the same exception type with the same
    message; otherwise the results are close (``assert_close``'s ``atol``/``rtol``)."""
    (got, _), (want, _) = outcomes(fn)
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
    else:
        assert_close(got, want, **tolerances)


def assert_same_grads(mine, theirs, **tolerances):
    """The ``.grad`` of each ember tensor in ``mine`` is None where torch's in ``theirs`` is, else close to it."""
    for e, t in zip(mine, theirs, strict=True):
        assert (e.grad is None) == (t.grad is None)
        if t.grad is not None:
            assert_close(e.grad, t.grad, **tolerances)


def node_names(fn, depth: int = 2) -> list:
    """The autograd node names breadth first from the node ``fn``, ``depth`` levels deep, each with its level (None
    for an edge without a node): ``[(0, "AddBackward0"), (1, "AccumulateGrad"), ...]``."""
    out, level = [], [(fn, 0)]
    while level:
        f, d = level.pop(0)
        if f is None:
            out.append((d, None))
            continue
        out.append((d, f.name().split("::")[-1]))
        if d < depth:
            level.extend((nf, d + 1) for nf, _ in f.next_functions)
    return out
