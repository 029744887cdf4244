"""Every public callable takes PyTorch's default for each argument the two share.

A default is the behaviour a program gets without asking: an optimizer's ``maximize``/``capturable``/``eps``, a
loss's ``ignore_index`` or ``reduction``, a norm's ``momentum``/``eps``, a sampler's ``seed`` or ``shuffle``. The
behavioural tests pass their options explicitly, so a wrong default would go unseen; this compares them all with
``torch``'s signatures (``inspect.signature`` follows a wrapper's ``__wrapped__`` to the function that holds them).
"""

import importlib
import inspect

import pytest
import torch

import ember

NAMESPACES = ["", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.parallel", "optim",
              "optim.lr_scheduler", "utils.data", "utils.data.distributed", "utils.checkpoint", "autograd",
              "autograd.functional", "func", "amp", "distributed", "serialization"]

# (namespace, name, argument): where ember's default differs on purpose (docs/api.md says how) or is the same
# value in another spelling
DIFFERENT = {
    # the same function, ember's own relu
    ("nn", "Transformer", "activation"), ("nn", "TransformerEncoderLayer", "activation"),
    ("nn", "TransformerDecoderLayer", "activation"),
    ("nn.init", "orthogonal_", "gain"),  # 1.0 where PyTorch writes 1
    ("utils.data", "random_split", "generator"),  # None: the default generator, PyTorch's object for it
    ("utils.checkpoint", "checkpoint", "context_fn"),  # None: no context, PyTorch's no-op function for it
    ("serialization", "save", "pickle_module"),  # ember's format does not pickle
    ("distributed", "init_process_group", "timeout"),  # PyTorch's None means its backend's default
    ("distributed", "all_reduce", "op"), ("distributed", "reduce", "op"),  # ReduceOp.SUM, ember's enum
    ("distributed", "all_reduce_coalesced", "op"),
    ("distributed", "reduce_scatter", "op"), ("distributed", "reduce_scatter_tensor", "op"),
    ("distributed", "reduce_scatter_single", "op"),
    ("", "compile", "backend"),  # ember compiles its own way: the name of PyTorch's backend
}


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return None


def _shared_defaults(namespace: str):
    ours = importlib.import_module("ember" + ("." + namespace if namespace else ""))
    theirs = importlib.import_module("torch" + ("." + namespace if namespace else ""))
    for name in dir(ours):
        fn, t_fn = getattr(ours, name), getattr(theirs, name, None)
        if name.startswith("_") or t_fn is None or not callable(fn) or inspect.ismodule(fn):
            continue
        mine, pytorch = _parameters(fn), _parameters(t_fn)
        if mine is None or pytorch is None:
            continue
        for arg, p in mine.items():
            if arg in pytorch and p.default is not p.empty and pytorch[arg].default is not p.empty:
                yield name, arg, p.default, pytorch[arg].default


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_defaults_are_pytorchs(namespace):
    compared, wrong = 0, []
    for name, arg, mine, pytorch in _shared_defaults(namespace):
        compared += 1
        if (namespace, name, arg) in DIFFERENT:
            continue
        # the type too: True is not 1, 0 is not 0.0 where PyTorch's arithmetic would differ
        if type(mine) is not type(pytorch) or mine != pytorch:
            wrong.append(f"{namespace or 'torch'}.{name}({arg}=...): ember {mine!r}, PyTorch {pytorch!r}")
    assert not wrong, "\n".join(wrong)
    assert compared, f"no shared defaults compared in {namespace!r}"


def test_exceptions_still_differ():
    # an entry of DIFFERENT that PyTorch and ember now agree on (or that no longer exists) is removed from it
    found = {(ns, name, arg): (a, b) for ns in NAMESPACES for name, arg, a, b in _shared_defaults(ns)}
    for key in DIFFERENT:
        assert key in found, key
        mine, pytorch = found[key]
        assert type(mine) is not type(pytorch) or mine != pytorch, key


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                                  "RMSprop", "ASGD", "Rprop"])
def test_optimizer_param_group_defaults_are_pytorchs(name):
    # the options a constructor stores (what step reads), not only its signature
    opt = getattr(ember.optim, name)([ember.zeros(2, requires_grad=True)])
    t_opt = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    ours = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    theirs = {k: v for k, v in t_opt.param_groups[0].items() if k != "params"}
    assert ours == theirs
    assert {k: type(v) for k, v in ours.items()} == {k: type(v) for k, v in theirs.items()}
