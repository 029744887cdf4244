"""Memory formats lay tensors out as PyTorch's: ``contiguous``/``clone``/``to``/``float``/``empty``/``empty_like``
with ``memory_format=channels_last`` (``_3d``) give PyTorch's strides and ``is_contiguous(memory_format=...)``,
the same values; ops that keep an input's layout keep it (``empty_like``, elementwise results, ``clone``)."""

import pytest
import torch
from oracle import assert_close, outcomes

import ember


def _fmt(m, name):
    return getattr(m, name)


CASES = {
    "contiguous": lambda m, x, f: x.contiguous(memory_format=f),
    "clone": lambda m, x, f: x.clone(memory_format=f),
    "to": lambda m, x, f: x.to(memory_format=f),
    "to_dtype": lambda m, x, f: x.to(m.float64, memory_format=f),
    "double": lambda m, x, f: x.double(memory_format=f),
    "float": lambda m, x, f: x.float(memory_format=f),
    "empty_like": lambda m, x, f: m.empty_like(x, memory_format=f).fill_(1),
    "kept_by_empty_like": lambda m, x, f: m.empty_like(x.contiguous(memory_format=f)).fill_(1),
    "kept_by_add": lambda m, x, f: x.contiguous(memory_format=f) + 1,
    "kept_by_clone": lambda m, x, f: x.contiguous(memory_format=f).clone(),
    "back_to_contiguous": lambda m, x, f: x.contiguous(memory_format=f).contiguous(),
}
SHAPES = {"channels_last": [(2, 3, 4, 5), (1, 2, 3, 4), (2, 1, 2, 2), (2, 3, 1, 1)],
          "channels_last_3d": [(2, 3, 2, 2, 4)]}


@pytest.mark.parametrize("fmt,shape", [(f, s) for f, shapes in SHAPES.items() for s in shapes])
@pytest.mark.parametrize("case", sorted(CASES))
def test_layout_as_pytorch(case, fmt, shape):
    def run(m):
        n = 1
        for s in shape:
            n *= s
        x = m.arange(float(n)).reshape(shape) * 1
        r = CASES[case](m, x, _fmt(m, fmt))
        return (r.detach(), tuple(r.stride()), r.is_contiguous(), r.is_contiguous(memory_format=_fmt(m, fmt)))

    (got, _), (want, _) = outcomes(run)
    assert not isinstance(want, Exception), want
    assert got[1:] == want[1:]
    if case not in ("empty_like", "kept_by_empty_like"):
        assert_close(got[0], want[0])


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_empty_as_pytorch(fmt):
    shape = (2, 3, 4, 5) if fmt == "channels_last" else (2, 3, 4, 5, 2)
    for m in (ember, torch):
        assert tuple(m.empty(shape, memory_format=_fmt(m, fmt)).stride()) == \
            tuple(torch.empty(shape, memory_format=_fmt(torch, fmt)).stride())


@pytest.mark.parametrize("call", ["contiguous", "clone", "to", "empty_like"])
@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4)), ("channels_last_3d", (2, 3, 4, 5))])
def test_wrong_rank_is_pytorchs_error(call, fmt, shape):
    def run(m):
        x = m.ones(shape)
        f = _fmt(m, fmt)
        return {"contiguous": lambda: x.contiguous(memory_format=f), "clone": lambda: x.clone(memory_format=f),
                "to": lambda: x.to(memory_format=f), "empty_like": lambda: m.empty_like(x, memory_format=f)}[call]()

    (got, _), (want, _) = outcomes(run)
    assert isinstance(want, RuntimeError) and type(got) is type(want) and str(got) == str(want)


def test_same_tensor_when_already_laid_out():
    for m in (ember, torch):
        x = m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
        assert x.contiguous(memory_format=m.channels_last) is x
        assert x.to(memory_format=m.channels_last) is x


def test_gradient_and_node_names():
    for m in (ember, torch):
        x = m.arange(24.0).reshape(1, 2, 3, 4).requires_grad_()
        c = x.contiguous(memory_format=m.channels_last)
        t = x.to(memory_format=m.channels_last)
        assert type(c.grad_fn).__name__ == "CloneBackward0"
        assert type(t.grad_fn).__name__ == "ToCopyBackward0"
        (c * m.arange(24.0).reshape(1, 2, 3, 4)).sum().backward()
        assert x.grad.tolist() == m.arange(24.0).reshape(1, 2, 3, 4).tolist()


@pytest.mark.parametrize("make", ["transposed", "expanded", "stepped", "permuted_step"])
def test_clone_keeps_the_layout_of_a_strided_tensor(make):
    def run(m):
        x = {"transposed": lambda: m.arange(6.0).view(2, 3).t(),
             "expanded": lambda: m.arange(3.0).expand(2, 3),
             "stepped": lambda: m.arange(6.0).view(2, 3).t()[::2],
             "permuted_step": lambda: m.arange(24.0).view(2, 3, 4).permute(2, 0, 1)[:, :, ::2]}[make]()
        c = x.clone()
        return c, tuple(c.stride())

    (got, _), (want, _) = outcomes(run)
    assert got[1] == want[1]
    assert_close(got[0], want[0])
