"""What a new user's training programs met under ember, each against PyTorch: a weights-only refusal's type, and
the type names of the nodes of advanced indexing and of the class losses (``type(loss.grad_fn).__name__``)."""

import argparse
import pickle

import numpy as np
import pytest
import torch

import ember


def both(fn):
    return fn(torch), fn(ember)


def test_weights_only_refusal_is_plain_unpickling_error(tmp_path):
    """PyTorch raises ``pickle.UnpicklingError`` itself for a checkpoint holding an ``argparse.Namespace``: a
    program printing ``type(e).__name__`` reads that name."""
    names = []
    for lib in (torch, ember):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"args": argparse.Namespace(lr=0.1), "w": lib.ones(2)}, path)
        with pytest.raises(pickle.UnpicklingError) as info:
            lib.load(path)
        names.append((type(info.value).__name__, str(info.value).startswith("Weights only load failed")))
    assert names[0] == names[1] == ("UnpicklingError", True)


INDEXES = {
    "tensor_in_middle": lambda lib, a: a[1, :, lib.tensor([0, 2, 4])],
    "tensor_first": lambda lib, a: a[lib.tensor([0, 1])],
    "mask": lambda lib, a: a[a > 0],
    "lists": lambda lib, a: a[[0, 1], [1, 2]],
}


@pytest.mark.parametrize("case", INDEXES)
def test_advanced_index_node_type_name(case):
    data = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32)
    t, e = both(lambda lib: INDEXES[case](lib, lib.tensor(data, requires_grad=True)))
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "IndexBackward0"
    assert e.grad_fn.name() == t.grad_fn.name()
    assert repr(e.grad_fn).split()[0] == repr(t.grad_fn).split()[0]


LOSSES = {
    "cross_entropy": lambda lib, x, t: lib.nn.functional.cross_entropy(x, t),
    "smoothing": lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, label_smoothing=0.1),
    "nll": lambda lib, x, t: lib.nn.functional.nll_loss(lib.nn.functional.log_softmax(x, 1), t),
    "probabilities": lambda lib, x, t: lib.nn.functional.cross_entropy(x, lib.softmax(x.detach(), 1)),
    "sum_4d": lambda lib, x, t: lib.nn.functional.cross_entropy(x.reshape(4, 5, 1, 1), t.reshape(4, 1, 1),
                                                                 reduction="sum"),
}


@pytest.mark.parametrize("case", LOSSES)
def test_class_loss_node_type_name(case):
    rng = np.random.RandomState(1)
    x, tgt = rng.randn(4, 5).astype(np.float32), np.array([0, 1, 2, 3])
    t, e = both(lambda lib: LOSSES[case](lib, lib.tensor(x, requires_grad=True), lib.tensor(tgt)))
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert e.grad_fn.name() == t.grad_fn.name()
    assert repr(e.grad_fn).split()[0] == repr(t.grad_fn).split()[0]
    np.testing.assert_allclose(e.item(), t.item(), rtol=1e-5)


def test_class_loss_node_renamed_per_call_and_under_create_graph():
    """One node class shows a different name per call (smoothing or not), and a second-order backward (which
    reruns the loss's forward) keeps the values PyTorch gives."""
    rng = np.random.RandomState(2)
    x, tgt = rng.randn(3, 4).astype(np.float32), np.array([0, 3, 1])
    out = []
    for lib in (torch, ember):
        xs = lib.tensor(x, requires_grad=True)
        f = lib.nn.functional
        names = [type(f.cross_entropy(xs, lib.tensor(tgt), label_smoothing=s).grad_fn).__name__ for s in (0.0, 0.2, 0.0)]
        (g,) = lib.autograd.grad(f.cross_entropy(xs, lib.tensor(tgt), label_smoothing=0.1), xs, create_graph=True)
        (gg,) = lib.autograd.grad(g.square().sum(), xs)
        out.append((names, gg.detach().numpy()))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-4, atol=1e-6)


NODES = {
    "max": lambda lib, x: x.max(),
    "min": lambda lib, x: x.min(),
    "max_0d_dim": lambda lib, x: x[0, 0].max(0)[0],
    "amax": lambda lib, x: x.amax(),
    "amin": lambda lib, x: x.amin(1),
    "igamma": lambda lib, x: lib.igamma(x.abs() + 1, lib.ones(4, 6)),
    "igammac": lambda lib, x: lib.igammac(x.abs() + 1, lib.ones(4, 6)),
    "unfold": lambda lib, x: x.unfold(1, 2, 2),
    "linear_mm": lambda lib, x: lib.nn.functional.linear(x, lib.ones(3, 6)),
    "linear_addmm": lambda lib, x: lib.nn.functional.linear(x, lib.ones(3, 6), lib.ones(3)),
    "linear_3d": lambda lib, x: lib.nn.functional.linear(x.reshape(2, 2, 6), lib.ones(3, 6), lib.ones(3)),
    "module": lambda lib, x: lib.nn.Linear(6, 2)(x),
    "copy_": lambda lib, x: (x * 1).copy_(lib.ones(4, 6)),
}


@pytest.mark.parametrize("case", NODES)
def test_node_type_name_is_pytorchs(case):
    """``type(y.grad_fn).__name__`` as PyTorch's where ember's node picks its name per call (max() of all
    elements or amax, igamma or igammac, linear's mm/addmm/view) or is its own class (unfold, copy_)."""
    data = np.random.RandomState(3).randn(4, 6).astype(np.float32)
    t, e = both(lambda lib: NODES[case](lib, lib.tensor(data, requires_grad=True)))
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert e.grad_fn.name() == t.grad_fn.name()  # (CopyBackwards in its torch::autograd:: namespace too)
    if not case.startswith("igamma"):  # (igamma's gradient for its first input is not implemented in PyTorch)
        t.sum().backward()
        e.sum().backward()


@pytest.mark.parametrize("sparse", [False, True])
def test_embedding_node_has_the_weights_edge_only(sparse):
    """PyTorch's EmbeddingBackward0 has one next function (the weight's): the indices are no input of the node."""
    data = np.random.RandomState(4).randn(5, 3).astype(np.float32)
    seen = []
    for lib in (torch, ember):
        w = lib.tensor(data, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor([[0, 2], [4, 2]]), w, sparse=sparse)
        nexts = [None if f is None else f.name().split("::")[-1] for f, _ in y.grad_fn.next_functions]
        (y * lib.arange(3.0)).sum().backward()
        seen.append((type(y.grad_fn).__name__, nexts, w.grad.to_dense().numpy()))
    assert seen[1][:2] == seen[0][:2]
    np.testing.assert_array_equal(seen[1][2], seen[0][2])


INTEGER_RESULTS = {
    "sum": lambda lib, x: x.sum(dtype=lib.int64),
    "sum_dim": lambda lib, x: x.sum(0, dtype=lib.int64),
    "sum_bool": lambda lib, x: lib.sum(x, dtype=lib.bool),
    "prod": lambda lib, x: x.prod(dtype=lib.int64),
    "nansum": lambda lib, x: x.nansum(dtype=lib.int32),
    "cumsum": lambda lib, x: x.cumsum(0, dtype=lib.int64),
    "cumprod": lambda lib, x: x.cumprod(0, dtype=lib.int64),
}


@pytest.mark.parametrize("case", INTEGER_RESULTS)
def test_integer_result_of_a_tensor_that_requires_grad(case):
    """PyTorch refuses a reduction's integer ``dtype=`` for a tensor that requires grad (ember's nansum gave an
    int32 result that required grad, the others a result without history); without grad mode it computes it."""
    data = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    errors = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            INTEGER_RESULTS[case](lib, lib.tensor(data, requires_grad=True))
        errors.append(str(info.value).split(" (")[0])
        with lib.no_grad():
            out = INTEGER_RESULTS[case](lib, lib.tensor(data, requires_grad=True))
        errors.append((str(out.dtype).split(".")[-1], out.requires_grad, out.tolist()))
        out = INTEGER_RESULTS[case](lib, lib.tensor(data))
        errors.append((str(out.dtype).split(".")[-1], out.requires_grad, out.tolist()))
    assert errors[3:] == errors[:3]
    assert errors[0].startswith("Autograd not support dtype: ")


PARTS = {
    "real": lambda lib, z: z.real,
    "imag": lambda lib, z: z.imag,
    "torch.real": lambda lib, z: lib.real(z),
    "view_as_real": lambda lib, z: lib.view_as_real(z),
    "real_inplace": lambda lib, z: (lambda w: (w.real.mul_(3.0), w)[1])(z * 1),
}


@pytest.mark.parametrize("case", PARTS)
def test_complex_parts_history_is_pytorchs(case):
    """``z.real`` is PyTorch's ``view_as_real(z).select(-1, 0)``: SelectBackward0 over ViewAsRealBackward0, in
    type and name; the gradients as PyTorch's."""
    data = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    seen = []
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        y = PARTS[case](lib, (1j + 0.5) * x)
        fn, chain = y.grad_fn, []
        while fn is not None and len(chain) < 3:
            chain.append((type(fn).__name__, fn.name().split("::")[-1]))
            fn = fn.next_functions[0][0] if fn.next_functions else None
        (g,) = lib.autograd.grad((lib.view_as_real(y) if y.is_complex() else y).square().sum(), x)
        seen.append((chain, g.numpy()))
    assert seen[1][0] == seen[0][0]
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-6)
