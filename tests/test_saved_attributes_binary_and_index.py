"""``grad_fn._saved_<name>`` of fmod, remainder, hypot, lerp, copysign, index_put (``x[idx] = v``), scatter,
scatter_add, gather, index_add, masked_scatter and indexing against PyTorch: the names ``dir(grad_fn)`` lists and each value (a number, a flag,
a tensor's shape, dtype and values, a tuple of index tensors), and the node's name (``CopysignBackward1`` for a
number sign). Companion of test_grad_fn_saved_attributes.py, whose cases cover the other ops."""

import numpy as np
import pytest
import torch

import ember


def _describe(value):
    """What a program can observe of one saved attribute's value, comparable across the two libraries."""
    if isinstance(value, (tuple, list)):
        return tuple(_describe(v) for v in value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return ("tensor", tuple(value.shape), str(value.dtype).rpartition(".")[2], value.requires_grad,
            value.detach().double().numpy().round(5).tolist())


def _inputs(lib):
    gen = np.random.default_rng(0)
    x = lib.tensor(gen.standard_normal(4).astype(np.float32), requires_grad=True)
    y = lib.tensor(gen.standard_normal(4).astype(np.float32), requires_grad=True)
    m = lib.tensor(gen.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    return {"x": x, "y": y, "m": m, "w": lib.tensor([0.2, 0.5, 0.7, 0.9], requires_grad=True),
            "idx": lib.tensor([0, 0, 3]), "i2": lib.tensor([[0, 2, 1, 0], [1, 1, 0, 2]])}


def _written(lib, t, index, values, accumulate=False):
    z = t["x"] * 1
    return z.index_put_(index, values, accumulate=accumulate)


def _set(t, index, value):
    z = t["m"] * 1
    z[index] = value
    return z


CASES = {
    "fmod": lambda lib, t: lib.fmod(t["x"], t["y"]),
    "fmod_constant_divisor": lambda lib, t: lib.fmod(t["x"], t["y"].detach()),
    "fmod_number": lambda lib, t: lib.fmod(t["x"], 1.5),
    "remainder": lambda lib, t: lib.remainder(t["x"], t["y"]),
    "remainder_method": lambda lib, t: t["x"].remainder(t["y"]),
    "hypot": lambda lib, t: lib.hypot(t["x"], t["y"]),
    "hypot_one_grad": lambda lib, t: lib.hypot(t["x"].detach(), t["y"]),
    "lerp_tensor": lambda lib, t: lib.lerp(t["x"], t["y"], t["w"]),
    "lerp_constant_weight": lambda lib, t: lib.lerp(t["x"], t["y"], t["w"].detach()),
    "lerp_number": lambda lib, t: lib.lerp(t["x"], t["y"], 0.3),
    "lerp_number_high": lambda lib, t: t["x"].lerp(t["y"], 0.75),
    "copysign": lambda lib, t: lib.copysign(t["x"], t["y"]),
    "copysign_number": lambda lib, t: lib.copysign(t["x"], -1.0),
    "copysign_int_number": lambda lib, t: t["x"].copysign(2),
    "setitem": lambda lib, t: _set(t, t["idx"][:2], t["y"][:1]),
    "setitem_rows": lambda lib, t: _set(t, lib.tensor([2, 0]), t["y"]),
    "index_put": lambda lib, t: _written(lib, t, (lib.tensor([1, 3]),), t["y"][:2]),
    "index_put_accumulate": lambda lib, t: _written(lib, t, (t["idx"],), t["y"][:3], accumulate=True),
    "index_put_function": lambda lib, t: lib.index_put(t["x"], (t["idx"],), t["y"][:3]),
    "scatter_add": lambda lib, t: lib.scatter_add(t["x"], 0, t["idx"], t["y"][:3]),
    "scatter_add_2d": lambda lib, t: t["m"].scatter_add(1, t["i2"][:, :3], t["m"][:2]),
    "scatter": lambda lib, t: lib.scatter(t["x"], 0, lib.tensor([1, 0, 3]), t["y"][:3]),
    "scatter_number": lambda lib, t: lib.scatter(t["x"], 0, t["idx"], 2.0),
    "gather": lambda lib, t: lib.gather(t["x"], 0, t["idx"]),
    "gather_2d": lambda lib, t: t["m"].gather(0, t["i2"]),
    "index": lambda lib, t: t["x"][t["idx"]],
    "index_rows": lambda lib, t: t["m"][lib.tensor([2, 0])],
    "index_two": lambda lib, t: t["m"][lib.tensor([2, 0]), lib.tensor([1, 3])],
    "index_columns": lambda lib, t: t["m"][:, lib.tensor([2, 0])],
    "index_after_ellipsis": lambda lib, t: t["m"][..., lib.tensor([2, 0])],
    "index_mask": lambda lib, t: t["m"][t["m"] > 0],
    "setitem_columns": lambda lib, t: _set(t, (slice(None), lib.tensor([3, 1])), 0.5),
    "setitem_mask": lambda lib, t: _set(t, t["m"] > 0, 0.0),
    "masked_scatter": lambda lib, t: t["x"].masked_scatter(t["x"] > 0, t["y"]),
    "index_add": lambda lib, t: t["x"].index_add(0, t["idx"], t["y"][:3], alpha=2),
    "index_add_constant_source": lambda lib, t: t["m"].index_add(1, t["idx"], t["m"][:, :3].detach()),
}


def _saved(lib, case):
    t = _inputs(lib)
    fn = CASES[case](lib, t).grad_fn
    names = sorted(n for n in dir(fn) if n.startswith("_saved_"))
    return fn.name(), {n: _describe(getattr(fn, n)) for n in names}


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_attributes_as_torch(case):
    name, want = _saved(torch, case)
    got_name, got = _saved(ember, case)
    assert (got_name, got) == (name, want)


def test_gather_input_changed_in_place_before_backward_is_pytorchs_error():
    """PyTorch's gather node saves its input: changing it in place before backward is its error (ember computed a
    gradient)."""
    messages = []
    for lib in (torch, ember):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1
        y = a.gather(0, lib.tensor([0, 2]))
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as caught:
            y.sum().backward()
        messages.append(str(caught.value).split(";")[0])
    assert messages[0] == messages[1]


def _bind(lib, x, y):
    """The double-backward cases: each op's first gradient, taken with create_graph, is recorded by PyTorch's
    formula as its own node."""
    return {
        "index": lambda: x[lib.tensor([0, 2, 2])],
        "index_mask": lambda: x[x > 0],
        "index_select": lambda: lib.index_select(x, 0, lib.tensor([0, 2])),
        "gather": lambda: lib.gather(x, 0, lib.tensor([0, 2])),
        "scatter": lambda: lib.scatter(x, 0, lib.tensor([0, 2]), y[:2]),
        "index_put": lambda: x.index_put((lib.tensor([0, 2]),), y[:2]),
        "lerp_number": lambda: lib.lerp(x, y, 0.3),
        "lerp_number_high": lambda: lib.lerp(x, y, 0.8),
    }


@pytest.mark.parametrize("case", sorted(_bind(torch, None, None)))
def test_gradient_nodes_under_create_graph_as_torch(case):
    """The first gradient's node (name and ``_saved_*``; a SliceBackwardBackward0's are left out) and the gradient
    of a function of it with respect to the incoming gradient, as PyTorch's."""
    seen = []
    for lib in (torch, ember):
        x = lib.tensor([1.5, -2.0, 3.0, 0.5], requires_grad=True)
        y = lib.tensor([0.7, 1.0, -2.0, 0.25], requires_grad=True)
        r = _bind(lib, x, y)[case]()
        v = lib.linspace(0.5, 2.0, r.numel()).reshape(r.shape).requires_grad_()
        grads = lib.autograd.grad(r, (x, y), v, create_graph=True, allow_unused=True)
        nodes = []
        for g in grads:
            fn = None if g is None else g.grad_fn
            nodes.append(None if fn is None else (fn.name(), {} if fn.name() == "SliceBackwardBackward0" else {
                a: _describe(getattr(fn, a)) for a in sorted(dir(fn)) if a.startswith("_saved_")}))
        wanted = [g for g in grads if g is not None and g.requires_grad]
        second = lib.autograd.grad(sum((g * g).sum() for g in wanted), v)[0]
        seen.append((nodes, second.detach().numpy().round(5).tolist()))
    assert seen[1] == seen[0]
