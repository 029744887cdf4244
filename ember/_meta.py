"""The meta device's tensors: a shape and a dtype, no data (PyTorch's ``device="meta"``).

Programs use it to build a large model without memory, then give the parameters real storage and initialise
them: ``with torch.device("meta"): model = Net()``, then ``model.to_empty(device="cpu")`` and an init (or
``load_state_dict(..., assign=True)``). Here a meta tensor is a tensor whose array is a view, all strides 0, of
one shared placeholder element (``_PLACEHOLDER``): it takes no memory whatever its shape, in-place writes into it
(a layer's initialisation under ``device("meta")``) land in that element and mean nothing, and reading its values
(``tolist``, ``item``, ``numpy``, printing them, moving it to the CPU) is PyTorch's error.

A random fill of a meta tensor (``uniform_``, ``normal_``, the ``nn.init`` schemes, so a layer built under
``device("meta")``) and a random factory on the meta device (``randn``, ``rand_like``, ...) draw nothing, as
PyTorch's meta kernels: the random state afterwards is PyTorch's. A meta tensor's ``new_*`` and ``*_like`` tensors
are meta tensors unless given another device (the default device does not decide them), and ``Module.to("meta")``
moves a module there (as ``to_empty``, across devices: new parameters and buffers, as PyTorch's; the old ones
keep their data, and tied weights come apart).

An op on meta tensors returns meta tensors of PyTorch's shapes and dtypes (``meta_results``, where the autograd
graph runs each op, and in the ops outside it: the tests of values, ``any``/``all``, the index results of
``sort``/``topk``/``kthvalue``/..., ``histc``, ``searchsorted``, ``isin``); an op whose result's shape depends on
values (``nonzero`` and a boolean mask as an index, ``one_hot`` without ``num_classes``; ``unique``, ``bincount``,
``masked_select``, ``equal``: ``refuse_meta``) is PyTorch's error, as is an elementwise op or a concatenation mixing a
meta tensor with a CPU tensor that is not 0-d (``check_operand_devices``).

A meta tensor reports a new tensor's contiguous strides (``stride()``, ``is_contiguous()``), as PyTorch's do, and a
view of one (``t()``, ``permute``, ``expand``, a slice, ``diagonal``, ``unfold``, ``as_strided``, ``view``, ...) the
strides and storage offset PyTorch's view has: its array's strides are all 0, so the view ops record those
(``follow_view``, read back by ``meta_layout``), and ``reshape``/``view`` decide from them whether a view can
express the new shape (``view_strides``; ``reshape`` copies where not, ``view`` refuses).

``clone``, ``to``, ``contiguous(memory_format=...)``, ``empty_like`` & co. and factories with ``memory_format=``
report PyTorch's strides too (``_creation.meta_like``: an input's layout kept, or the format's).

An elementwise op's result is laid out from its inputs' layouts as PyTorch's TensorIterator lays it out
(``iterator_strides``: ``x.t() + 1`` is transposed too, a channels-last input gives a channels-last result).

Differences from PyTorch: another op that is no view gives a new tensor's contiguous strides. An op on meta
tensors still computes,
on the placeholder broadcast to its inputs' shapes, and only then drops its values (PyTorch computes only the
result's shape and dtype), so it takes the time and, while it runs, the memory of the op on real data; an op
written outside the graph's nodes may still return a CPU tensor of meaningless values.
"""

from __future__ import annotations

import weakref

import numpy as np

# one element of the widest dtype (complex128), which every meta array views in its own dtype
_PLACEHOLDER = np.zeros(16, np.uint8)
# whether a meta array was ever made: until then an op need not look for meta inputs (``meta_results``)
made = [False]


def meta_array(shape, dtype) -> np.ndarray:
    """A writable array of ``shape`` and ``dtype`` that takes no memory: every element is the placeholder."""
    made[0] = True
    dtype = np.dtype(dtype)
    element = _PLACEHOLDER[:dtype.itemsize].view(dtype).reshape(())
    return np.lib.stride_tricks.as_strided(element, tuple(shape), (0,) * len(shape), writeable=True)


def is_meta(array) -> bool:
    """Whether ``array`` is a meta tensor's (a view of the placeholder, as every view of one is): its chain of bases
    (NumPy's views, and the objects ``as_strided`` makes, which keep the array they view as ``base``) leads to the
    placeholder. A walk of two or three attributes (0.15-0.25 µs), where ``np.may_share_memory`` took 0.37."""
    if type(array) is not np.ndarray:
        return False
    base = array.base
    while base is not None:
        if base is _PLACEHOLDER:
            return True
        base = getattr(base, "base", None)
    return False


def any_meta(arrays) -> bool:
    """Whether any of ``arrays`` (arrays, numbers, Nones) is a meta tensor's array."""
    for a in arrays:
        if a.__class__ is np.ndarray and is_meta(a):
            return True
    return False


def contiguous_strides(shape) -> tuple:
    """The strides, in elements, PyTorch reports for a meta tensor of ``shape``: a new tensor's, row-major (a
    dimension of size 0 counted as 1). A meta array's own strides are all 0 (``meta_array``)."""
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


# a meta view's layout, {id(array): (strides, storage offset, weak reference to the array)}: its array's own strides
# are all 0 (``meta_array``), so the view ops record the strides and offset PyTorch's view has (``record_layout``)
_layouts: dict[int, tuple] = {}


def meta_layout(array) -> tuple[tuple, int]:
    """The strides and storage offset, in elements, PyTorch reports for meta ``array``: a view's as its op recorded
    them, otherwise a new tensor's (``contiguous_strides``, offset 0)."""
    got = _layouts.get(id(array))
    if got is not None and got[2]() is array:
        return got[0], got[1]
    return contiguous_strides(array.shape), 0


def record_layout(out, strides, offset: int) -> None:
    """Record that meta view ``out`` has ``strides`` and storage ``offset`` (in elements), as PyTorch's view."""
    key = id(out)
    _layouts[key] = (tuple(strides), offset, weakref.ref(out, lambda _, key=key: _layouts.pop(key, None)))


def follow_view(src, out, strides, offset: int = 0) -> None:
    """Where ``src`` is a meta tensor's array: record that its view ``out`` steps ``strides`` (in elements) from
    ``offset`` elements past ``src``'s start. For the view ops, which compute these from ``meta_layout(src)``."""
    if made[0] and is_meta(src) and is_meta(out):
        record_layout(out, strides, meta_layout(src)[1] + offset)


def view_strides(shape, strides, new_shape):
    """PyTorch's strides for a view of a tensor of ``shape`` and ``strides`` as ``new_shape`` (its computeStride:
    each run of dimensions laid out as one block splits or merges freely), or None where no strides can express it
    (``view`` refuses, ``reshape`` copies)."""
    shape, strides, new_shape = tuple(shape), tuple(strides), tuple(new_shape)
    if not shape:
        return (1,) * len(new_shape)
    numel = 1
    for n in shape:
        numel *= n
    if numel == 0:
        return strides if shape == new_shape else contiguous_strides(new_shape)
    out = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base:  # the end of a block
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None


def as_laid_out(array) -> np.ndarray:
    """Meta ``array`` as a view with the strides PyTorch reports (``meta_layout``), for what reads only its layout
    (its strides, never its elements: they lie beyond the placeholder)."""
    strides = tuple(s * array.itemsize for s in meta_layout(array)[0])
    return np.lib.stride_tricks.as_strided(array, strides=strides, writeable=False)


def check_operand_devices(*arrays) -> None:
    """PyTorch's error for an elementwise op mixing a meta tensor's ``arrays`` with a CPU tensor's: every operand
    on the first one's device, where a 0-d CPU tensor counts as a number (``meta + cpu_scalar`` is fine).
    PyTorch's matmul, in-place ops and copies accept the mix; those do not call this."""
    if not made[0] or not any_meta(arrays):  # (all on the CPU)
        return
    devices = ["meta" if is_meta(a) else "cpu" for a in arrays]
    operands = [d for a, d in zip(arrays, devices) if d == "meta" or a.ndim]
    for d in operands[1:]:
        if d != operands[0]:
            raise RuntimeError(f"Tensor on device {d} is not on the expected device {operands[0]}!")


def no_data_error() -> NotImplementedError:
    """PyTorch's error for reading a meta tensor's values (``.cpu()``, ``.tolist()``, ``to("cpu")``)."""
    return NotImplementedError("Cannot copy out of meta tensor; no data!")


def refuse_meta(op: str, *arrays) -> None:
    """PyTorch's NotImplementedError where any of ``arrays`` is a meta tensor's and the op ``aten::<op>`` has no meta
    kernel: one whose result's shape or value depends on values (``unique``, ``bincount``, ``masked_select``,
    ``equal``)."""
    if made[0] and any_meta(arrays):
        raise NotImplementedError(
            f"aten::{op}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel "
            "registered. You may have run into this message while using an operator with PT2 compilation APIs "
            "(torch.compile/torch.export); in order to use this operator with those APIs you'll need to add a fake "
            "impl. Please see the following for next steps:  "
            "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def nonzero_error() -> NotImplementedError:
    """PyTorch's error for ``nonzero`` of a meta tensor, and for what calls it (a meta boolean mask as an index)."""
    return NotImplementedError(
        "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
        "data-independent implementation does not exist. This implementation returns a fake value, assuming all "
        "elements of the tensor are non-zero. To enable this registration, please set "
        "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def meta_results(arrays, out, elementwise: bool = False):
    """An op's result ``out`` (an array, or a tuple of arrays and Nones) as meta arrays of the same shapes and
    dtypes where any of its input ``arrays`` is a meta tensor's: PyTorch's result on the meta device.
    ``elementwise``: the op is PyTorch's TensorIterator's (a pointwise op), whose result takes its inputs' layout
    (``iterator_strides``); any other's is a new tensor's."""
    if not made[0] or not any_meta(arrays):
        return out
    if isinstance(out, tuple):
        return tuple(None if o is None else meta_results(arrays, o, elementwise) for o in out)
    if is_meta(out):
        return out
    result = meta_array(np.shape(out), out.dtype)
    if elementwise and result.ndim > 1:
        strides = iterator_strides(arrays, result.shape)
        if strides is not None:
            record_layout(result, strides, 0)
    return result


def _element_strides(a) -> tuple:
    return meta_layout(a)[0] if is_meta(a) else tuple(s // a.itemsize for s in a.strides)


def _dense_in_order(shape, strides, order) -> bool:
    """Whether ``strides`` lay ``shape`` out densely, ``order`` (dimensions, fastest first) as PyTorch's
    contiguity tests read them: a dimension of size 1 may have any stride, and a tensor with no elements is
    contiguous whatever its strides."""
    if 0 in shape:
        return True
    step = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != step:
                return False
            step *= shape[d]
    return True


def iterator_strides(arrays, shape) -> tuple | None:
    """The strides (in elements) of the result of ``shape`` that PyTorch's TensorIterator allocates for an
    elementwise op on ``arrays`` (0-d ones and numbers order nothing, but rule the fast setups out), or None for a
    new tensor's contiguous ones: inputs all of the result's shape that are all contiguous, all channels-last, or
    all alike and dense give that layout; otherwise the dimensions are ordered by the inputs' strides, the first
    input whose strides tell two dimensions apart deciding (a broadcast dimension tells nothing), as its
    ``reorder_dimensions``."""
    ndim = len(shape)
    inputs = [a for a in arrays if a.__class__ is np.ndarray and a.ndim]
    if not inputs:
        return None
    rows = [_element_strides(a) for a in inputs]
    operands = len(arrays) - sum(a is None for a in arrays)  # (None: an absent optional input, clamp's max)
    if len(inputs) == operands and all(a.shape == shape for a in inputs):  # (TensorIterator's fast setups,
        # which a number or 0-d operand rules out: its shape is not the result's)
        backwards = range(ndim - 1, -1, -1)
        if all(_dense_in_order(shape, st, backwards) for st in rows):
            return None
        if ndim == 4:
            last = (1, 3, 2, 0)  # (channels_last: channels fastest, then width, height, batch)
            if all(_dense_in_order(shape, st, last) for st in rows):
                return _strides_in_order(shape, last)
        if all(st == rows[0] for st in rows) and _dense_in_order(shape, rows[0], sorted(
                range(ndim), key=lambda d: (rows[0][d], shape[d]))):
            return rows[0]
    strided = [[0] * (ndim - a.ndim) + [0 if n == 1 and shape[ndim - a.ndim + i] != 1 else s
                                        for i, (n, s) in enumerate(zip(a.shape, st))]
               for a, st in zip(inputs, rows)]

    perm = reorder_dimensions(shape, strided)
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    return _strides_in_order(shape, perm)


def reorder_dimensions(shape, operands) -> list:
    """PyTorch's ``TensorIteratorBase::reorder_dimensions``: the dimensions of ``shape``, fastest first, by an
    insertion sort in which each pair is compared by the first of ``operands`` (per-dimension strides in elements,
    0 where broadcast) whose strides for both are nonzero and differ (equal strides: the smaller size first); a pair
    no operand tells apart keeps its place and the sort looks further back. Elementwise results (here) and advanced
    indexing (``ops/index_layout.py``) allocate their output in this order."""

    def should_swap(d0: int, d1: int) -> int:
        for strides in operands:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))  # fastest first
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    return perm


def _strides_in_order(shape, order) -> tuple:
    """Dense strides laying ``shape`` out in ``order`` (dimensions, fastest first), as TensorIterator computes them
    (a dimension of size 0 makes the slower ones' 0)."""
    strides, step = [0] * len(shape), 1
    for d in order:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def iterator_layout(out, arrays):
    """``out``, a pointwise op's NumPy result on ``arrays`` (its operands, numbers among them), in the layout
    PyTorch's TensorIterator gives the op's result (``iterator_strides``): the values copied where NumPy's differs.
    NumPy's ufuncs keep one operand's layout as PyTorch does (``x.t().exp()`` and ``x.t() + 1`` are transposed
    in both), but where two operands' layouts disagree NumPy falls back to row-major and PyTorch follows the first
    operand that tells two dimensions apart: ``x.t() + y`` is transposed, a channels-last tensor plus a contiguous
    one channels-last, ``x.transpose(0, 1) * y[:, :, None]`` keeps ``x``'s order (on which a ``.view`` then
    fails, as PyTorch's). Operands with dimensions that are all row-major give NumPy's row-major result, as
    PyTorch's: that common case returns at once."""
    for a in arrays:  # (the common case first: every operand row-major, or 1-d, or a number)
        if a.__class__ is np.ndarray and a.ndim > 1 and not a.flags.c_contiguous:
            break
    else:
        # NumPy's row-major result, as PyTorch's; but a number (or 0-d) operand keeps TensorIterator off its fast
        # setup, so a size-1 dimension takes its stride from the operands' order: a channels-last (2, 1, 4, 5)
        # x (strides (20, 1, 5, 1), row-major to NumPy) gives x + 1 its strides, x.exp() row-major ones
        # (so does a result with no elements, whose dimensions after one of size 0 in that order take stride 0:
        # an empty (0, 1, 3) x + 0.3 has strides (3, 0, 1), where x.exp()'s, on the fast setup, are (3, 3, 1))
        if out.__class__ is np.ndarray and out.ndim > 1 and (1 in out.shape or not out.size) and len(arrays) > 1 \
                and not (made[0] and is_meta(out)):
            for a in arrays:  # (an operand with NumPy's strides for them, a keepdim result's: nothing to change)
                if a.__class__ is np.ndarray and a.ndim > 1 and (a.strides != out.strides or not out.size):
                    if out.size and _all_exactly_row_major(out, arrays):  # (never with a meta operand with
                        # dimensions: its strides are 0, no row-major step)
                        return out  # (x + pos of (1, T, C) and (T, C): what the rule below gives, without its work)
                    return size_one_strides(out, arrays)
        return out
    if out.__class__ is not np.ndarray or out.ndim < 2 \
            or made[0] and (is_meta(out) or any_meta(arrays)):
        return out  # (a meta result's layout is recorded instead: ``meta_results``)
    if sum(a.__class__ is np.ndarray and a.ndim > 0 for a in arrays) < 2:
        # one operand with dimensions: NumPy keeps its order, as PyTorch does, but for a dimension of size 1 it
        # picks a stride of its own (channels-last (1, 4, 5, 1): (1, 1, 4, 20) where PyTorch's is (20, 1, 4, 4))
        return size_one_strides(out, arrays) if 1 in out.shape else out
    return _relaid(out, arrays)


def _all_exactly_row_major(out, arrays) -> bool:
    """Whether ``out`` and every array among ``arrays`` have exactly the row-major strides of their own shape, those
    of their dimensions of size 1 included (NumPy's ``c_contiguous`` lets a dimension of size 1 have any stride).
    Then ``size_one_strides`` keeps ``out``: with such operands (a broadcast dimension's stride 0) no pair of the
    result's dimensions is ever swapped by ``reorder_dimensions``, since a faster dimension's stride is never above
    a slower one's and equal ones mean the faster has size 1 (never larger), so ``iterator_strides`` gives the
    row-major strides, ``out``'s own. For arrays with elements and outside meta tensors (whose strides are
    recorded apart)."""
    for a in (out, *arrays):
        if a.__class__ is np.ndarray:
            step = a.itemsize
            for n, stride in zip(a.shape[::-1], a.strides[::-1]):
                if stride != step:
                    return False
                step *= n
    return True


def size_one_strides(out, arrays):
    """``out`` with the strides ``iterator_strides`` gives it for ``arrays`` where those differ from its own only at
    dimensions of size 1, which no element is reached through: the same memory (no copy), the strides PyTorch
    reports. ``out`` as it is where they differ elsewhere (or it has no elements)."""
    strides = iterator_strides(arrays, out.shape)
    return strides_at_size_one(out, tuple(s * out.itemsize for s in (
        contiguous_strides(out.shape) if strides is None else strides)))


def strides_like(out, x):
    """``out`` (an array of ``x``'s shape) with ``x``'s strides, in elements, where they differ from its own only at
    dimensions of size 1 (a copy NumPy made of ``x``, which gives those strides of its own, where PyTorch's
    ``empty_like`` keeps all of a dense tensor's): ``strides_at_size_one``."""
    if out.ndim < 2 or 1 not in out.shape:
        return out
    return strides_at_size_one(out, tuple(s // x.itemsize * out.itemsize for s in x.strides))


def strides_at_size_one(out, strides: tuple):
    """``out`` with ``strides`` (in bytes) where they differ from its own only at dimensions of size 1: the same
    memory, a view; ``out`` itself otherwise. Where it has no elements, no memory is reached through any strides:
    it takes them all."""
    if out.strides == strides or len(strides) != out.ndim:
        return out
    if not out.size:
        return np.lib.stride_tricks.as_strided(out, out.shape, strides)
    for n, mine, theirs in zip(out.shape, out.strides, strides):
        if mine != theirs and n != 1:
            return out
    return np.lib.stride_tricks.as_strided(out, out.shape, strides)


def kept_layout(out, x):
    """``out``, a one-input pointwise op's result that its kernel computed row-major (on the flat array: ``erf``,
    ``gelu``, ``lgamma``), in the layout PyTorch gives it, the input ``x``'s order (``x.t().erf()`` is transposed,
    as ``exp``'s NumPy ufunc keeps it). A row-major ``x`` returns at once."""
    if x.__class__ is not np.ndarray or x.flags.c_contiguous or out.__class__ is not np.ndarray or out.ndim < 2 \
            or out.shape != x.shape or made[0] and (is_meta(x) or is_meta(out)):
        return out
    return _relaid(out, (x,))


def _relaid(out, arrays):
    """``out`` copied into the strides ``iterator_strides`` gives it for ``arrays``, unless it has them."""
    strides = iterator_strides(arrays, out.shape)
    itemsize = out.itemsize
    if strides is None:
        strides = contiguous_strides(out.shape)
    strides = tuple(s * itemsize for s in strides)
    if out.strides == strides:
        return out
    dense = np.lib.stride_tricks.as_strided(np.empty(out.size, out.dtype), out.shape, strides)
    dense[...] = out
    return dense
