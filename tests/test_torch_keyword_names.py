"""PyTorch's keyword names for a function's leading parameters (``torch.gather(input=x, dim=1, index=i)``,
``torch.add(input=a, other=b)``, ``torch.mm(input=a, mat2=b)``), which ember's functions name otherwise."""

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from oracle import assert_close

import ember
import ember.fft
import ember.linalg
import ember.nn.functional as EF
import ember.special

NAMESPACES = [("", torch, ember), ("nn.functional.", TF, EF), ("linalg.", torch.linalg, ember.linalg),
              ("special.", torch.special, ember.special), ("fft.", torch.fft, ember.fft)]
NOT_IN_PYTHON = {"tensor", "tensors", "out"}  # overloads Python's argument parser does not offer by these names
SCHEMA_PREFIX = {"": "aten::", "nn.functional.": "aten::", "linalg.": "aten::linalg_", "special.": "aten::special_",
                 "fft.": "aten::fft_"}


def _torch_names(prefix, name, fn):
    """PyTorch's overloads of ``fn`` whose first argument is a tensor, each as (its positional parameters' names,
    all its names); the Python argument parser calls ``self`` ``input``."""
    try:
        params = inspect.signature(fn).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in params):  # PyTorch's Python dispatchers (unique): not told
            return []
    except (TypeError, ValueError):
        overloads = []
        for schema in torch._C._jit_get_schemas_for_operator(SCHEMA_PREFIX[prefix] + name):
            args = schema.arguments
            if args and str(args[0].type) == "Tensor" and schema.overload_name not in NOT_IN_PYTHON \
                    and not schema.overload_name.endswith("_out"):
                names = ["input" if a.name == "self" else a.name for a in args]
                overloads.append(([n for n, a in zip(names, args) if not a.kwarg_only], set(names)))
        return overloads
    return [([p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD], {p.name for p in params})]


def _pairs():
    for prefix, tm, em in NAMESPACES:
        for name in sorted(dir(em)):
            fn, tfn = getattr(em, name, None), getattr(tm, name, None)
            if name.startswith("_") or not callable(fn) or isinstance(fn, type) or not callable(tfn):
                continue
            try:
                inspect.signature(fn)
            except (TypeError, ValueError):
                continue
            overloads = _torch_names(prefix, name, tfn)
            if overloads:
                yield prefix + name, fn, overloads


PAIRS = list(_pairs())


def test_leading_parameters_take_pytorchs_keyword_names():
    # Every name PyTorch accepts for a function's first two parameters, ember's function accepts too.
    missing = []
    for qualname, fn, overloads in PAIRS:
        accepted = set(inspect.signature(fn).parameters)
        for names, _ in overloads:
            missing += [f"{qualname}({n}=)" for n in names[:2] if n not in accepted]
    assert not missing, sorted(set(missing))


def test_the_names_added_are_pytorchs():
    # The names ember adds are ones PyTorch accepts (no alias of ember's own making).
    wrong = []
    for qualname, fn, overloads in PAIRS:
        own = set(inspect.signature(inspect.unwrap(fn)).parameters) | {"axis", "keepdims", "out"}
        pytorch = set().union(*(names for _, names in overloads))
        wrong += [f"{qualname}({n}=)" for n in inspect.signature(fn).parameters if n not in own | pytorch]
    assert not wrong, wrong


X = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], dtype=np.float32)
S = np.array([[2.0, 0.5], [0.5, 1.0]], dtype=np.float32)
IDX = np.array([[0, 2], [1, 0]])


@pytest.mark.parametrize("call", [
    lambda m, x, s, i: m.gather(input=x, dim=1, index=i),
    lambda m, x, s, i: m.add(input=x, other=x, alpha=2),
    lambda m, x, s, i: m.mm(input=x.t(), mat2=x),
    lambda m, x, s, i: m.matmul(input=x, other=x.t()),
    lambda m, x, s, i: m.pow(input=x, exponent=2),
    lambda m, x, s, i: m.exp(input=x),
    lambda m, x, s, i: m.zeros_like(input=x),
    lambda m, x, s, i: m.sum(input=x, dim=1),
    lambda m, x, s, i: m.swapaxes(input=x, axis0=0, axis1=1),
    lambda m, x, s, i: m.max(input=x, other=-x),
    lambda m, x, s, i: m.split(tensor=x, split_size_or_sections=1)[1],
    lambda m, x, s, i: m.nn.functional.one_hot(input=i.flatten(), num_classes=3),
    lambda m, x, s, i: m.linalg.cholesky(input=s),
    lambda m, x, s, i: m.linalg.vector_norm(input=x, ord=3),
    lambda m, x, s, i: m.special.logit(input=x.sigmoid()),
    lambda m, x, s, i: m.arange(end=5),
    lambda m, x, s, i: m.arange(end=2.5, dtype=m.float64),
    lambda m, x, s, i: m.arange(start=1, end=10, step=3),
])
def test_calls_with_pytorchs_keyword_names(call):
    want = call(torch, torch.tensor(X), torch.tensor(S), torch.tensor(IDX))
    got = call(ember, ember.tensor(X), ember.tensor(S), ember.tensor(IDX))
    assert_close(got, want)


def test_arange_without_end_is_a_type_error():
    for m in (torch, ember):
        with pytest.raises(TypeError, match="end"):
            m.arange()


ARANGE_FORMS = ["5", "end=5", "0, end=5", "start=1, end=5", "1, 5, step=2", "start=1, end=5, step=2", "end=5.5",
                 "start=0., end=1., step=0.25", "5, 1, -1", "1, 5, 2, dtype=m.float64", "start=2, end=5, dtype=m.float32",
                 "m.tensor(5)", "0, m.tensor(3.5)", "True", "5, out=m.empty(5, dtype=m.float64)",
                 "1, 4, out=m.empty(0, dtype=m.int32)",
                 # PyTorch's errors: its overloads are (end), (start, end), (start, end, step)
                 "start=5", "5, step=2", "step=2, end=5", "5, start=1", "1, 5, end=3", "1, 2, 3, 4", "None",
                 "5, None", "end=None", "float('inf')", "float('nan')", "0, 5, 0", "5, 1", "5, dtype=m.bool",
                 "0, 5, 1, m.int32"]


@pytest.mark.parametrize("form", ARANGE_FORMS)
def test_arange_forms_as_torch(form):
    def call(m):
        try:
            return eval(f"m.arange({form})")
        except Exception as e:  # noqa: BLE001 - the type is compared
            return e

    want, got = call(torch), call(ember)
    if isinstance(want, Exception):
        base = next(b for b in type(want).__mro__ if b.__module__ == "builtins")
        assert isinstance(got, base), (want, got)
    else:
        assert not isinstance(got, Exception), got
        assert got.tolist() == want.tolist() and str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]


def test_a_parameter_given_twice_is_a_type_error():
    with pytest.raises(TypeError):
        torch.exp(torch.tensor(X), input=torch.tensor(X))
    with pytest.raises(TypeError):
        ember.exp(ember.tensor(X), input=ember.tensor(X))
    with pytest.raises(TypeError, match="got both 'x' and its PyTorch name 'input'"):
        ember.gather(x=ember.tensor(X), input=ember.tensor(X), dim=1, index=ember.tensor(IDX))


def _method_names(name):
    overloads = []
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + name):
        args = schema.arguments
        if args and args[0].name == "self" and str(args[0].type) == "Tensor" \
                and schema.overload_name not in NOT_IN_PYTHON and not schema.overload_name.endswith("_out"):
            overloads.append(([a.name for a in args if not a.kwarg_only], {a.name for a in args}))
    return overloads


def test_methods_take_pytorchs_keyword_names():
    missing, wrong = [], []
    for name in sorted(dir(ember.Tensor)):
        fn = getattr(ember.Tensor, name, None)  # (None: a name dir() lists that ember lacks, as PyTorch's)
        if name.startswith("_") or not callable(fn) or not hasattr(torch.Tensor, name):
            continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):  # Tensor.to: read by ember itself
            continue
        accepted, overloads = set(params), _method_names(name)
        missing += [f"Tensor.{name}({names[1]}=)" for names, _ in overloads
                    if len(names) > 1 and names[1] not in accepted]
        if overloads:
            pytorch = set().union(*(names for _, names in overloads))
            own = set(inspect.signature(inspect.unwrap(fn)).parameters) | {"axis", "keepdims"}
            wrong += [f"Tensor.{name}({n}=)" for n in accepted - own - pytorch]
    assert not wrong, wrong
    # PyTorch's names that ember's methods' signatures do not list: from= (a Python keyword, which no signature can
    # list; random_(**{"from": 2, "to": 5}) works, test_from_and_to_by_keyword), split(split_sizes=) (PyTorch's
    # Python-level split does not take it either)
    assert sorted(set(missing)) == ["Tensor.random_(from=)", "Tensor.split(split_sizes=)", "Tensor.uniform_(from=)"]


@pytest.mark.parametrize("call", [
    lambda x: x.mul(other=x), lambda x: x.sub(other=x, alpha=3), lambda x: x.mm(mat2=x.t()),
    lambda x: x.pow(exponent=3), lambda x: x.swapaxes(axis0=0, axis1=1), lambda x: x.maximum(other=x * 2),
    lambda x: x.tensor_split(sections=2, dim=1)[0], lambda x: x.hsplit(indices=[1])[1], lambda x: x.clone().addcmul_(tensor1=x, tensor2=x),
    lambda x: x.clone().copy_(other=x * 2), lambda x: x.clone().pow_(exponent=2),
])
def test_method_calls_with_pytorchs_keyword_names(call):
    assert_close(call(ember.tensor(X)), call(torch.tensor(X)))


def test_from_and_to_by_keyword():
    for lib in (torch, ember):
        lib.manual_seed(0)
        x = lib.zeros(2000)
        x.random_(**{"from": 3, "to": 7})
        assert set(x.tolist()) == {3.0, 4.0, 5.0, 6.0}, lib
        x.random_(to=2)
        assert set(x.tolist()) == {0.0, 1.0}, lib
        x.uniform_(**{"from": 2.0, "to": 2.5})
        assert 2.0 <= x.min().item() < 2.01 and 2.49 < x.max().item() < 2.5, lib


def test_matrix_rank_tol_is_an_absolute_tolerance():
    a = np.array([[1.0, 2.0], [2.0, 4.0001]], dtype=np.float32)
    for call in (lambda m, t: m.linalg.matrix_rank(t, tol=1e-3), lambda m, t: m.linalg.matrix_rank(t, tol=1e-5),
                 lambda m, t: m.linalg.matrix_rank(t, 1e-3), lambda m, t: m.linalg.matrix_rank(t, 1e-3, True),
                 lambda m, t: m.linalg.matrix_rank(t, tol=0.0)):
        assert call(ember, ember.tensor(a)).item() == call(torch, torch.tensor(a)).item()
    with pytest.raises(TypeError):
        ember.linalg.matrix_rank(ember.tensor(a), tol=1e-3, atol=1.0)


def test_resize_view_is_contiguous_pin_memory_by_keyword():
    for lib in (torch, ember):
        x = lib.arange(6.0)
        assert tuple(x.resize_(size=(2, 3)).shape) == (2, 3)
        assert x.view(dtype=lib.int32).tolist() == torch.arange(6.0).view(torch.int32).view(2, 3).tolist()
        nchw = lib.ones(2, 3, 4, 5)
        nhwc = nchw.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        assert [t.is_contiguous(memory_format=f) for t in (nchw, nhwc, nhwc.permute(0, 2, 3, 1))
                for f in (lib.contiguous_format, lib.channels_last, lib.channels_last_3d)] == \
            [True, False, False, False, True, False, True, False, False], lib
        volume = lib.ones(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3)
        assert volume.is_contiguous(memory_format=lib.channels_last_3d) and not volume.is_contiguous()
        assert lib.ones(2, 1, 4, 5).is_contiguous(memory_format=lib.channels_last)  # size-1 channels: both orders
        assert not lib.ones(0, 3, 4, 5).is_contiguous(memory_format=lib.channels_last)
        with pytest.warns(DeprecationWarning) as warned, \
                pytest.raises(RuntimeError, match="CPU device type not an accelerator"):
            lib.ones(2).pin_memory(device="cpu")
        assert "The argument 'device' of Tensor.pin_memory() is deprecated" in str(warned[0].message)


def test_wrapped_functions_pickle_by_reference_as_pytorchs():
    import pickle

    for lib in (torch, ember):
        for fn in (lib.sum, lib.gather, lib.exp, lib.Tensor.mul, lib.linalg.cholesky, lib.nn.functional.one_hot):
            assert pickle.loads(pickle.dumps(fn)) is fn


def test_functions_taking_torch_names_run_under_vmap():
    """vmap's rules bind a call to the function's signature and pass every default back by name: the other names the
    wrapper lists (``axis=None``) must not collide with the parameter given positionally."""
    x = np.random.default_rng(0).standard_normal((3, 2, 4, 6)).astype(np.float32)
    for name, call in [("cosine_similarity", lambda m, a: m.nn.functional.cosine_similarity(a, a * 2 + 1, dim=1)),
                       ("pairwise_distance", lambda m, a: m.nn.functional.pairwise_distance(a, a * 2)),
                       ("top-level cosine_similarity", lambda m, a: m.cosine_similarity(a, a - 1, dim=1))]:
        want = torch.vmap(lambda a, call=call: call(torch, a))(torch.from_numpy(x)).numpy()
        got = ember.vmap(lambda a, call=call: call(ember, a))(ember.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
