"""torch.fx against PyTorch: the same modules traced by both give the same nodes (op, name, target, arguments)
and the same generated code; the GraphModules compute what the modules compute; graph editing, Interpreter,
Transformer, wrap, concrete_args and PyTorch's errors for untraceable code."""

import math
import operator

import numpy as np
import pytest
import torch

import ember
import ember.fx
from ember.fx.passes.shape_prop import ShapeProp

FRAMEWORKS = {"ember": ember, "torch": torch}


def _target(node):
    t = node.target
    return t if isinstance(t, str) else t.__name__


def _arg(a):
    """A node argument with nodes as their names (the structure of tuples, lists and dicts kept)."""
    if isinstance(a, (tuple, list)):
        return type(a)(_arg(x) for x in a)
    if isinstance(a, dict):
        return {k: _arg(v) for k, v in a.items()}
    if isinstance(a, slice):
        return ("slice", _arg(a.start), _arg(a.stop), _arg(a.step))
    if type(a).__name__ == "Node":
        return ("%", a.name)
    if type(a).__name__ == "dtype":
        return str(a).replace("ember.", "torch.")
    return a


def _is_functional(node):
    if node.op != "call_function":
        return False
    if isinstance(node, ember.fx.Node):
        return (ember.fx.graph.torch_name(node.target) or "").startswith("torch.nn.functional.")
    return getattr(node.target, "__module__", "") == "torch.nn.functional"


def nodes(gm):
    """(op, name, target, args, kwargs) per node. torch.nn.functional's Python functions record the arguments
    their __torch_function__ handler passes on (often every default as a keyword); ember records the call as
    written: for those, only the nodes read are compared."""
    return [(n.op, n.name, _target(n), [m.name for m in n.all_input_nodes]) if _is_functional(n)
            else (n.op, n.name, _target(n), _arg(n.args), _arg(n.kwargs)) for n in gm.graph.nodes]


# ---------------------------------------------------------------- the modules, written once for both frameworks
def mlp(t):
    nn = t.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))
    return MLP(), [(5, 6)]


def cnn(t):
    nn, F = t.nn, t.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.features = nn.Sequential(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            x = F.relu(self.bn(self.conv(x)))
            x = self.features(x)
            x = F.adaptive_avg_pool2d(x, 1)
            return self.head(t.flatten(x, 1))
    return CNN(), [(2, 3, 8, 8)]


def transformer_block(t):
    nn, F = t.nn, t.nn.functional

    class Block(nn.Module):
        def __init__(self, d=8, heads=2):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 16), nn.GELU(), nn.Linear(16, d))
            self.register_buffer("mask", t.tril(t.ones(5, 5)).bool())
            self.register_buffer("bias", t.zeros(d))

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            q = q.view(b, n, self.heads, d // self.heads).transpose(1, 2)
            k = k.view(b, n, self.heads, d // self.heads).transpose(1, 2)
            v = v.view(b, n, self.heads, d // self.heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
            att = att.masked_fill(~self.mask, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, n, d)
            x = x + self.proj(y) + self.bias.mul(0.5).add(x)
            return x + self.mlp(self.ln2(x))
    return Block(), [(2, 5, 8)]


def tensor_methods(t):
    nn = t.nn

    class Methods(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(t.ones(4))
            self.scale = t.full((4,), 0.5)  # a plain tensor attribute: a get_attr of its name

        def forward(self, x, y):
            h = x.view(x.size(0), -1)[:, :4] * self.w + self.scale
            h = t.cat([h, y], dim=1).permute(1, 0).contiguous()
            h = operator.getitem(h, (slice(None, 3), 0)) + h[..., 1][:3]
            s = t.stack([h.sum(), h.mean(), h.abs().max()])
            return -s, h.shape[0] * 2, {"m": t.where(h > 0, h, t.zeros_like(h)).pow(2)}
    return Methods(), [(3, 2, 2), (3, 2)]


def functions(t):
    def f(x, y):
        z = t.relu(x) + t.sigmoid(y) * 2 - 1
        z = t.matmul(z, z.t()).clamp(min=0.0)
        return t.nn.functional.softmax(z / 3, dim=-1), t.sum(z, dim=0, keepdim=True)
    return f, [(4, 4), (4, 4)]


CASES = {"mlp": mlp, "cnn": cnn, "transformer_block": transformer_block, "tensor_methods": tensor_methods,
         "functions": functions}


def _traced(name):
    out = {}
    for key, t in FRAMEWORKS.items():
        t.manual_seed(0)
        root, shapes = CASES[name](t)
        out[key] = (root, t.fx.symbolic_trace(root), shapes)
    return out


def _inputs(shapes, t, seed=0):
    rng = np.random.default_rng(seed)
    return [t.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]


def _flat(out):
    if isinstance(out, dict):
        return [x for v in out.values() for x in _flat(v)]
    if isinstance(out, (tuple, list)):
        return [x for v in out for x in _flat(v)]
    return [out.detach().numpy() if hasattr(out, "detach") else out]


@pytest.mark.parametrize("name", list(CASES))
def test_nodes_match_pytorch(name):
    traced = _traced(name)
    assert nodes(traced["ember"][1]) == nodes(traced["torch"][1])


@pytest.mark.parametrize("name", ["mlp", "tensor_methods"])
def test_code_and_graph_text_match_pytorch(name):
    traced = _traced(name)
    (_, e, _), (_, t, _) = traced["ember"], traced["torch"]
    assert e.code == t.code
    assert str(e.graph) == str(t.graph)
    assert type(e).__name__ == type(t).__name__
    assert e.print_readable(print_output=False).replace(" ", "") == \
        t.print_readable(print_output=False).replace(" ", "").replace("#Nostacktracefoundforfollowingnodes\n", "")


@pytest.mark.parametrize("name", list(CASES))
def test_graph_module_computes_what_the_module_computes(name):
    traced = _traced(name)
    e_root, e_gm, shapes = traced["ember"]
    t_root, t_gm, _ = traced["torch"]
    if isinstance(e_root, ember.nn.Module):
        e_root.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_root.state_dict().items()})
        e_gm.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_gm.state_dict().items()})
        assert list(e_gm.state_dict()) == list(t_gm.state_dict())
    e_in, t_in = _inputs(shapes, ember), _inputs(shapes, torch)
    expected = _flat(t_gm(*t_in))
    for got in (_flat(e_gm(*e_in)), _flat(e_root(*e_in))):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradients_flow_through_the_graph_module():
    traced = _traced("mlp")
    (_, e_gm, shapes), (_, t_gm, _) = traced["ember"], traced["torch"]
    e_gm.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_gm.state_dict().items()})
    (x,), (tx,) = _inputs(shapes, ember), _inputs(shapes, torch)
    e_gm(x).square().sum().backward()
    t_gm(tx).square().sum().backward()
    for (name, p), (_, tp) in zip(e_gm.named_parameters(), t_gm.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_parameters_are_shared_with_the_root():
    root, gm, _ = _traced("mlp")["ember"]
    assert gm.fc1.weight is root.fc1.weight and gm.fc1 is root.fc1


# ---------------------------------------------------------------- control flow, len, concrete_args
@pytest.mark.parametrize("t", [ember, torch], ids=["ember", "torch"])
def test_control_flow_raises_trace_error(t):
    class C(t.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(t.fx.proxy.TraceError, match="symbolically traced variables cannot be used as inputs to "
                                                    "control flow"):
        t.fx.symbolic_trace(C())
    with pytest.raises(t.fx.proxy.TraceError, match="Proxy object cannot be iterated"):
        t.fx.symbolic_trace(lambda x: [a for a in x])
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing by default"):
        t.fx.symbolic_trace(lambda x: len(x))
    assert issubclass(t.fx.proxy.TraceError, ValueError)


def test_concrete_args_specialise_like_pytorch():
    def f(x, flag, scale=None):
        if flag:
            x = x * 2
        if scale is None:
            return x
        return x * scale

    for t in (ember, torch):
        gm = t.fx.symbolic_trace(f, concrete_args={"flag": True, "scale": None})
        assert [n.op for n in gm.graph.nodes] == ["placeholder", "placeholder", "call_function", "call_function",
                                                  "placeholder", "call_function", "call_function", "output"]
        assert gm(t.ones(2), True, None).tolist() == [2.0, 2.0]
        with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
            gm(t.ones(2), False, None)
    e = ember.fx.symbolic_trace(f, concrete_args={"flag": True, "scale": None})
    t_ = torch.fx.symbolic_trace(f, concrete_args={"flag": True, "scale": None})
    assert nodes(e) == nodes(t_)


def test_concrete_args_placeholder_ph():
    def f(x, y):
        return x + y

    gm = ember.fx.symbolic_trace(f, concrete_args={"y": ember.fx.PH})
    assert [n.name for n in gm.graph.nodes] == ["x", "y_1", "add", "output"]
    assert gm(ember.ones(1), ember.ones(1)).item() == 2.0


# ---------------------------------------------------------------- wrap and custom tracers
def _my_scale(x, k):
    return x * k if k > 0 else x


ember.fx.wrap("_my_scale")


def test_wrap_records_the_function_as_one_node():
    def f(x):
        return _my_scale(x, 3) + 1

    gm = ember.fx.symbolic_trace(f)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[0].target is _my_scale and calls[0].args[1] == 3
    assert gm.code.startswith('\ntorch.fx._symbolic_trace.wrap("') and "_my_scale(x, 3)" in gm.code
    assert gm(ember.ones(2)).tolist() == [4.0, 4.0]
    with pytest.raises(NotImplementedError, match="wrap must be called at the top level of a module"):
        ember.fx.wrap("len")


def test_custom_tracer_leaf_modules():
    class Inner(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(2, 2)

        def forward(self, x):
            return ember.relu(self.lin(x))

    class Outer(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) * 2

    class LeafInner(ember.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Inner) or super().is_leaf_module(m, qualname)

    class NoLeaves(ember.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False

    outer = Outer()
    graph = LeafInner().trace(outer)
    assert [(n.op, n.target if isinstance(n.target, str) else n.target.__name__) for n in graph.nodes] == [
        ("placeholder", "x"), ("call_module", "inner"), ("call_function", "mul"), ("output", "output")]
    graph = NoLeaves().trace(outer)
    assert [n.name for n in graph.nodes] == ["x", "inner_lin_weight", "inner_lin_bias", "linear", "relu", "mul",
                                             "output"]
    gm = ember.fx.GraphModule(outer, graph)
    x = ember.randn(3, 2)
    np.testing.assert_allclose(gm(x).detach().numpy(), outer(x).detach().numpy(), rtol=1e-6)


def test_tracing_leaves_ember_untouched():
    relu, call, getattr_ = ember.relu, ember.nn.Module.__call__, ember.nn.Module.__getattr__
    with pytest.raises(ember.fx.proxy.TraceError):
        ember.fx.symbolic_trace(lambda x: ember.relu(x) if x else x)
    assert ember.relu is relu and ember.nn.functional.relu.__name__ == "relu"
    assert ember.nn.Module.__call__ is call and ember.nn.Module.__getattr__ is getattr_
    assert ember.relu(ember.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


# ---------------------------------------------------------------- the Graph API
def test_build_and_edit_a_graph_by_hand():
    for t in (ember, torch):
        g = t.fx.Graph()
        x = g.placeholder("x")
        r = g.call_function(t.relu, (x,))
        n = g.call_method("neg", (r,))
        g.output(n)
        with g.inserting_after(r):
            s = g.call_function(t.sigmoid, (r,))
        n.replace_input_with(r, s)
        assert [node.name for node in g.nodes] == ["x", "relu", "sigmoid", "neg", "output"]
        assert list(r.users) == [s] and s.all_input_nodes == [r]
        with g.inserting_before(n):
            extra = g.call_function(operator.add, (s, 1))
        assert extra.next is n and extra.prev is s
        g.erase_node(extra)
        unused = g.call_function(t.exp, (x,))
        with pytest.raises(RuntimeError, match="Tried to erase Node x but it still had 2 users"):
            g.erase_node(x)
        assert g.eliminate_dead_code() and unused not in list(g.nodes)
        g.lint()
        gm = t.fx.GraphModule(t.nn.Module(), g)
        assert gm(t.tensor([-1.0, 1.0])).tolist() == pytest.approx([-0.5, -1 / (1 + math.exp(-1))])
        proxy = t.fx.Proxy(x)
        assert isinstance(proxy * 2, t.fx.Proxy) and isinstance(proxy.tracer, t.fx.proxy.GraphAppendingTracer)


def test_recompile_after_rewrite_and_replace_all_uses():
    gm = ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is ember.relu:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(ember.nn.functional.gelu, (node.args[0],))
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.recompile()
    assert "torch.nn.functional.gelu(x)" in gm.code
    x = ember.tensor([-1.0, 0.5])
    np.testing.assert_allclose(gm(x).detach().numpy(), (ember.nn.functional.gelu(x) + 1).detach().numpy())


def test_interpreter_and_transformer():
    root, gm, shapes = _traced("mlp")["ember"]
    (x,) = _inputs(shapes, ember)
    np.testing.assert_allclose(ember.fx.Interpreter(gm).run(x).detach().numpy(), gm(x).detach().numpy())

    class NegSigmoid(ember.fx.Interpreter):
        def call_module(self, target, args, kwargs):
            out = super().call_module(target, args, kwargs)
            return ember.sigmoid(out) if target == "act" else out

    expected = root.fc2(ember.sigmoid(ember.relu(root.fc1(x))))
    np.testing.assert_allclose(NegSigmoid(gm).run(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6)

    class ReluToTanh(ember.fx.Transformer):
        def call_module(self, target, args, kwargs):
            if target == "act":
                return self.tracer.create_proxy("call_function", ember.tanh, args, kwargs)
            return super().call_module(target, args, kwargs)

    new = ReluToTanh(gm).transform()
    assert [n.name for n in new.graph.nodes] == ["x", "fc1", "tanh", "fc2", "output"]
    np.testing.assert_allclose(new(x).detach().numpy(), root.fc2(ember.tanh(root.fc1(x))).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        ember.fx.Interpreter(gm).run()


def test_shape_prop_matches_pytorch():
    metas = {}
    for key, (_, gm, shapes) in _traced("cnn").items():
        t = FRAMEWORKS[key]
        t.fx.passes.shape_prop.ShapeProp(gm).propagate(*_inputs(shapes, t))
        # (strides are not compared: ember's convolutions return tensors in their own memory order)
        metas[key] = [(n.name, tuple(n.meta["tensor_meta"].shape), str(n.meta["tensor_meta"].dtype).split(".")[-1],
                       n.meta["tensor_meta"].requires_grad, n.meta["type"].__name__) for n in gm.graph.nodes
                      if "tensor_meta" in n.meta]
    assert metas["ember"] == metas["torch"] and len(metas["ember"]) == 11
    assert ShapeProp.__module__ == "ember.fx.passes.shape_prop"


def test_deepcopy_graph_module_is_independent():
    import copy

    root, gm, shapes = _traced("mlp")["ember"]
    clone = copy.deepcopy(gm)
    assert clone.fc1.weight is not gm.fc1.weight and clone.code == gm.code
    (x,) = _inputs(shapes, ember)
    np.testing.assert_allclose(clone(x).detach().numpy(), gm(x).detach().numpy())
    next(iter(clone.graph.nodes)).name = "renamed"
    assert next(iter(gm.graph.nodes)).name == "x"


def test_tracer_warning_is_a_warning():
    assert issubclass(ember.jit.TracerWarning, Warning)
    assert issubclass(torch.jit.TracerWarning, Warning)


def test_replace_pattern_matches_pytorch():
    def model_fn(t):
        class M(t.nn.Module):
            def forward(self, x, w):
                a = t.add(x, w).relu()
                b = t.add(a, w).relu()
                c = t.add(x, 1).relu() * 2  # a pattern input matches a constant too
                d = t.sub(x, w).relu()  # no match
                return b + c + d

        def pattern(x, w):
            return t.add(x, w).relu()

        def replacement(x, w):
            return t.sigmoid(t.mul(x, w))
        return M(), pattern, replacement

    results = {}
    for key, t in FRAMEWORKS.items():
        m, pattern, replacement = model_fn(t)
        gm = t.fx.symbolic_trace(m)
        matches = t.fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
        x, w = _inputs([(3,), (3,)], t)
        results[key] = (len(matches), [(n.op, n.name, _target(n)) for n in gm.graph.nodes],
                        gm(x, w).detach().numpy())
    assert results["ember"][:2] == results["torch"][:2] and results["ember"][0] == 3
    np.testing.assert_allclose(results["ember"][2], results["torch"][2], rtol=1e-6)


def varargs_model(t):
    class M(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = t.nn.ModuleList([t.nn.Linear(3, 3) for _ in range(2)])
            self.attn = t.nn.MultiheadAttention(3, 1, batch_first=True)

        def forward(self, x, *rest, scale=2.0, **kw):
            for layer in self.layers:
                x = layer(x)
            a, _ = self.attn(x, x, x, need_weights=False)
            z = t.zeros_like(x, dtype=t.float32) + x.to(t.float64).float()
            return a * scale + z + x.new_ones(3) + float("inf") * 0 + t.tensor(1.0)

    def f(*args):
        return args[0] + args[1]
    return M(), f


def test_code_matches_pytorch_varargs_dtypes_constants():
    """ModuleList children, keyword arguments to a submodule, tuple unpacking, *args/**kwargs placeholders,
    keyword-only defaults, dtypes, inf/nan and tensor constants: the generated code is PyTorch's."""
    codes = {}
    for key, t in FRAMEWORKS.items():
        m, f = varargs_model(t)
        gm, g = t.fx.symbolic_trace(m), t.fx.symbolic_trace(f)
        assert g(t.ones(1), t.ones(1)).tolist() == [2.0]
        codes[key] = (gm.code, g.code)
    assert codes["ember"] == codes["torch"]


def test_is_fx_tracing():
    seen = []

    def f(x):
        seen.append(ember.fx._symbolic_trace.is_fx_tracing())
        return x + 1

    ember.fx.symbolic_trace(f)
    f(ember.ones(1))
    assert seen == [True, False]


def _log_value(x):
    return x


ember.fx.has_side_effect(_log_value)
ember.fx.wrap("_log_value")


def test_has_side_effect_keeps_unused_calls():
    def f(x):
        _log_value(x)
        ember.relu(x)
        return x + 1

    gm = ember.fx.symbolic_trace(f)
    assert gm.graph.eliminate_dead_code()
    assert [n.name for n in gm.graph.nodes] == ["x", "_log_value", "add", "output"]


def test_print_tabular(capsys):
    ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1).graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[3].split() == ["call_function", "relu", "torch.relu", "(x,)", "{}"]
    assert lines[4].split() == ["call_function", "add", "operator.add", "(relu,", "1)", "{}"]


def test_add_and_delete_submodules_like_pytorch():
    results = {}
    for key, (_, gm, _) in _traced("cnn").items():
        t = FRAMEWORKS[key]
        assert gm.add_submodule("extra.deep.lin", t.nn.Linear(2, 2)) and gm.add_submodule("extra2.lin", t.nn.ReLU())
        assert gm.delete_submodule("extra2.lin") and not gm.delete_submodule("nothing.here")
        before = sorted(name for name, _ in gm.named_modules())
        gm.delete_all_unused_submodules()
        results[key] = before, sorted(name for name, _ in gm.named_modules())
    assert results["ember"] == results["torch"]


def test_concrete_bool_code_matches_pytorch():
    def f(x, flag):
        return x * 2 if flag else x

    codes = [t.fx.symbolic_trace(f, concrete_args={"flag": True}).code for t in (ember, torch)]
    assert codes[0] == codes[1] and "torch._assert(eq, 'flag has been specialized" in codes[0]
    with pytest.raises(AssertionError, match="boom"):
        ember._assert(ember.tensor(False), "boom")
    ember._assert(ember.tensor(True), "boom")


def test_a_proxy_reaching_a_plain_ember_function_is_explained(tmp_path, monkeypatch):
    (tmp_path / "fx_helper_mod.py").write_text("from ember import relu\n\n\ndef act(x):\n    return relu(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fx_helper_mod

    with pytest.raises(Exception) as info:
        ember.fx.symbolic_trace(lambda x: fx_helper_mod.act(x) + 1)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    if hasattr(info.value, "add_note"):
        assert "a Proxy reached ember." in notes and "torch.fx.wrap" in notes
    assert ember.relu(ember.tensor([-1.0])).tolist() == [0.0]  # everything put back


def test_pickle_graph_module_round_trip():
    import pickle

    root, gm, shapes = _traced("cnn")["ember"]
    ember.fx.passes.shape_prop.ShapeProp(gm).propagate(*_inputs(shapes, ember))
    clone = pickle.loads(pickle.dumps(gm))
    assert type(clone).__name__ == "CNN" and clone.code == gm.code
    assert [n.name for n in clone.graph.nodes] == [n.name for n in gm.graph.nodes]
    assert clone.graph.owning_module is clone
    assert "tensor_meta" in next(iter(clone.graph.nodes)).meta
    gm.eval(), clone.eval()
    (x,) = _inputs(shapes, ember)
    np.testing.assert_allclose(clone(x).detach().numpy(), gm(x).detach().numpy(), rtol=1e-6)


# ---------------------------------------------------------------- Proxies built by hand, outside a trace
def _graph_from_hand_built_proxies(t):
    """A graph built with Proxies over placeholders: public functions, a Proxy's method and a layer's forward
    called on them append nodes, as PyTorch's __torch_function__ does."""
    g = t.fx.Graph()
    tracer = t.fx.proxy.GraphAppendingTracer(g)
    x, y = (t.fx.Proxy(g.placeholder(n), tracer) for n in ("x", "y"))
    a = t.cat([x, y])
    b = t.sigmoid(t.tanh(a))
    c = b.mul(3.0)
    d = t.nn.LeakyReLU(0.2)(c - 0.5)  # a layer's forward, inlined
    g.output(d.node)
    return t.fx.GraphModule(t.nn.Module(), g)


def test_hand_built_proxies_record_functions_methods_and_layers_like_pytorch():
    gms = {t: _graph_from_hand_built_proxies(t) for t in (ember, torch)}
    assert nodes(gms[ember]) == nodes(gms[torch])
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((3, 3)).astype(np.float32) for _ in range(2)]
    got = gms[ember](*map(ember.tensor, xs)).numpy()
    np.testing.assert_allclose(got, gms[torch](*map(torch.tensor, xs)).numpy(), rtol=1e-6, atol=1e-7)


def _concatenating(t):
    class M(t.nn.Module):
        def forward(self, x, y):
            return t.cat([x, y])

    return M


def test_a_traced_module_called_on_a_proxy_is_inlined_into_the_graph():
    results = {}
    for t in (ember, torch):
        traced = t.fx.symbolic_trace(_concatenating(t)())
        act = t.fx.symbolic_trace(t.nn.LeakyReLU())
        out = next(n for n in traced.graph.nodes if n.op == "output")
        with traced.graph.inserting_before(out):
            out.args = (act(t.fx.Proxy(out.all_input_nodes[0])).node,)
        traced.recompile()
        results[t] = traced
    assert nodes(results[ember]) == nodes(results[torch])
    x = np.array([[-2.0, 1.0]], np.float32)
    assert results[ember](ember.tensor(x), ember.tensor(-x)).tolist() == \
        results[torch](torch.tensor(x), torch.tensor(-x)).tolist()


def test_stand_ins_leave_when_the_last_hand_built_proxy_is_freed():
    import gc

    relu, mul = ember.relu, ember.Tensor.mul
    p = ember.fx.Proxy(ember.fx.Graph().placeholder("x"))
    assert ember.relu is not relu and ember.Tensor.mul is not mul
    q = ember.relu(p)
    del p, q
    gc.collect()
    assert ember.relu is relu and ember.Tensor.mul is mul
    assert ember.relu(ember.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
