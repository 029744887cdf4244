"""One call on ember and on PyTorch with the same inputs, every outcome compared: the results (value, dtype, shape,
a zero's sign), the inputs after the call (running statistics updated in place, ``out=`` tensors), the first-order
gradients (and, on request, the create_graph gradients and their derivatives), the warnings' categories, or the
error's type and the gist of its message.

    same(lambda m, x, w: m.nn.functional.layer_norm(x, (3,), w), [x_array, w_array], ["float64", "float64"])

An array given with a dtype name becomes a tensor of that dtype (a leaf requiring grad when ``grad`` and the dtype
is floating, unless the name ends in "!": a buffer); None stays None. Tolerances by the result's dtype: float64 1e-12, float32 a few ulps, half precision
two of its ulps; integers and bools exact.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

FLOATING = ("float64", "float32", "float16", "bfloat16")
TOLERANCE = {"float64": 1e-12, "float32": 4e-6, "float16": 2e-3, "bfloat16": 1.6e-2,
             "complex128": 1e-12, "complex64": 4e-6}


def leaf(m, array, dtype: str, grad: bool):
    """``array`` as module ``m``'s tensor of ``dtype`` (a leaf requiring grad when asked and floating; never for a
    dtype written with a trailing "!", a buffer's: "float64!")."""
    t = m.tensor(np.asarray(array)).to(getattr(m, dtype.rstrip("!")))
    return t.requires_grad_(grad and dtype in FLOATING)


def _numpy(t):
    t = t.detach()
    if t.dtype in (torch.bool, ember.bool) or not (t.is_floating_point() or t.is_complex()):
        return t.numpy()
    return t.to(ember.complex128 if isinstance(t, ember.Tensor) and t.is_complex() else
                torch.complex128 if t.is_complex() else
                ember.float64 if isinstance(t, ember.Tensor) else torch.float64).numpy()


def _described(value):
    """A result as comparable parts: a tensor as (its values, dtype name, shape); tuples item by item."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return ("tensor", _numpy(value), str(value.dtype).split(".")[-1], tuple(value.shape))
    if isinstance(value, (tuple, list)):
        return ("sequence", [_described(v) for v in value])
    return ("value", value)


def _tensors(value) -> list:
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def gist(message: str) -> str:
    """An error message's first line without the module's own name (``torch.Size`` / ``ember.Size``)."""
    return message.split("\n")[0].replace("torch.", "").replace("ember.", "").strip()


def outcome(m, call, arrays, dtypes, grad: bool = True, double: bool = False, seed: int = 0) -> dict:
    """``call(m, *tensors)``: ``{"error": (type, message)}`` or the result, the inputs after the call, the warnings'
    categories and the gradients of every floating result that requires grad, each weighted by a fixed random
    tensor (``double``: taken with create_graph, then differentiated again, weighted by another)."""
    ts = [None if a is None else leaf(m, a, d, grad) for a, d in zip(arrays, dtypes, strict=True)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call(m, *ts)
        except Exception as err:  # noqa: BLE001 (its type and message are compared with PyTorch's)
            return {"error": (type(err).__name__, gist(str(err)))}
    found = {"result": _described(out), "after": [_described(t) for t in ts],
             "warnings": sorted({w.category.__name__ for w in caught})}
    leaves = [t for t in ts if t is not None and t.requires_grad]
    outs = [o for o in _tensors(out) if o.requires_grad]
    if leaves and outs:
        rng = np.random.default_rng(seed)
        weights = [m.tensor(rng.standard_normal(o.shape)).to(o.dtype) for o in outs]
        try:
            grads = m.autograd.grad(outs, leaves, weights, allow_unused=True, create_graph=double)
        except Exception as err:  # noqa: BLE001
            found["grads"] = ("error", type(err).__name__, gist(str(err)))
            return found
        found["grads"] = [None if g is None else _described(g) for g in grads]
        kept = [g for g in grads if g is not None and g.requires_grad]
        if double and kept:
            total = sum((g * m.tensor(rng.standard_normal(g.shape)).to(g.dtype)).sum() for g in kept)
            try:
                again = m.autograd.grad(total, leaves, allow_unused=True)
                found["double"] = [None if g is None else _described(g) for g in again]
            except Exception as err:  # noqa: BLE001
                found["double"] = ("error", type(err).__name__, gist(str(err)))
    return found


def _assert_same(e, t, where: str, dtypes, signed: bool = True) -> None:
    assert e[0] == t[0], f"{where}: {e} vs PyTorch's {t}"
    if t[0] == "sequence":
        assert len(e[1]) == len(t[1]), f"{where}: {len(e[1])} results, PyTorch's {len(t[1])}"
        for i, (a, b) in enumerate(zip(e[1], t[1])):
            _assert_same(a, b, f"{where}[{i}]", dtypes, signed)
        return
    if t[0] == "value":
        assert e[1] == t[1] or (e[1] != e[1] and t[1] != t[1]), f"{where}: {e[1]!r}, PyTorch's {t[1]!r}"
        return
    _, ev, edt, eshape = e
    _, tv, tdt, tshape = t
    assert (edt, eshape) == (tdt, tshape), f"{where}: {edt} {eshape}, PyTorch's {tdt} {tshape}"
    if tv.dtype.kind in "fc":
        # the widest rounding among the result's and the inputs' half-precision dtypes
        tol = max(TOLERANCE.get(d, 0) for d in (tdt, *[d for d in dtypes if d in ("float16", "bfloat16")]))
        np.testing.assert_allclose(ev, tv, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
        zeros = (tv == 0) & (ev == 0)
        if signed and tv.dtype.kind == "f":
            assert (np.signbit(ev[zeros]) == np.signbit(tv[zeros])).all(), f"{where}: a zero's sign, {ev} vs {tv}"
    else:
        np.testing.assert_array_equal(ev, tv, err_msg=where)


def assert_same_outcome(e: dict, t: dict, dtypes=(), signed: bool = True) -> None:
    """ember's outcome ``e`` as PyTorch's ``t``: the same error type and message gist (ember's message begins with
    PyTorch's first line, up to 60 characters; a TypeError's type alone, ember's argument parsing words its own), or
    the same results (a zero's sign too, with ``signed``), inputs after the call, warnings and gradients (a zero's
    sign not compared; a gradient that is None beside PyTorch's empty one taken as the same)."""
    if "error" in t or "error" in e:
        assert "error" in e, f"PyTorch raised {t['error']}, ember gave {e.get('result')}"
        assert "error" in t, f"ember raised {e['error']}, PyTorch computed"
        (etype, emsg), (ttype, tmsg) = e["error"], t["error"]
        assert etype == ttype, f"ember's {etype}: {emsg!r}, PyTorch's {ttype}: {tmsg!r}"
        assert ttype == "TypeError" or emsg.startswith(tmsg[:60]), f"ember's message {emsg!r}, PyTorch's {tmsg!r}"
        return
    dtypes = [d.rstrip("!") for d in dtypes if d]
    _assert_same(e["result"], t["result"], "result", dtypes, signed)
    for i, (a, b) in enumerate(zip(e["after"], t["after"], strict=True)):
        _assert_same(a, b, f"input {i} after the call", dtypes, signed)
    assert e["warnings"] == t["warnings"], f"warnings {e['warnings']}, PyTorch's {t['warnings']}"
    for key in ("grads", "double"):
        eg, tg = e.get(key), t.get(key)
        if key == "double" and (eg is None) != (tg is None):  # (no second graph beside an empty one)
            given = eg if tg is None else tg
            assert all(g is None or g[1].size == 0 for g in given), f"{key}: ember's {eg}, PyTorch's {tg}"
            continue
        assert (eg is None) == (tg is None), f"{key}: ember's {eg}, PyTorch's {tg}"
        if eg is None or tg is None:
            continue  # (a gradient without a graph: None beside an empty one was checked above)
        if isinstance(tg, tuple) or isinstance(eg, tuple):  # an error
            assert eg[:2] == tg[:2] and eg[2].startswith(tg[2][:60]), f"{key}: ember's {eg}, PyTorch's {tg}"
            continue
        for i, (a, b) in enumerate(zip(eg, tg, strict=True)):
            if a is None or b is None:
                assert a is b or (a or b)[1].size == 0, f"{key} of input {i}: ember's {a}, PyTorch's {b}"
                continue
            _assert_same(a, b, f"{key} of input {i}", dtypes, signed=False)


def same(call, arrays, dtypes, grad: bool = True, double: bool = False, rounding=(), signed: bool = True) -> dict:
    """``call`` on ember and on PyTorch, their outcomes asserted the same; PyTorch's outcome returned. ``rounding``:
    dtypes the call computes in besides its inputs' (a ``dtype=``), widening the tolerance to theirs."""
    t = outcome(torch, call, arrays, dtypes, grad, double)
    e = outcome(ember, call, arrays, dtypes, grad, double)
    assert_same_outcome(e, t, [*dtypes, *rounding], signed)
    return t


def mark_known(request, known: dict) -> None:
    """Mark the running test a strict xfail when ``known`` (reason -> test names) lists it: a difference from
    PyTorch found by these tests and not fixed yet (docs/testing.md lists them); its fix turns it into an XPASS,
    a failure, so the entry goes with it."""
    for reason, names in known.items():
        if request.node.name in names:  # (not strict where the outcome hangs on PyTorch's once-per-process warning)
            request.applymarker(pytest.mark.xfail(strict="once per process" not in reason, reason=reason))
