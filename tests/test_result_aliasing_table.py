"""Which results are their input, a view of it or a copy, as PyTorch's: for 119 calls (reductions over a dim of size
1, identities such as ``x * 1``, ``matrix_power(A, 1)``, ``cat`` of one tensor, casts to the same dtype, views,
dropout in eval mode, ``diag`` of a matrix ...) the result is the input object exactly where PyTorch's is, and a
write into the input after the call shows in the result exactly where it does in PyTorch's. (A result that returned
its input where PyTorch copies, as ``matrix_power(A, 1)`` did, passes every value test and changes when the input is
written; ``diag`` of a matrix was a view where PyTorch's ``diagonal_copy`` is a copy, ``diff(x, n=0)`` the input
itself.)"""

import numpy as np
import pytest
import torch

import ember


def F(m):
    return m.nn.functional


CALLS = {
 "sum(dim=1) of (3,1)": lambda m, x: x[:, :1].sum(1, keepdim=True),
 "x.sum(())": lambda m, x: x.sum(()),
 "amax over size-1": lambda m, x: x[:1].amax(0, keepdim=True),
 "max(dim) size-1": lambda m, x: x[:1].max(0, keepdim=True).values,
 "prod(dim) size-1": lambda m, x: x[:1].prod(0, keepdim=True),
 "mean(dim) size-1": lambda m, x: x[:1].mean(0),
 "cumsum size-1": lambda m, x: x[:1].cumsum(0),
 "cumsum": lambda m, x: x.cumsum(1),
 "logsumexp size-1": lambda m, x: m.logsumexp(x[:1], 0),
 "norm size-1": lambda m, x: x[:1].norm(dim=0),
 "abs": lambda m, x: x.abs(), "abs of uint8": lambda m, x: x.to(m.uint8).abs(),
 "neg": lambda m, x: -x, "+x": lambda m, x: +x,
 "clamp wide": lambda m, x: x.clamp(-100, 100), "clamp(min=-inf)": lambda m, x: x.clamp(min=-float("inf")),
 "sign of bool": lambda m, x: (x > 0).sign(), "round int": lambda m, x: x.long().round(),
 "floor int": lambda m, x: x.long().floor(), "ceil int": lambda m, x: x.long().ceil(), "trunc int": lambda m, x: x.long().trunc(),
 "square": lambda m, x: x.square(), "x * 1": lambda m, x: x * 1, "x + 0": lambda m, x: x + 0,
 "x ** 1": lambda m, x: x ** 1, "pow(x, 1)": lambda m, x: m.pow(x, 1), "x / 1": lambda m, x: x / 1,
 "add alpha 0": lambda m, x: m.add(x, x, alpha=0),
 "matmul by eye": lambda m, x: x @ m.eye(4), "matrix_power 1": lambda m, x: m.linalg.matrix_power(x[:, :3], 1),
 "matrix_power 0": lambda m, x: m.matrix_power(x[:, :3], 0),
 "multi_dot two": lambda m, x: m.linalg.multi_dot([x, m.eye(4)]),
 "kron 1x1": lambda m, x: m.kron(x, m.ones(1, 1)), "tensordot dims 0 with scalar": lambda m, x: m.tensordot(x, m.tensor(1.0), dims=0),
 "einsum ij->ij": lambda m, x: m.einsum("ij->ij", x), "einsum ij->ji": lambda m, x: m.einsum("ij->ji", x),
 "addmm beta0 alpha1": lambda m, x: m.addmm(x, x[:, :0], m.zeros(0, 4)),
 "cat one": lambda m, x: m.cat([x]), "stack one": lambda m, x: m.stack([x])[0],
 "block_diag one": lambda m, x: m.block_diag(x), "atleast_2d": lambda m, x: m.atleast_2d(x),
 "contiguous": lambda m, x: x.contiguous(), "float()": lambda m, x: x.float(), "to(float32)": lambda m, x: x.to(m.float32),
 "type_as": lambda m, x: x.type_as(x), "to(copy=True)": lambda m, x: x.to(m.float32, copy=True),
 "clone": lambda m, x: x.clone(), "detach": lambda m, x: x.detach(),
 "real": lambda m, x: x.real, "conj": lambda m, x: x.conj(), "conj_physical": lambda m, x: x.conj_physical(),
 "resolve_conj": lambda m, x: x.resolve_conj(), "resolve_neg": lambda m, x: x.resolve_neg(),
 "nan_to_num": lambda m, x: x.nan_to_num(), "where all true": lambda m, x: m.where(m.ones(3, 4, dtype=m.bool), x, 0.0),
 "flatten 1-d": lambda m, x: x[0].flatten(), "ravel": lambda m, x: x.ravel(), "reshape same": lambda m, x: x.reshape(3, 4),
 "view_as": lambda m, x: x.view_as(x), "expand_as": lambda m, x: x.expand_as(x), "broadcast_to": lambda m, x: m.broadcast_to(x, (3, 4)),
 "broadcast_tensors": lambda m, x: m.broadcast_tensors(x, x)[0], "squeeze no-op": lambda m, x: x.squeeze(),
 "movedim 0 0": lambda m, x: m.movedim(x, 0, 0), "T": lambda m, x: x.T, "mT": lambda m, x: x.mT,
 "narrow full": lambda m, x: x.narrow(0, 0, 3), "x[...]": lambda m, x: x[...], "x[:]": lambda m, x: x[:],
 "split big": lambda m, x: m.split(x, 5)[0], "chunk 1": lambda m, x: x.chunk(1)[0], "unbind": lambda m, x: x.unbind()[0],
 "tril big": lambda m, x: x.tril(10), "triu low": lambda m, x: x.triu(-10), "flip ()": lambda m, x: x.flip(()),
 "roll 0": lambda m, x: x.roll(0, 0), "repeat 1": lambda m, x: x.repeat(1, 1), "tile 1": lambda m, x: x.tile((1,)),
 "diagonal": lambda m, x: x.diagonal(), "diag of 2-d": lambda m, x: m.diag(x),
 "relu": lambda m, x: m.relu(x), "F.relu inplace=False": lambda m, x: F(m).relu(x),
 "hardtanh wide": lambda m, x: F(m).hardtanh(x, -100, 100), "dropout p=0": lambda m, x: F(m).dropout(x, 0.0),
 "dropout eval": lambda m, x: F(m).dropout(x, 0.5, training=False), "Identity": lambda m, x: m.nn.Identity()(x),
 "Flatten module": lambda m, x: m.nn.Flatten(0)(x), "Dropout eval": lambda m, x: m.nn.Dropout().eval()(x),
 "layer_norm": lambda m, x: F(m).layer_norm(x, (4,)), "normalize": lambda m, x: F(m).normalize(x),
 "pad 0": lambda m, x: F(m).pad(x, (0, 0)), "softmax": lambda m, x: x.softmax(1),
 "alpha_dropout p=0": lambda m, x: F(m).alpha_dropout(x, 0.0, True), "feature_alpha_dropout eval": lambda m, x: F(m).feature_alpha_dropout(x, 0.3, False),
 "dropout2d p0": lambda m, x: F(m).dropout2d(x[None, None], 0.0)[0, 0],
 "threshold none": lambda m, x: F(m).threshold(x, -100.0, 0.0), "sort": lambda m, x: x.sort().values,
 "as_tensor": lambda m, x: m.as_tensor(x), "asarray": lambda m, x: m.asarray(x), "requires_grad_": lambda m, x: x.requires_grad_(False),
 "cpu": lambda m, x: x.cpu(), "type()": lambda m, x: x.type(m.float32), "data": lambda m, x: x.data,
 "linalg.vector_norm ord=1 size-1": lambda m, x: m.linalg.vector_norm(x[:1], 1, dim=0),
 "std_mean mean": lambda m, x: m.std_mean(x[:2], 0)[1], "var_mean": lambda m, x: m.var_mean(x, 0)[1],
 "nansum": lambda m, x: m.nansum(x[:1], 0), "median dim size-1": lambda m, x: x[:1].median(0).values,
 "kthvalue": lambda m, x: x[:1].kthvalue(1, 0).values, "topk all": lambda m, x: x.topk(4).values,
 "cummax": lambda m, x: x.cummax(1).values, "diff n=0": lambda m, x: m.diff(x, n=0),
 "clamp_min tensor": lambda m, x: m.clamp(x, min=m.tensor(-100.0)), "maximum self": lambda m, x: m.maximum(x, x),
 "fmax": lambda m, x: m.fmax(x, x), "lerp w=0": lambda m, x: m.lerp(x, x, 0.0),
 "addcmul value 0": lambda m, x: m.addcmul(x, x, x, value=0), "mul_ of result": lambda m, x: x.mul(1),
 "float_power": lambda m, x: x.double().float_power(1),
}


def _aliasing(m, call):
    x = m.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5)
    r = CALLS[call](m, x)
    before = r.detach().clone()
    with m.no_grad():
        x.fill_(7.0)
    return r is x, (not bool((r.detach() == before).all())) if r.numel() else None


@pytest.mark.parametrize("call", list(CALLS))
def test_result_is_the_input_a_view_or_a_copy_as_pytorchs(call):
    assert _aliasing(ember, call) == _aliasing(torch, call)


UNBATCHED_FEATURE_DROPOUTS = {
    "dropout1d eval": lambda F, x: F.dropout1d(x, 0.5, False),
    "dropout1d p=0": lambda F, x: F.dropout1d(x, 0.0, True),
    "dropout1d p=1": lambda F, x: F.dropout1d(x, 1.0, True),
    "dropout1d training": lambda F, x: F.dropout1d(x, 0.5, True),
    "dropout1d in place": lambda F, x: F.dropout1d(x, 0.5, True, True),
    "dropout1d in place, eval": lambda F, x: F.dropout1d(x, 0.5, False, True),
    "dropout1d batched eval": lambda F, x: F.dropout1d(x.unsqueeze(0), 0.5, False),
    "dropout1d empty": lambda F, x: F.dropout1d(x[:0], 0.5, True),
    "dropout3d eval": lambda F, x: F.dropout3d(x.reshape(3, 2, 2, 1), 0.5, False),
    "dropout3d training": lambda F, x: F.dropout3d(x.reshape(3, 2, 2, 1), 0.5, True),
    "dropout3d of 3-D (deprecated)": lambda F, x: F.dropout3d(x.reshape(3, 2, 2), 0.5, False),
}


def test_dropout1d_module_in_eval_mode_of_an_unbatched_input_is_a_view():
    def call(m):
        x = m.ones(3, 4)
        r = m.nn.Dropout1d().eval()(x)
        return r is x, r._base is x

    assert call(ember) == call(torch)


@pytest.mark.filterwarnings("ignore:dropout3d")
@pytest.mark.parametrize("call", list(UNBATCHED_FEATURE_DROPOUTS))
def test_unbatched_feature_dropouts_are_views_of_their_input_as_pytorchs(call):
    """PyTorch's dropout1d/dropout3d unsqueeze an unbatched input and squeeze the result back (out of place): a
    view of the input even in eval mode, with SqueezeBackward1 and UnsqueezeBackward0 in its graph."""
    def run(m):
        x = m.ones(3, 4, requires_grad="in place" not in call)
        r = UNBATCHED_FEATURE_DROPOUTS[call](m.nn.functional, x)
        names, f = [], r.grad_fn
        while f is not None:
            names.append(f.name())
            f = next((n for n, _ in f.next_functions if n is not None), None)
        return r is x, r._base is x, names, tuple(r.shape), r.is_contiguous()

    assert run(ember) == run(torch)


@pytest.mark.parametrize("call", ["diag", "diag(offset)", "diff(n=0)", "diff(n=0, prepend)", "diff(n=0) of ints"])
def test_diag_of_a_matrix_and_diff_of_order_0_are_pytorchs_copies(call):
    """Their node (DiagonalBackward0_copy, CopyBackwards), its edges, the gradient and the result's layout."""
    def run(m):
        x = m.arange(12.0).reshape(3, 4).requires_grad_()
        r = {"diag": lambda: m.diag(x), "diag(offset)": lambda: m.diag(x, -1), "diff(n=0)": lambda: m.diff(x, n=0),
             "diff(n=0, prepend)": lambda: m.diff(x, n=0, prepend=x[:, :1]),
             "diff(n=0) of ints": lambda: m.diff(m.arange(4), n=0)}[call]()
        if not r.requires_grad:
            return str(r.dtype).split(".")[1], r.tolist()
        edges = [type(f[0]).__name__ if f[0] is not None else None for f in r.grad_fn.next_functions]
        (r * m.arange(float(r.numel())).reshape(r.shape)).sum().backward()
        return r.grad_fn.name(), edges, r.is_contiguous(), r.tolist(), x.grad.tolist()

    assert run(ember) == run(torch)


DIFF_CALLS = [dict(n=0, dim=5, prepend="x"), dict(n=1, dim=5), dict(n=0, dim=-1, prepend="x[:, :1]"), dict(n=-1, dim=5),
              dict(n=0, prepend="ones(2)", dim=7), dict(n=1, prepend="x[:, :1]"), dict(n=0, dim=0, prepend="x[:1, :3]"),
              dict(n=0, dim=5), dict(n=2, append="ones(5, 5)"), dict(n=1, prepend="ones(2)"),
              dict(n=1, dim=0, append="x[:2]"), dict(n=0, append="x[:, :2]")]


@pytest.mark.parametrize("kwargs", DIFF_CALLS, ids=str)
def test_diff_checks_and_order_0_as_pytorch(kwargs):
    """PyTorch's checks of diff in its order (a negative order; prepend/append of another rank or shape, the dim
    wrapped only where one is given), and order 0 a copy of the input with prepend and append left out."""
    def run(m):
        x = m.arange(12.0).reshape(3, 4)
        names = {"x": x, "x[:, :1]": x[:, :1], "x[:1, :3]": x[:1, :3], "x[:, :2]": x[:, :2], "x[:2]": x[:2],
                 "ones(2)": m.ones(2), "ones(5, 5)": m.ones(5, 5)}
        try:
            return m.diff(x, **{k: names.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}).tolist()
        except (RuntimeError, IndexError) as e:
            return type(e).__name__, str(e)

    assert run(ember) == run(torch)
