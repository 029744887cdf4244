"""index_put_ (and ``x[index_tensors] = value``), index_add and index_copy refuse a source of another dtype than the
tensor written, with PyTorch's errors (ember cast the values and wrote them); basic indices and numbers still
convert, as PyTorch's copy_ does."""

import warnings

import pytest
import torch

import ember

WRITES = {
    "setitem": lambda m, y, v: y.__setitem__(m.tensor([1, 2]), v),
    "setitem_list": lambda m, y, v: y.__setitem__([1, 2], v),
    "setitem_mask": lambda m, y, v: y.__setitem__(m.tensor([False, True, True, False]), v),
    "setitem_mixed": lambda m, y, v: y.__setitem__((m.tensor([1, 2]), slice(1, None)), v[:, 1:]),
    "setitem_0d": lambda m, y, v: y.__setitem__(m.tensor([1, 2]), v[0, 0]),
    "setitem_bad_shape": lambda m, y, v: y.__setitem__(m.tensor([1, 2]), m.cat([v, v])),
    "index_put_": lambda m, y, v: y.index_put_((m.tensor([1, 2]),), v),
    "index_put_accumulate": lambda m, y, v: y.index_put_((m.tensor([1, 2]),), v, accumulate=True),
    "index_put": lambda m, y, v: y.index_put((m.tensor([1, 2]),), v),
    "index_put_expanded": lambda m, y, v: m.ones(1, 5).expand(4, 5).index_put_((m.tensor([1, 2]),), v),
    "index_add_": lambda m, y, v: y.index_add_(0, m.tensor([1, 2]), v),
    "index_add": lambda m, y, v: m.index_add(y, 0, m.tensor([1, 2]), v),
    "index_copy_": lambda m, y, v: y.index_copy_(0, m.tensor([1, 2]), v),
    "index_copy": lambda m, y, v: y.index_copy(0, m.tensor([1, 2]), v),
    # one element through a bool mask, the index's only tensor: PyTorch's index_put_ is masked_fill_ then, which
    # reads the value as a number (no dtype check)
    "setitem_mask_one": lambda m, y, v: y.__setitem__(m.tensor([False, True, True, False]), v[0, 0]),
    "setitem_mask_one_1d": lambda m, y, v: y.__setitem__(m.tensor([False, True, True, False]), v[0, :1]),
    "setitem_slice_mask_one": lambda m, y, v: y.__setitem__((slice(1, None), m.tensor([1, 0, 1, 0, 1]).bool()),
                                                            v[0, 0]),
    "setitem_select_mask_one": lambda m, y, v: y.__setitem__((1, m.tensor([1, 0, 1, 0, 1]).bool()), v[0, 0]),
    "setitem_mask_and_index_one": lambda m, y, v: y.__setitem__((m.tensor([0, 1, 1, 0]).bool(), m.tensor([1, 2])),
                                                                v[0, 0]),
    "setitem_mask_and_bool_one": lambda m, y, v: y.__setitem__((m.tensor([0, 1, 1, 0]).bool(), True), v[0, 0]),
    "index_put_mask_one": lambda m, y, v: y.index_put_((m.tensor([0, 1, 1, 0]).bool(),), v[0, 0]),
    "index_put_mask_one_accumulate": lambda m, y, v: y.index_put_((m.tensor([0, 1, 1, 0]).bool(),), v[0, 0],
                                                                  accumulate=True),
    "index_put_out_of_place_mask_one": lambda m, y, v: y.copy_(y.index_put((m.tensor([0, 1, 1, 0]).bool(),),
                                                                           v[0, :1])),
    "basic": lambda m, y, v: y.__setitem__(slice(1, 3), v),
    "basic_0d": lambda m, y, v: y.__setitem__((1, 2), v[0, 0]),
}


def _outcome(m, name, value_dtype, requires_grad):
    y = m.ones(4, 5)
    v = m.full((2, 5), 0.5, dtype=getattr(m, value_dtype), requires_grad=requires_grad)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's deprecation of index_put_ on expanded tensors)
            WRITES[name](m, y, v)
    except (RuntimeError, IndexError) as e:
        return type(e).__name__, str(e).split(":")[0] if "shape mismatch" in str(e) else str(e)
    return "ok", y.tolist()


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("value_dtype", ["float64", "int64", "float32"])
@pytest.mark.parametrize("name", list(WRITES))
def test_source_of_another_dtype(name, value_dtype, requires_grad):
    if requires_grad and value_dtype == "int64":
        pytest.skip("integer tensors take no gradient")
    if name == "index_put_expanded" and value_dtype == "float32" and requires_grad:
        pytest.skip("a recorded index_put_ into an expanded tensor: ember refuses its overlap, a separate matter")
    assert _outcome(ember, name, value_dtype, requires_grad) == _outcome(torch, name, value_dtype, requires_grad)


@pytest.mark.parametrize("case", [("int32", 2**40), ("float32", 1e300), ("int64", 2 + 1j), ("float64", 1 + 0j),
                                  ("bool", 2.5), ("float16", 1e10), ("int64", 2.7)])
def test_one_value_through_a_mask_is_converted_as_masked_fill_does(case):
    # (its number checked as PyTorch converts a fill value: one that does not fit is its RuntimeError)
    dtype, number = case

    def run(m):
        x = m.zeros(3, 2, dtype=getattr(m, dtype))
        try:
            x[m.tensor([True, False, True])] = m.tensor(number)
        except RuntimeError as e:
            return str(e)
        return x.tolist()

    assert run(ember) == run(torch)


def test_one_value_through_a_mask_keeps_its_gradient_in_its_dtype():
    res = []
    for m in (ember, torch):
        x = m.zeros(3, 4, requires_grad=True).clone()
        v = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        x[m.tensor([True, False, True])] = v
        (x * m.arange(12.0).reshape(3, 4)).sum().backward()
        res.append((x.tolist(), v.grad.item(), str(v.grad.dtype).split(".")[-1]))
    assert res[0] == res[1]
