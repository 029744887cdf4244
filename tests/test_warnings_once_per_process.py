"""The warnings PyTorch issues from its own code (``warnings.warn`` at stacklevel 1 in its module, or its C++ warning
raised in its own Python frame) are shown once per process by the ``default`` action, however many lines of the
program call: ember's (``warn_in``) come from a frame of its own too, not once per calling line. Each case calls from
two lines, three times, under ``simplefilter("default")``; ``always`` shows every call, as PyTorch's."""

import io
import os
import warnings

import pytest
import torch

import ember


class TorchDouble(torch.nn.Module):
    def forward(self, x):
        return x * 2


class EmberDouble(ember.nn.Module):
    def forward(self, x):
        return x * 2


def _model(lib):
    return (EmberDouble if lib is ember else TorchDouble)().eval()


def _scripted(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.jit.script(_model(lib))


def _save(lib, s):
    lib.jit.save(s, io.BytesIO())


def _load(lib, s):
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.jit.save(s, buffer)
    buffer.seek(0)
    lib.jit.load(buffer)


def _gradcheck(lib):
    try:
        lib.autograd.gradcheck(lambda t: t * 2, (lib.ones(2, requires_grad=True),), raise_exception=False)
    except Exception:  # noqa: BLE001, S110 - only the warning counts
        pass


class _Opaque:
    pass


def _fx(lib):
    lib.fx.symbolic_trace(lambda x, y: x, concrete_args={"y": _Opaque()})


def _list_output(lib):
    class M(lib.nn.Module):
        def forward(self, x):
            return [x]

    m = M()
    m.register_full_backward_hook(lambda *a: None)
    return m


def _always_called(lib):
    class M(lib.nn.Module):
        def forward(self, x):
            raise ValueError("forward")

    def hook(*a):
        raise KeyError("hook")

    m = M()
    m.register_forward_hook(hook, always_call=True)
    return m


def _raising(m, x):
    try:
        m(x)
    except ValueError:
        pass


def _sdp(lib):
    with lib.backends.cuda.sdp_kernel():
        pass


# name: (set-up(lib) -> state, call(lib, state)); each call below is written on two lines
CASES = {
    "jit.script": (lambda lib: None, lambda lib, s: lib.jit.script(_model(lib))),
    "jit.trace": (lambda lib: None, lambda lib, s: lib.jit.trace(lambda t: t * 2, lib.ones(2))),
    "jit.save": (_scripted, _save),
    "jit.load": (_scripted, _load),
    "jit.freeze": (_scripted, lambda lib, s: lib.jit.freeze(s)),
    "jit.optimize_for_inference": (_scripted, lambda lib, s: lib.jit.optimize_for_inference(s)),
    "set_float32_matmul_precision": (lambda lib: None, lambda lib, s: lib.set_float32_matmul_precision("bad")),
    "backends.cuda.sdp_kernel": (lambda lib: None, lambda lib, s: _sdp(lib)),
    "gradcheck of float32": (lambda lib: None, lambda lib, s: _gradcheck(lib)),
    "fx concrete argument": (lambda lib: None, lambda lib, s: _fx(lib)),
    "backward hook, list output": (_list_output, lambda lib, m: m(lib.ones(2))),
    "always-called hook raising": (_always_called, lambda lib, m: _raising(m, lib.ones(2))),
}


def _shown(lib, case, action):
    setup, call = CASES[case]
    state = setup(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(lib, state)  # (a first call's lazy imports that add filters reset the registries: PyTorch's do)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter(action)
        for _ in range(3):
            call(lib, state)  # one line
            call(lib, state)  # another
    # (the category and the message's start: PyTorch's C++ one has its own spacing and source location)
    return [(w.category, str(w.message)[:40]) for w in record], {w.filename for w in record}


@pytest.mark.parametrize("action", ["default", "always"])
@pytest.mark.parametrize("case", list(CASES))
def test_shown_as_often_as_pytorchs(case, action):
    if case == "jit.trace" and action == "always":
        pytest.skip("PyTorch's trace checks its trace by tracing again (check_trace): its warning twice a call")
    (got, files), (expected, _) = _shown(ember, case, action), _shown(torch, case, action)
    assert expected, "PyTorch gave no warning: the case tests nothing"
    assert got == expected
    assert all(f.startswith(os.path.dirname(ember.__file__)) for f in files)  # (ember's frame, as PyTorch's own)
