"""The functions of torch.linalg, torch.fft and torch.special are PyTorch's bindings of ATen ops and carry the op's
name (``torch.linalg.inv.__name__ == "linalg_inv"``), which a traced graph names its nodes after: ember's, the same,
on the function itself (no wrapper), and still pickled by reference."""

import inspect
import pickle

import pytest
import torch
import torch.fft
import torch.linalg
import torch.special

import ember
import ember.fx


def _functions(namespace: str):
    module = getattr(torch, namespace)
    for name in sorted(dir(module)):
        fn = getattr(module, name)
        if not name.startswith("_") and callable(fn) and not isinstance(fn, type) and not inspect.ismodule(fn) \
                and hasattr(getattr(ember, namespace), name):
            yield namespace, name


FUNCTIONS = [f for ns in ("linalg", "fft", "special") for f in _functions(ns)]


def test_every_namespace_has_functions():
    assert {ns for ns, _ in FUNCTIONS} == {"linalg", "fft", "special"} and len(FUNCTIONS) > 80


@pytest.mark.parametrize("namespace, name", FUNCTIONS, ids=[f"{ns}.{n}" for ns, n in FUNCTIONS])
def test_name_as_pytorchs(namespace, name):
    fn = getattr(getattr(ember, namespace), name)
    assert fn.__name__ == getattr(getattr(torch, namespace), name).__name__
    assert pickle.loads(pickle.dumps(fn)) is fn


def test_traced_node_names_as_pytorchs():
    def f(lib):
        return lambda x: lib.linalg.inv(x) + lib.fft.fft(x).real + lib.special.expit(x) + lib.linalg.det(x) \
            + lib.special.erf(x) + lib.fft.ifftshift(x) + lib.sigmoid(x)

    names = [[n.name for n in lib.fx.symbolic_trace(f(lib)).graph.nodes] for lib in (torch, ember)]
    assert names[1] == names[0]
    gm = ember.fx.symbolic_trace(f(ember))
    x = ember.eye(3) * 2
    assert ember.allclose(gm(x), f(ember)(x))
