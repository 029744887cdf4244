"""What a program reads of a node's saved tensors (``grad_fn._saved_<name>``), compared with PyTorch's: the
in-place activations' saved input (a clone of it as it was) and saved result (the result itself, the node its
grad_fn), RReLU's and the max/min reductions' saved names and values."""

import pytest
import torch

import ember


def _described(value, node):
    """A saved attribute as a comparable record: a tensor's values, dtype, shape, version, and its grad_fn's name
    (and whether that is the node itself); a number or tuple as it is."""
    if isinstance(value, (ember.Tensor, torch.Tensor)):
        fn = value.grad_fn
        return ("tensor", value.detach().double().flatten().tolist(), str(value.dtype).split(".")[-1],
                tuple(value.shape), value._version, None if fn is None else fn.name(), fn is node)
    return value


def _saved(m, make, dtype="float64"):
    x = m.tensor([[-2.0, 0.5, 3.0], [7.0, -1.0, 3.0]], dtype=getattr(m, dtype), requires_grad=True)
    y = x * 1
    out = make(m, y)
    node = out.grad_fn
    names = sorted(n for n in dir(node) if n.startswith("_saved_"))
    return node.name(), {n: _described(getattr(node, n), node) for n in names}


INPLACE_INPUT_SAVED = {
    "silu": lambda m, y: m.nn.functional.silu(y, inplace=True),
    "hardtanh": lambda m, y: m.nn.functional.hardtanh(y, -0.5, 2.0, inplace=True),
    "relu6": lambda m, y: m.nn.functional.relu6(y, inplace=True),
    "threshold": lambda m, y: m.nn.functional.threshold(y, 1.0, 5.0, inplace=True),
    "hardsigmoid": lambda m, y: m.nn.functional.hardsigmoid(y, inplace=True),
    "hardswish": lambda m, y: m.nn.functional.hardswish(y, inplace=True),
    "mish": lambda m, y: m.nn.functional.mish(y, inplace=True),
}


@pytest.mark.parametrize("name", sorted(INPLACE_INPUT_SAVED))
def test_an_inplace_activation_saves_its_input_as_it_was(name):
    """PyTorch's in-place form saves ``self.clone()`` before overwriting it: ``_saved_self`` holds the input's
    values (not the result written over them), at version 0, its grad_fn CloneBackward0."""
    e, t = _saved(ember, INPLACE_INPUT_SAVED[name]), _saved(torch, INPLACE_INPUT_SAVED[name])
    assert e == t
    assert t[1]["_saved_self"][5] == "CloneBackward0"


INPLACE_RESULT_SAVED = {
    "elu": lambda m, y: m.nn.functional.elu(y, inplace=True),
    "leaky_relu": lambda m, y: m.nn.functional.leaky_relu(y, 0.1, inplace=True),
    "celu": lambda m, y: m.nn.functional.celu(y, 0.5, inplace=True),
    "selu": lambda m, y: m.nn.functional.selu(y, inplace=True),
}


@pytest.mark.parametrize("name", sorted(INPLACE_RESULT_SAVED))
def test_an_inplace_activation_saves_its_result_as_an_output_of_its_node(name):
    """``_saved_result`` of an in-place form that saves its result (EluBackward1, LeakyReluBackward1, ...): the
    result, whose grad_fn is the node, at the version the in-place write left."""
    make = INPLACE_RESULT_SAVED[name]
    e, t = _saved(ember, make), _saved(torch, make)
    assert e[0] == t[0]
    assert e[1]["_saved_result"] == t[1]["_saved_result"]
    assert t[1]["_saved_result"][4:] == (1, t[0], True)


@pytest.mark.parametrize("name", sorted(INPLACE_INPUT_SAVED) + sorted(INPLACE_RESULT_SAVED))
def test_an_inplace_activation_gradients_and_errors_stay_pytorchs(name):
    """The in-place forms' gradients (twice where PyTorch's has a second order), and the error once their result
    is changed again before backward."""
    make = {**INPLACE_INPUT_SAVED, **INPLACE_RESULT_SAVED}[name]
    results = []
    for m in (ember, torch):
        x = m.tensor([[-2.0, 0.5, 3.0], [7.0, -1.0, -0.25]], dtype=m.float64, requires_grad=True)
        out = make(m, x * 1)
        (g,) = m.autograd.grad((out * out).sum(), x, create_graph=True)
        try:
            (gg,) = m.autograd.grad(g.sum(), x, allow_unused=True)
            gg = None if gg is None else gg.flatten().tolist()
        except RuntimeError:  # (PyTorch's hardsigmoid has no second order)
            gg = "none"
        out = make(m, x * 1)
        out.add_(1)
        try:
            out.sum().backward()
            error = None
        except RuntimeError as err:
            error = str(err).split(" Hint")[0]
        results.append((g.detach().flatten().tolist(), gg, error))
    (eg, egg, eerr), (tg, tgg, terr) = results
    assert eg == pytest.approx(tg, abs=1e-12)
    if tgg != "none":
        assert egg == pytest.approx(tgg, abs=1e-12)
    assert eerr == terr


RRELU = {
    "eval": lambda m, y: m.nn.functional.rrelu(y, 0.1, 0.3, training=False),
    "train": lambda m, y: m.nn.functional.rrelu(y, 0.1, 0.3, training=True),
    "eval_inplace": lambda m, y: m.nn.functional.rrelu(y, 0.1, 0.3, training=False, inplace=True),
    "train_inplace": lambda m, y: m.nn.functional.rrelu(y, training=True, inplace=True),
}


@pytest.mark.parametrize("mode", sorted(RRELU))
def test_rrelu_saved_names_and_values(mode):
    """RreluWithNoiseBackward0/1: the bounds and mode as numbers, the input (or, in place, the result), and the
    slopes drawn in training (``_saved_noise``: 1 above zero; in eval PyTorch's is an uninitialised buffer of the
    input's shape and dtype, compared by those only)."""
    torch.manual_seed(3)
    ember.manual_seed(3)
    (en, e), (tn, t) = _saved(ember, RRELU[mode], "float32"), _saved(torch, RRELU[mode], "float32")
    assert en == tn
    assert sorted(e) == sorted(t)
    if "eval" in mode:
        e["_saved_noise"], t["_saved_noise"] = e["_saved_noise"][2:], t["_saved_noise"][2:]
    for name in t:
        assert e[name] == (pytest.approx(t[name]) if isinstance(t[name], float) else t[name]), name


REDUCTIONS = {
    "max": lambda m, y: y.max(),
    "min": lambda m, y: y.min(),
    "max_dim": lambda m, y: y.max(1)[0],
    "min_dim_keepdim": lambda m, y: y.min(0, keepdim=True)[0],
    "max_of_0d": lambda m, y: y[0, 1].max(0)[0],
    "amax": lambda m, y: y.amax(1),
    "amin_all": lambda m, y: y.amin(),
    "amax_keepdim": lambda m, y: y.amax((0, 1), keepdim=True),
    "maximum": lambda m, y: m.maximum(y, y.flip(0)),
    "minimum": lambda m, y: m.minimum(y, y.flip(1)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_max_min_saved_names_and_values(name):
    """MaxBackward0/1, MinBackward0/1, AmaxBackward0, AminBackward0, Maximum/MinimumBackward0: PyTorch's
    ``_saved_<name>`` set, and each value (the result with the node as its grad_fn, the indices, the dims)."""
    e, t = _saved(ember, REDUCTIONS[name]), _saved(torch, REDUCTIONS[name])
    assert e == t


def test_max_saved_result_is_checked_and_freed_as_pytorchs():
    """max()'s ``_saved_result`` is readable until backward frees the node, then PyTorch's error."""
    messages = []
    for m in (ember, torch):
        x = m.tensor([1.0, 3.0, 2.0], requires_grad=True)
        y = x.max()
        y.grad_fn._saved_result  # noqa: B018 (read while saved)
        y.backward()
        with pytest.raises(RuntimeError) as info:
            y.grad_fn._saved_result  # noqa: B018
        messages.append(str(info.value).split(".")[0])
    assert messages[0] == messages[1]


PACKED = {
    "gelu": lambda m, y: m.nn.functional.gelu(y),
    "gelu_tanh": lambda m, y: m.nn.functional.gelu(y, approximate="tanh"),
    "silu": lambda m, y: m.nn.functional.silu(y),
    "softplus": lambda m, y: m.nn.functional.softplus(y),
    "leaky_relu": lambda m, y: m.nn.functional.leaky_relu(y),
    "hardtanh": lambda m, y: m.nn.functional.hardtanh(y),
    "mul": lambda m, y: y * y.flip(0),
    "exp": lambda m, y: y.exp(),
    "linear": lambda m, y: m.nn.functional.linear(y, y[:2]),
}


def _packed_and_grad(m, make, dtype):
    """What the pack hook saw (dtype, shape, whether it was the op's input tensor itself), one entry a call, the
    unpack hook's count, and the input's gradient through the hooks."""
    x = m.tensor([[-2.0, 0.5, 3.0], [0.75, -1.0, 0.25]], dtype=getattr(m, dtype), requires_grad=True)
    y = x * 1
    seen, unpacked = [], []

    def pack(t):
        seen.append((str(t.dtype).split(".")[-1], tuple(t.shape), t is y))
        return t

    def unpack(t):
        unpacked.append(1)
        return t

    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = make(m, y)
    (out.float() * out.float()).sum().backward()
    return seen, len(unpacked), x.grad.float().flatten().tolist()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(PACKED))
def test_pack_hook_sees_what_pytorchs_node_saves(name, dtype):
    """Saved-tensor hooks see what PyTorch's node saves: an activation's input alone (not also f', which ember
    makes again from it at backward), a saved input as the input tensor itself, in its own dtype (a half-precision
    one too, though forward computed from a float32 copy); the gradient through the hooks stays PyTorch's."""
    (e_seen, e_unpacked, e_grad), (t_seen, t_unpacked, t_grad) = (
        _packed_and_grad(m, PACKED[name], dtype) for m in (ember, torch))
    assert e_seen == t_seen
    assert e_unpacked == t_unpacked
    tol = 1e-6 if dtype == "float32" else 2e-2
    assert e_grad == pytest.approx(t_grad, abs=tol, rel=tol)


@pytest.mark.parametrize("name", ["silu_", "hardswish_", "elu_", "leaky_relu_", "celu_", "threshold_"])
def test_inplace_activation_gradient_under_saved_tensor_hooks(name):
    """An in-place activation under saved-tensor hooks: the input it packed is overwritten by its result, so the
    gradient is still made from the input as it was (not from the result): PyTorch's values."""
    op = name[:-1]
    args = {"threshold": (0.1, 2.0), "leaky_relu": (0.2,), "celu": (0.5,)}.get(op, ())
    grads = []
    for m in (ember, torch):
        x = m.tensor([[-2.0, 0.5, 3.0], [0.75, -1.0, 0.25]], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            out = getattr(m.nn.functional, op)(x * 1, *args, inplace=True)
        (out * out).sum().backward()
        grads.append(x.grad.flatten().tolist())
    assert grads[0] == pytest.approx(grads[1], abs=1e-12)


def test_saved_self_of_a_half_input_under_hooks_reads_in_its_dtype():
    """``_saved_self`` of an activation of a bfloat16 input under hooks: the packed input, bfloat16, as PyTorch's."""
    dtypes = []
    for m in (ember, torch):
        y = m.tensor([1.0, -2.0], dtype=m.bfloat16, requires_grad=True) * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            out = m.nn.functional.gelu(y)
        dtypes.append((str(out.grad_fn._saved_self.dtype).split(".")[-1], out.grad_fn._saved_self.tolist()))
    assert dtypes[0] == dtypes[1]
