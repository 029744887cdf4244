"""Found by writing small training programs as a new user would, each checked against PyTorch."""

import numpy as np
import pytest
import torch

import ember

# -- views of an inference tensor outside inference mode record no history ------------------------------------
_VIEWS = {
    "t": lambda w: w.t(), "view": lambda w: w.view(8), "select": lambda w: w[0], "slice": lambda w: w[:, 1:3],
    "none": lambda w: w[None], "expand": lambda w: w.expand(3, 2, 4), "unbind": lambda w: w.unbind(0)[0],
    "split": lambda w: w.split(1)[0], "chunk": lambda w: w.chunk(2, 1)[1], "mT": lambda w: w.mT,
    "narrow": lambda w: w.narrow(1, 0, 2), "as_strided": lambda w: w.as_strided((2,), (1,)),
    "movedim": lambda w: w.movedim(0, 1), "diagonal": lambda w: w.diagonal(), "unfold": lambda w: w.unfold(1, 2, 1),
    "mul (not a view)": lambda w: w * 2,
}


def _view_outcome(m, name):
    with m.inference_mode():
        w = m.ones(2, 4, requires_grad=True)
    v = _VIEWS[name](w)
    return v.requires_grad, type(v.grad_fn).__name__, v.is_leaf, v.is_inference()


@pytest.mark.parametrize("name", sorted(_VIEWS))
def test_view_of_inference_tensor_outside_inference_mode_as_torch(name):
    assert _view_outcome(ember, name) == _view_outcome(torch, name)


# -- a model built under inference_mode(), trained outside it: linear's weight.t() passes no gradient -------
_CALLS = {
    "2-d": lambda m, mod: mod["lin"](m.ones(4, 3)),
    "3-d": lambda m, mod: mod["lin"](m.ones(2, 4, 3)),
    "1-d": lambda m, mod: mod["lin"](m.ones(3)),
    "input requires grad": lambda m, mod: mod["lin"](m.ones(4, 3, requires_grad=True)),
    "no bias": lambda m, mod: mod["nb"](m.ones(4, 3)),
    "matmul by weight.T": lambda m, mod: m.ones(4, 3) @ mod["lin"].weight.T,
    "conv": lambda m, mod: mod["conv"](m.ones(1, 2, 5)),
}


def _train_outcome(m, call):
    with m.inference_mode():
        mods = {"lin": m.nn.Linear(3, 2), "nb": m.nn.Linear(3, 2, bias=False), "conv": m.nn.Conv1d(2, 2, 3)}
    try:
        out = _CALLS[call](m, mods)
        out.sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)[:70]  # (the gist: ember's says more after it of why there is no grad_fn)
    got = sorted(f"{k}.{n}" for k, mod in mods.items() for n, p in mod.named_parameters() if p.grad is not None)
    return type(out.grad_fn).__name__, got


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_training_a_model_built_in_inference_mode_as_torch(call):
    assert _train_outcome(ember, call) == _train_outcome(torch, call)


# -- a graph convolution whose adjacency values require grad ---------------------------------------------------
_IDX = [[0, 1, 1, 2], [1, 0, 2, 1]]


def _gcn_step(m, vals):
    adj = m.sparse_coo_tensor(m.tensor(_IDX), vals, (3, 3), check_invariants=True)
    x = m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], requires_grad=True)
    out = m.sparse.mm(adj, x)
    out.pow(2).sum().backward()
    return out.tolist(), x.grad.tolist(), type(out.grad_fn).__name__


def test_sparse_adjacency_of_detached_values_as_torch():
    assert _gcn_step(ember, ember.tensor([0.5, 1.0, 2.0, -1.0])) == _gcn_step(torch, torch.tensor([0.5, 1.0, 2.0, -1.0]))


@pytest.mark.parametrize("factory", ["sparse_coo_tensor", "sparse_csr_tensor"])
def test_sparse_values_requiring_grad_are_refused_not_silently_detached(factory):
    # PyTorch passes the gradient back to the values; ember's sparse tensors never join a graph, so it refuses
    # rather than train the values silently without one
    vals = torch.tensor([0.5, 1.0, 2.0, -1.0], requires_grad=True)
    _gcn_step(torch, vals)
    assert vals.grad is not None
    args = ((ember.tensor(_IDX),) if factory == "sparse_coo_tensor"
            else (ember.tensor([0, 1, 3, 4]), ember.tensor([1, 0, 2, 1])))
    with pytest.raises(NotImplementedError, match="require grad"):
        getattr(ember, factory)(*args, ember.tensor([0.5, 1.0, 2.0, -1.0], requires_grad=True), (3, 3))
    assert getattr(ember, factory)(*args, ember.tensor([0.5, 1.0, 2.0, -1.0]), (3, 3)).layout != ember.strided
    with ember.no_grad():  # (no graph to join)
        assert getattr(ember, factory)(*args, ember.tensor([0.5, 1.0, 2.0, -1.0], requires_grad=True),
                                             (3, 3)).layout != ember.strided


# -- scaled_dot_product_attention where PyTorch's CPU takes its math composite: its last node's name ---------
_R = lambda m, *shape: m.ones(*shape, requires_grad=True)  # noqa: E731
_SDPA = {
    "2-d": lambda m: ((_R(m, 3, 8), _R(m, 5, 8), _R(m, 5, 8)), {}),
    "2-d, key and value constant": lambda m: ((_R(m, 3, 8), m.ones(5, 8), m.ones(5, 8)), {}),
    "3-d": lambda m: ((_R(m, 2, 3, 8), _R(m, 2, 5, 8), _R(m, 2, 5, 8)), {}),
    "3-d causal": lambda m: ((_R(m, 2, 3, 8), _R(m, 2, 5, 8), _R(m, 2, 5, 8)), {"is_causal": True}),
    "2-d query, 3-d key": lambda m: ((_R(m, 3, 8), _R(m, 2, 5, 8), _R(m, 2, 5, 8)), {}),
    "5-d": lambda m: ((_R(m, 1, 1, 2, 3, 8), _R(m, 1, 1, 2, 5, 8), _R(m, 1, 1, 2, 5, 8)), {}),
    "4-d, mask requiring grad": lambda m: ((_R(m, 1, 2, 3, 8), _R(m, 1, 2, 5, 8), _R(m, 1, 2, 5, 8)),
                                           {"attn_mask": _R(m, 3, 5)}),
    "4-d, other value size": lambda m: ((_R(m, 1, 2, 3, 8), _R(m, 1, 2, 5, 8), _R(m, 1, 2, 5, 4)), {}),
    "4-d, broadcast batch": lambda m: ((_R(m, 2, 2, 3, 8), _R(m, 1, 2, 5, 8), _R(m, 1, 2, 5, 8)), {}),
    "empty query": lambda m: ((_R(m, 0, 3, 8), _R(m, 0, 5, 8), _R(m, 0, 5, 8)), {}),
    "4-d, no query rows": lambda m: ((_R(m, 2, 2, 0, 8), _R(m, 2, 2, 5, 8), _R(m, 2, 2, 5, 8)), {}),
    "4-d flash (unchanged)": lambda m: ((_R(m, 1, 2, 3, 8), _R(m, 1, 2, 5, 8), _R(m, 1, 2, 5, 8)), {}),
}


@pytest.mark.parametrize("case", sorted(_SDPA))
def test_sdpa_math_path_node_name_as_torch(case):
    got = {}
    for m in (torch, ember):
        args, kw = _SDPA[case](m)
        y = m.nn.functional.scaled_dot_product_attention(*args, **kw)
        got[m] = y.grad_fn.name(), type(y.grad_fn).__name__, tuple(y.shape), round(y.sum().item(), 4)
    assert got[ember] == got[torch]


# -- a node's type reads as its name(), as PyTorch's node types do ------------------------------------------------
_NODES = {
    "conj": lambda m, x, c: c.conj(), "conj_physical": lambda m, x, c: m.conj_physical(c),
    "angle": lambda m, x, c: x.angle(), "complex": lambda m, x, c: m.complex(x, x), "polar": lambda m, x, c: m.polar(x, x),
    "digamma": lambda m, x, c: x.digamma(), "lgamma": lambda m, x, c: x.lgamma(),
    "polygamma": lambda m, x, c: m.polygamma(1, x), "diagonal": lambda m, x, c: x.diagonal(),
    "as_strided": lambda m, x, c: x.as_strided((2,), (1,)), "index_select": lambda m, x, c: x.index_select(0, m.tensor([0])),
    "real": lambda m, x, c: c.real, "cat": lambda m, x, c: m.cat([x, x]), "tril": lambda m, x, c: x.tril(),
}


@pytest.mark.parametrize("op", sorted(_NODES))
def test_node_type_name_is_its_torch_name(op):
    got = {}
    for m in (torch, ember):
        x = m.full((2, 3), 0.75, requires_grad=True)
        c = m.ones(2, 3, dtype=m.complex64, requires_grad=True)
        g = _NODES[op](m, x, c).grad_fn
        got[m] = g.name(), type(g).__name__
    assert got[ember] == got[torch]


# -- node names of PyTorch's own ops that ember named after its classes ------------------------------------------
_EYE3 = [[3.0, 0.5, 0.25], [0.5, 3.0, 0.5], [0.25, 0.5, 3.0]]
_OWN = {
    "diag_embed": lambda m, a: m.diag_embed(a[0]),
    "diag_embed dims": lambda m, a: m.diag_embed(a, 1, 0, 2),
    "lu_factor": lambda m, a: m.linalg.lu_factor(a)[0],
    "solve_triangular": lambda m, a: m.linalg.solve_triangular(a.triu(), a, upper=True),
    "triangular_solve": lambda m, a: m.triangular_solve(a, a.triu())[0],
    "grid_sample 2-d": lambda m, a: m.nn.functional.grid_sample(a[None, None], m.zeros(1, 1, 1, 2), align_corners=False),
    "grid_sample 3-d": lambda m, a: m.nn.functional.grid_sample(a[None, None, None], m.zeros(1, 1, 1, 1, 3),
                                                                align_corners=False),
    "grid_sample bicubic": lambda m, a: m.nn.functional.grid_sample(a[None, None], m.zeros(1, 1, 1, 2),
                                                                    mode="bicubic", align_corners=False),
}


@pytest.mark.parametrize("op", sorted(_OWN))
@pytest.mark.filterwarnings("ignore::UserWarning")  # (triangular_solve's deprecation)
def test_own_op_node_name_as_torch(op):
    got = {}
    for m in (torch, ember):
        a = m.tensor(_EYE3, requires_grad=True)
        y = _OWN[op](m, a)
        y.sum().backward()
        got[m] = y.grad_fn.name(), type(y.grad_fn).__name__, [round(v, 4) for v in a.grad.flatten().tolist()]
    assert got[ember] == got[torch]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", [((1, 2, 5), (1, 2)), ((2, 5), (1, 1)), ((1, 1, 4, 5), (1, 1, 2, 0)),
                                       ((1, 1, 3, 4, 5), (1, 1, 1, 1, 1, 1))])
def test_pad_node_name_as_torch(mode, shape, pad):
    got = {}
    for m in (torch, ember):
        x = m.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        y = m.nn.functional.pad(x, pad, mode=mode)
        (y * y).sum().backward()
        got[m] = y.grad_fn.name(), type(y.grad_fn).__name__, x.grad.flatten().tolist()
    assert got[ember] == got[torch]


@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (3,), (0, 3)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_bilinear_node_name_and_empty_batch_as_torch(shape, with_bias):
    got = {}
    for m in (torch, ember):
        x = m.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        w = m.arange(18.0).reshape(2, 3, 3).requires_grad_()
        b = m.tensor([1.0, -1.0], requires_grad=True) if with_bias else None
        y = m.nn.functional.bilinear(x, x, w, b)
        (y * y).sum().backward()
        got[m] = y.grad_fn.name(), tuple(y.shape), y.tolist(), x.grad.tolist(), w.grad.tolist()
    assert got[ember] == got[torch]


_QUANTILES = {
    "scalar q": lambda m, x: m.quantile(x, 0.5), "q tensor": lambda m, x: m.quantile(x, m.tensor([0.2, 0.5])),
    "dim keepdim": lambda m, x: m.quantile(x, m.tensor([0.25]), dim=1, keepdim=True),
    "0-d input": lambda m, x: m.quantile(x[0, 0], 0.3), "nanquantile": lambda m, x: m.nanquantile(x, 0.4, dim=0),
}


@pytest.mark.parametrize("case", sorted(_QUANTILES))
def test_quantile_node_name_as_torch(case):
    got = {}
    for m in (torch, ember):
        x = m.tensor([[0.5, 0.1, 0.9, 0.3, 0.7], [0.2, 0.8, 0.4, 0.6, 0.0]], requires_grad=True)
        y = _QUANTILES[case](m, x)
        y.sum().backward()
        got[m] = y.grad_fn.name(), tuple(y.shape), [round(v, 5) for v in x.grad.flatten().tolist()]
    assert got[ember] == got[torch]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("weight", [None, "constant", "requires grad"])
def test_rms_norm_node_name_as_torch(dtype, weight):
    got = {}
    for m in (torch, ember):
        dt = getattr(m, dtype)
        x = m.tensor([[0.5, -1.0, 2.0], [0.25, 0.0, -0.75]], dtype=dt, requires_grad=True)
        w = None if weight is None else m.tensor([1.0, 0.5, 2.0], dtype=dt, requires_grad=weight == "requires grad")
        y = m.nn.functional.rms_norm(x, (3,), w)
        got[m] = y.grad_fn.name(), type(y.grad_fn).__name__, y.dtype == dt
    assert got[ember] == got[torch]


_DIST = {
    "pairwise_distance": lambda m, F, i: F.pairwise_distance(i, i.detach() * 2),
    "pairwise_distance p=1 keepdim": lambda m, F, i: F.pairwise_distance(i, i.detach(), p=1, keepdim=True),
    "pairwise_distance 1-d": lambda m, F, i: F.pairwise_distance(i[0], i[1]),
    "cdist": lambda m, F, i: m.cdist(i, i.detach() * 2),
    "cdist batched p=1": lambda m, F, i: m.cdist(i[None], i[None].detach(), p=1),
    "cdist p=0": lambda m, F, i: m.cdist(i, i.detach(), p=0),
    "pdist": lambda m, F, i: F.pdist(i), "pdist p=3": lambda m, F, i: F.pdist(i, p=3),
    "masked_select": lambda m, F, i: i.masked_select(i > 0.5),
    "masked_select broadcast mask": lambda m, F, i: m.masked_select(i, m.tensor([True, False, True, True])),
}


@pytest.mark.parametrize("op", sorted(_DIST))
def test_distance_and_masked_select_node_names_as_torch(op):
    got = {}
    for m in (torch, ember):
        i = m.tensor([[0.1, 0.9, 0.4, 0.6], [0.7, 0.2, 0.8, 0.3], [0.5, 0.55, 0.05, 0.95]], requires_grad=True)
        y = _DIST[op](m, m.nn.functional, i)
        y.sum().backward()
        got[m] = y.grad_fn.name(), tuple(y.shape), [round(v, 4) for v in i.grad.flatten().tolist()]
    assert got[ember] == got[torch]


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
def test_weight_norm_node_name_as_torch(dim):
    got = {}
    for m in (torch, ember):
        v = m.arange(1.0, 25.0).reshape(2, 3, 4).requires_grad_()
        g = _weight_norm_module(m).norm_except_dim(v.detach(), 2, dim).requires_grad_()
        y = m._weight_norm(v, g, dim)
        y.sum().backward()
        got[m] = y.grad_fn.name(), [round(x, 4) for x in g.grad.flatten().tolist()], round(v.grad.sum().item(), 4)
    assert got[ember] == got[torch]


def _weight_norm_module(m):
    import importlib

    return importlib.import_module(m.__name__ + ".nn.utils.weight_norm")


def test_importing_a_submodule_keeps_the_function_of_its_name_under_compat(tmp_path):
    # under ``python -m ember.compat`` the import system set the submodule over the package's function of the same
    # name (torch.nn.utils.weight_norm became the module: "'module' object is not callable")
    import os
    import subprocess
    import sys
    import textwrap

    from conftest import ROOT

    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from torch.nn.utils.weight_norm import norm_except_dim
        from torch.nn.utils.spectral_norm import SpectralNorm
        import torch
        print(type(torch.nn.utils.weight_norm).__name__, type(torch.nn.utils.spectral_norm).__name__)
        m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
        print(sorted(n for n, _ in m.named_parameters()))
    """))
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    outs = [subprocess.run([sys.executable, *runner, str(script)], capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=120) for runner in ((), ("-m", "ember.compat"))]
    assert outs[0].returncode == 0, outs[0].stderr
    assert outs[1].returncode == 0, outs[1].stderr
    assert outs[1].stdout == outs[0].stdout


_CHAINS = {
    "three": lambda m, i: [i, i.T, i], "row vector first": lambda m, i: [i[0], i.T, i], "two": lambda m, i: [i, i.T],
    "four": lambda m, i: [i, i.T, i, i.T], "vectors": lambda m, i: [i[0], i[0]],
    "vector both ends": lambda m, i: [i[0], i.T, i[0, :2]], "column vector last": lambda m, i: [i.T, i[0]],
    "mismatch at the end": lambda m, i: [i, i.T, i[0]], "mismatch first": lambda m, i: [i, i],
    "mismatch middle": lambda m, i: [i, i.T, m.ones(3, 3)], "one tensor": lambda m, i: [i],
    "3-d last": lambda m, i: [i, m.ones(2, 2, 2)], "3-d first": lambda m, i: [m.ones(2, 2, 2), i],
    "3-d middle": lambda m, i: [i, m.ones(4, 2, 2), i],
}


@pytest.mark.parametrize("chain", sorted(_CHAINS))
def test_multi_dot_node_name_and_errors_as_torch(chain):
    got = {}
    for m in (torch, ember):
        i = m.tensor([[0.1, 0.9, 0.4, 0.6], [0.7, 0.2, 0.8, 0.3]], requires_grad=True)
        try:
            y = m.linalg.multi_dot(_CHAINS[chain](m, i))
        except RuntimeError as e:
            got[m] = str(e)
            continue
        y.sum().backward()
        got[m] = y.grad_fn.name(), tuple(y.shape), [round(v, 4) for v in i.grad.flatten().tolist()]
    assert got[ember] == got[torch]
