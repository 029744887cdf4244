"""Fused affine maps: ``linear`` (x @ W.T + b) and ``bilinear`` (x1^T A x2 + b) in one node each."""

from __future__ import annotations

import math
from functools import partial

from ..._autocast import lower_precision
from ..._backend import xp
from ..._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, not_implemented_for
from ..._inference import state as _inference_state
from ..._kernels.openblas import matmul as gemm
from ..._kernels.policy import policy
from ..._kernels.transpose import transposed_plus
from ..._parallel import get_num_threads, parallel_rows, side_by_side
from ..._tensor import Tensor
from ...autograd.graph import AccumulateGrad, Node, Unread, leaf_slot_to_fill, show_node_as, shown_as
from ...autograd.recorded import RecordedArray, formula_tensor
from ...autograd.saved_attributes import saved_property, saved_value
from ...ops.activation import col_sums
from ...ops.elementwise import conj_if_complex
from ...ops.linalg import column_major, mm_mat1_backward, mm_mat2_backward, strides_of
from ...ops.shape import reshape_owned


class Linear(Node):
    float32_compute = True
    multilinear = True
    bias_input = 2
    saved_for = ((1,), (0,))  # x for w's gradient, w for x's (an unread x still gives its shape)
    saved_transposed = (1,)  # PyTorch's GEMM saves weight.t()
    _folded = False  # an input of more than 2 dimensions that PyTorch's linear multiplies as its 2-D rows

    def _weight_transposed(self) -> Tensor | None:
        """The saved weight as PyTorch's GEMM saved it: ``weight.t()`` (its TBackward0 leads to the weight)."""
        from ...autograd.grad_mode import enable_grad

        w = saved_value(self, 1)
        if w is None:
            return None
        with enable_grad():
            return w.t()

    def _addmm_next_functions(self) -> tuple:
        """As PyTorch's addmm(bias, input, weight.t()): the bias's, the input's, then weight.t()'s TBackward0 (which
        leads to the weight's)."""
        x, w, b = Node.next_functions.fget(self)
        return b, x, self._through_transpose(w)

    def _through_transpose(self, weight_function: tuple) -> tuple:
        """The weight's next function as PyTorch's graph reaches it: through weight.t()'s TBackward0, made once
        (a graph walked twice meets the same node), from the weight itself (a leaf's, or the saved one);
        the weight's own where neither is at hand (a non-leaf weight whose saved tensor backward freed)."""
        made = self.__dict__.get("_weight_t_function")
        if made is not None:
            return made
        node = weight_function[0]
        weight = node.variable if node.__class__ is AccumulateGrad else None
        if weight is None and self.saved is not None:
            try:
                weight = saved_value(self, 1)
            except RuntimeError:  # (changed in place since: its error is backward's and _saved_mat2's to raise)
                return weight_function
        if weight is None or not weight.requires_grad:
            return weight_function
        from ...autograd.grad_mode import enable_grad

        with enable_grad():
            made = self.__dict__["_weight_t_function"] = (weight.t().grad_fn, 0)
        return made

    # PyTorch's saved tensors and next functions of a 2-D input's node: addmm(bias, input, weight.t()), mm without a
    # bias (its operands in ember's order already)
    attributes_shown = {
        "AddmmBackward0": {"_saved_mat1": saved_property(0, lambda self: saved_value(self, 0)),
                           "_saved_mat2": saved_property(1, _weight_transposed),
                           "_saved_alpha": 1, "_saved_beta": 1, "next_functions": property(_addmm_next_functions)},
        "MmBackward0": {"_saved_self": saved_property(0, lambda self: saved_value(self, 0)),
                        "_saved_mat2": saved_property(1, _weight_transposed),
                        "next_functions": property(lambda self: (Node.next_functions.fget(self)[0],
                                                                 self._through_transpose(
                                                                     Node.next_functions.fget(self)[1])))},
    }

    def forward(self, x, w, b):
        if self.needs_input_grad is not None:  # (a node that records nothing is dropped: no one reads its name)
            self._shown = _torch_node_name(x, b)
            show_node_as(self, self._shown)  # (its type too reads as PyTorch's: type(y.grad_fn).__name__)
        if b is not None and self.needs_input_grad is not None:  # PyTorch's order of the leaves' gradients:
            # addmm's bias, input, then weight.t()'s TBackward0 (run next, as the newest node); an input of other
            # than 2 dimensions goes through its view's node, made before that TBackward0: bias, weight, input
            self.send_order = (2, 0, 1) if x.ndim == 2 else (2, 1, 0)
        self._bias_over = None  # what a bias of 2 or more dimensions broadcasts against: "rows" or "output"
        if x.ndim > 2 and self.needs_input_grad is not None:  # PyTorch's 2-D product of the rows, viewed back
            self._folded = _contiguous(x) and (b is None or _bias_fused(x, b))
        # (_bias_column's size test first, inline: a small Linear pays no call for it)
        if b is not None and x.ndim >= 2 and x.size * w.shape[0] >= w.shape[1] << 16 and _bias_column(x, w, b):
            self.saved = (x, w)
            return _matmul_bias_column(_as_rows(x), w, b).reshape(*x.shape[:-1], w.shape[0])
        if x.ndim >= 2:  # one 2-D GEMM over all rows: NumPy's stacked matmul is several times slower
            rows = _as_rows(x) if x.ndim > 2 else x
            m, k = rows.shape
            # (_swapped's size test first, inline: a Linear of other sizes pays no call for it)
            if 2 <= m <= 64 and k >= 64 and m * w.shape[0] >= 1536 and _swapped(rows, w):
                out, added = _unswapped(gemm(w, rows.T), b)  # (C order: as the product's own layout)
                if added:  # (the bias is in: nothing left to add below)
                    b = None
            elif policy.linear_forward_halves and rows.dtype == _F32 and m >= 4 and _side_by_side_fits(rows, rows, w):
                out = _in_halves(rows, w)
            else:
                out = gemm(rows, w.T)
            if x.ndim > 2:
                out = out.reshape(*x.shape[:-1], w.shape[0])
        else:
            out = gemm(x, w.T)
        if b is not None:
            if b.ndim >= 2:  # added over the 2-D rows or the whole output, as PyTorch adds it
                self._bias_over = "rows" if x.ndim == 2 or _bias_fused(x, b) else "output"
                (_as_rows(out) if self._bias_over == "rows" else out)[...] += b
            elif out.ndim >= 2 and out.size >= policy.min_elementwise_elements:  # rows split among the threads
                parallel_rows(partial(_add_in_place, b=b), _as_rows(out))
            else:
                out += b
        self.saved = (x, w)
        return out

    def backward(self, g):
        x, w = self.saved
        if g.__class__ is RecordedArray and (x.ndim == 2 or self._folded) and self._bias_over is None:  # (create_graph)
            return _addmm_backward_recorded(g, x, w, self.needs_input_grad, self.input_shapes)
        nx, nw, nb = self.needs_input_grad
        if g.dtype.kind == "c":  # complex: the conjugate factors, as matmul's (g @ conj(W), g^T @ conj(x))
            x, w = conj_if_complex(x), conj_if_complex(w)
        g2 = _blas_operand(_as_rows(g))
        if nx and nw and policy.linear_grads_at_once and _side_by_side_fits(g2, x, w):
            x2 = _as_rows(x)
            gx, gw = side_by_side(partial(gemm, g2, w), partial(gemm, g2.T, x2, out=_weight_slot(self, g2, x2)),
                                  g2.size + x2.size + w.size, one_blas=True)
            return gx.reshape(x.shape), gw, _bias_grad(self, g, g2) if nb else None
        gx = None
        if nx:
            # One output feature (a critic's or a regressor's head): an outer product, the same products.
            # NumPy's matmul with inner dimension 1 takes a non-BLAS loop (100 us at 32 x 2048); a broadcast
            # multiply takes 19 us, and adding 0 gives a -0.0 product matmul's sum from +0.0: +0.0, as there.
            # (Recorded arrays, under create_graph, keep the matmul they record.)
            if w.shape[0] == 1 and type(g2) is xp.ndarray and type(w) is xp.ndarray:
                gx = g2 * w
                gx += 0.0
            else:
                gx = gemm(g2, w)
            gx = gx.reshape(x.shape)
        gw = None
        if nw:  # dW = g^T x over all rows
            x2 = _as_rows(x)
            # One row: an outer product, the same products. NumPy's matmul with inner dimension 1 takes
            # a non-BLAS loop (225 us at 256 x 784); dot sends it to BLAS's GEMM (33 us; a broadcast
            # multiply takes 55 us).
            gw = xp.dot(g2.reshape(-1, 1), x2) if g2.shape[0] == 1 else gemm(g2.T, x2, out=_weight_slot(self, g2, x2))
        return gx, gw, _bias_grad(self, g, g2) if nb else None

    def name(self) -> str:
        return self._shown


def _bias_grad(node: Linear, g, g2):
    """The bias's gradient: the output gradient's column sums, or (a bias of 2 or more dimensions) a gradient of the
    rows' or the output's shape that the engine sums down to the bias's shape."""
    return col_sums(g2) if node._bias_over is None else g2 if node._bias_over == "rows" else g


def _weight_slot(node: Linear, g2, x2):
    """The array the weight gradient's GEMM ``g2.T @ x2`` may write into, so that it becomes the weight's ``.grad``
    without a copy (``leaf_slot_to_fill``: the weight a leaf with no ``.grad`` yet, its gradient store's slot free),
    as PyTorch's AccumulateGrad takes the weight gradient's own tensor; None (a new array) otherwise, or where the
    slot is not a plain row-major array of the product's shape and dtype (the GEMM's bits: those of a new one)."""
    if type(g2) is not xp.ndarray or type(x2) is not xp.ndarray or g2.dtype != x2.dtype:
        return None
    slot = leaf_slot_to_fill(node, 1)
    shape = (g2.shape[1], x2.shape[1])
    if slot is None or slot.shape != shape or slot.dtype != g2.dtype or not slot.flags.c_contiguous:
        return None  # (a lent slot left unused is filled by a copy, as if never lent)
    return slot


def _side_by_side_fits(g2, x, w) -> bool:
    """Whether two of a Linear's GEMMs may run at once (``_parallel.side_by_side``), its input gradient ``g2 @ w``
    beside its weight gradient ``g2.T @ x`` (``policy.linear_grads_at_once``) or the forward's two halves of rows
    (``g2`` and ``x`` its rows; ``policy.linear_forward_halves``): plain float arrays of one dtype, two of ember's
    threads (at more, two GEMMs on two of them would leave the others idle where OpenBLAS threads each over all),
    two or more of OpenBLAS's, and GEMMs OpenBLAS would thread (over ``blas_one_thread_mnk``)."""
    if policy.blas_threads < 2 or policy.omp_gemm or get_num_threads() != 2:
        return False  # (under ``omp_gemm`` numba's threads split every such GEMM already)
    if type(g2) is not xp.ndarray or type(x) is not xp.ndarray or type(w) is not xp.ndarray:
        return False
    if g2.dtype != w.dtype or x.dtype != w.dtype or w.dtype not in (_F32, _F64):
        return False
    rows, (o, k) = g2.shape[0], w.shape
    # (both GEMMs have these three sizes; one row or one output feature take their outer products instead)
    return rows * o * k > policy.blas_one_thread_mnk and rows > 1 and o > 1


def _in_halves(rows, w):
    """``rows @ w.T`` as two GEMMs of half the rows each, at once on two threads with OpenBLAS held to one
    (``_parallel.side_by_side``): float32 rows, two or more in each half, whose output rows OpenBLAS's
    single-precision GEMM sums as the whole GEMM does, so the bits of one thread. (A one-row half is a matrix-vector
    product, and the double-precision GEMM sums a tail of rows in another order, so those stay one GEMM.) Measured at
    the sizes the shipped ``blas_one_thread_mnk`` lets through, each half over 4 M multiply-adds, C- and
    column-major operands alike; a threshold lowered to halves of about 1 M or less (the tests') reaches OpenBLAS's
    small-matrix kernels, whose halves may round otherwise."""
    out = xp.empty((rows.shape[0], w.shape[0]), rows.dtype)
    half = rows.shape[0] // 2
    wt = w.T
    side_by_side(partial(xp.matmul, rows[:half], wt, out=out[:half]),
                 partial(xp.matmul, rows[half:], wt, out=out[half:]), rows.size + w.size + out.size, one_blas=True)
    return out


def _addmm_backward_recorded(g, x, w, needs, shapes) -> tuple:
    """The gradients of a 2-D input's linear under create_graph, recorded as PyTorch's: its linear is
    ``addmm(b, x, w.t())`` (``mm`` without a bias; of a contiguous input's 2-D rows, viewed back, where
    ``_folded``), so x's and the weight's are mm's of the saved ``w.t()``
    (``mm_mat1_backward`` / ``mm_mat2_backward``), the weight's passed back through ``t()``'s TBackward0, and the
    bias's is the gradient summed to its shape as the engine's ``sum_to`` does (a sum keeping dims, then a view; the
    whole sum for a 0-d bias).
    An operand not kept (``saved_for``: the weight when only it needs a gradient) reads as laid out as a
    parameter is, contiguous."""
    gt, xt, wt = formula_tensor(g), formula_tensor(x), formula_tensor(w)
    folded = x.ndim > 2
    if folded:  # the 2-D rows of the input and the gradient (x contiguous: the views PyTorch's reshape makes)
        gt = gt.reshape(-1, w.shape[0])
        xt = xt.view(-1, w.shape[1])
    gx = gw = gb = None
    if needs[0]:
        x_strides = (x.shape[-1], 1) if x.__class__ is Unread or folded else strides_of(x)
        gx = mm_mat1_backward(gt, wt.t(), column_major(*x_strides, gt.shape[0]))
        if folded:
            gx = gx.reshape(x.shape)
    if needs[1]:
        w_strides = (w.shape[1], 1) if w.__class__ is Unread else strides_of(w)
        gw = mm_mat2_backward(gt, xt, column_major(w_strides[1], w_strides[0], w.shape[1])).t()
    if needs[2]:
        shape, sizes = shapes[2], gt.shape
        leading = len(sizes) - len(shape)
        dims = [*range(leading), *(i for i in range(leading, len(sizes)) if shape[i - leading] == 1 != sizes[i])]
        if not shape:  # (sum_to's whole sum for a 0-d bias)
            gb = gt.sum()
        else:
            gb = gt.sum(dims, keepdim=True) if dims else gt
            if leading:
                gb = gb.view(shape)
    return tuple(None if t is None else RecordedArray(t) for t in (gx, gw, gb))


def _torch_node_name(x, b) -> str:
    """The grad_fn PyTorch's ``linear`` ends in, which a printed output shows (``grad_fn=<AddmmBackward0>``): it
    computes a 2-D input as addmm (mm without a bias), other inputs as a matmul of a 2-D view viewed back, a
    bias added by addmm where ``_bias_fused``, else by a separate add."""
    if x.ndim == 2:
        return "AddmmBackward0" if b is not None else "MmBackward0"
    if b is None:
        return "SqueezeBackward4" if x.ndim == 1 else "UnsafeViewBackward0"
    return "ViewBackward0" if _bias_fused(x, b) else "AddBackward0"


def _bias_fused(x, b) -> bool:
    """Whether PyTorch's ``linear`` adds the bias inside an addmm over the 2-D rows of a contiguous input of other
    than 2 dimensions (the bias then broadcasts to (rows, out_features)), rather than adding it to the output after
    a matmul: a bias of one dimension, or of one left when its size-1 dimensions are dropped."""
    return (b.ndim == 1 or sum(n != 1 for n in b.shape) == 1) and _contiguous(b) and _contiguous(x)


def _contiguous(a) -> bool:
    return bool(getattr(getattr(a, "flags", None), "c_contiguous", False))


def _swapped(rows, w) -> bool:
    """Whether ``rows @ w.T`` runs as ``(w @ rows.T).T`` (then copied to C order, ``_unswapped``): float32 products
    of a few rows (2 to 48; to 64 with the compiled copy and 128 or more output features) with at least 1,536
    outputs and an inner dimension of 64 or more. OpenBLAS's single-precision GEMM (NumPy's; SkylakeX kernels)
    takes up to 2.7x as long on the transposed weight in that range as with the two operands' roles swapped (4 x 128
    by 384: 28 against 13 µs; 16 x 768 by 2304: 1.5 against 0.9 ms; 64 x 128 by 384 with the bias and the compiled
    copy: 89 against 78), and the same bits: each output is the same dot product, accumulated in the same order.
    Outside it the swap's copy of the output costs more than it saves (at 96 rows and more; at 64 rows through
    NumPy's copy, or of fewer than 128 output features: about level, or the swap loses), and double precision
    gained nothing (``policy.swap_small_gemm``: off)."""
    if not policy.swap_small_gemm or type(rows) is not xp.ndarray or type(w) is not xp.ndarray:
        return False
    m, k = rows.shape
    return (2 <= m <= 64 and k >= 64 and m * w.shape[0] >= 1536 and rows.dtype == _F32 and w.dtype == _F32
            and rows.flags.c_contiguous and w.flags.c_contiguous  # (the layouts measured: BLAS's either way)
            and (m <= 48 or w.shape[0] >= 128 and policy.use_compiled()
                 # (not where two threads take the rows' halves side by side, as before the swap reached 64 rows)
                 and not (policy.linear_forward_halves and _side_by_side_fits(rows, rows, w))))


def _unswapped(product, b):
    """``(product.T + b, True)`` in C order, for the swapped product ``w @ rows.T`` and a bias ``b`` of one
    dimension and the product's dtype, by the compiled transposing copy (``_kernels/transpose.py``: 64 x 384 in 7
    µs, the bias added on the way, where NumPy's copy takes 15 and the bias another pass); ``(product.T, False)``
    in C order where that cannot run (then the caller adds the bias, as after any GEMM)."""
    n, m = product.shape
    if (b is None or type(b) is xp.ndarray and b.ndim == 1 and b.shape[0] == n and b.dtype == product.dtype) \
            and policy.use_compiled():
        out = xp.empty((m, n), product.dtype)
        transposed_plus(product, _NO_BIAS if b is None else b, out)
        return out, b is not None
    return product.T.copy(), False


_NO_BIAS = xp.empty(0, xp.float32)  # (the kernel's "no bias": the swapped products are float32)


_F32 = xp.dtype(xp.float32)
_F64 = xp.dtype(xp.float64)


def _as_rows(a):
    """``a`` as the 2-D array of its rows, also when the last dimension is empty (in_features or out_features 0),
    where ``reshape(-1, 0)`` cannot infer the row count."""
    k = a.shape[-1]
    return a.reshape(-1, k) if k else a.reshape(math.prod(a.shape[:-1]), 0)


def _blas_operand(a):
    """``a`` as an operand BLAS takes: a contiguous copy of a plain array laid out neither in C nor in Fortran order.
    The gradient of ``out.mean()`` or ``out.sum()`` reaches a Linear as a broadcast (zero strides), which NumPy's
    matmul does not pass to BLAS: its own loop took 150-170 us for a (1, 32) @ (32, 2048) weight gradient against
    5 us for BLAS on a copy of the 32 values."""
    if type(a) is xp.ndarray and not (a.flags.c_contiguous or a.flags.f_contiguous):
        return xp.ascontiguousarray(a)
    return a


def _add_in_place(rows, b) -> None:
    rows += b


def _bias_column(x, w, b) -> bool:
    """Whether the bias rides in the GEMM as one more input column (``_matmul_bias_column``): plain arrays, a
    (out_features,) bias, at least 64 Ki outputs, and copies of x and w smaller than the pass over the output
    they save."""
    if type(x) is not xp.ndarray or type(w) is not xp.ndarray or type(b) is not xp.ndarray or b.ndim != 1:
        return False
    k, o = w.shape[1], w.shape[0]
    rows = x.size // k if k else 0
    return rows * o >= 1 << 16 and rows * k + o * k < rows * o


def _matmul_bias_column(x2, w, b):
    """x2 @ w.T + b as one GEMM of [x2, 1] and [w, b]: the bias is added inside the GEMM's sums, as PyTorch's
    addmm adds it in its GEMM, instead of by a pass over the output after it (GPT-style inference, (4096, 128)
    by (512, 128): 6.8 -> 6.6 ms; a (4096, 512) by (128, 512) GEMM lost time this way, hence ``_bias_column``)."""
    n, k = x2.shape
    xa = xp.empty((n, k + 1), x2.dtype)
    xa[:, :k] = x2
    xa[:, k] = 1
    wa = xp.empty((w.shape[0], k + 1), w.dtype)
    wa[:, :k] = w
    wa[:, k] = b
    return gemm(xa, wa.T)


def _check_same_dtype(name: str, *tensors) -> None:
    dt = tensors[0]._data.dtype
    for t in tensors:  # (a plain loop, no set of dtypes: this runs on every linear and convolution)
        if t is not None and t._data.dtype != dt:
            raise RuntimeError(
                f"{name}: expected all inputs to have the same dtype, got "
                + ", ".join(str(t.dtype) for t in tensors if t is not None)
                + "; cast them first (e.g. x.float())"
            )


@lower_precision
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``; input (*, in_features), weight (out_features, in_features)."""
    if weight._data.ndim != 2:
        raise RuntimeError(f"linear: weight must be 2-D (out_features, in_features), got shape {tuple(weight.shape)}")
    xs, (out_f, in_f) = input._data.shape, weight._data.shape
    if not xs or xs[-1] != in_f:
        k = xs[-1] if xs else 1
        rows = input._data.size // k if k else 0
        raise RuntimeError(
            f"linear: mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {in_f}x{out_f}): "
            f"input {tuple(xs)} must end in in_features={in_f} of weight {tuple(weight.shape)}"
        )
    if bias is not None and bias._data.shape not in ((out_f,), ()):
        _check_bias(input._data, bias._data, out_f)
    dt = input._data.dtype
    if weight._data.dtype != dt or bias is not None and bias._data.dtype != dt:
        _check_linear_dtypes(input, weight, bias)
    if dt.kind == "b" and input._data.size and weight._data.size:  # (PyTorch's addmm has no bool kernel)
        raise not_implemented_for("addmm_impl_cpu_", input.dtype)
    if weight._vc.__class__ is not list and not _inference_state.enabled:
        # an inference weight outside inference mode (a model built under inference_mode()): PyTorch's linear
        # multiplies by weight.t(), a view of it that records no history, so the weight gets no gradient (the bias
        # does) and an input that requires grad cannot save it for backward
        weight = weight.detach()
    return Linear.apply(input, weight, bias)


def _check_linear_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's error for linear's operands of different dtypes, raised by the op its ``linear`` hands them to:
    ``addmm`` (a bias with a 2-D input or a contiguous one) checks the bias, then the input, against the weight;
    ``matmul`` (no bias, or a non-contiguous input of more dimensions) checks the input against the weight, in
    ``mm``'s words where it folds the input into a matrix (2-D or fewer dimensions, a weight that requires grad,
    or leading dimensions that flatten without a copy), else in ``bmm``'s. A bias of another floating dtype added
    in place after ``matmul`` passes in PyTorch; ember refuses it with its own message."""
    x, w = input._data, weight._data
    names = SCALAR_TYPE_NAMES
    if bias is not None and (x.ndim == 2 or x.flags.c_contiguous and (x.ndim == 3 or bias._data.ndim == 1)):
        if bias._data.dtype != w.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {names[bias._data.dtype.name]} "
                               f"and {names[w.dtype.name]}")
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {names[x.dtype.name]} and "
                           f"{names[w.dtype.name]}")
    if x.dtype != w.dtype:
        folds = (x.ndim <= 2 or weight.requires_grad or x.size == 0
                 or all(x.strides[i] == x.strides[i + 1] * x.shape[i + 1] for i in range(x.ndim - 2)))
        if folds:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {CPP_TYPE_NAMES[x.dtype.name]} "
                               f"!= {CPP_TYPE_NAMES[w.dtype.name]}")
        raise RuntimeError(f"expected scalar type {names[x.dtype.name]} but found {names[w.dtype.name]}")
    _check_same_dtype("linear", input, weight, bias)


def _check_bias(x, b, out_f: int) -> None:
    """A bias broadcasts as PyTorch's ``linear`` broadcasts it: against the (rows, out_features) of its addmm (a
    2-D input, or ``_bias_fused``), where it may have no more than 2 dimensions; else it is added in place to the
    output, whose shape it may not grow."""
    if x.ndim == 2 or _bias_fused(x, b):
        target = (math.prod(x.shape[:-1]), out_f)
    else:
        target = (*x.shape[:-1], out_f)
    if b.ndim > len(target) or any(n not in (1, t) for n, t in zip(b.shape[::-1], target[::-1])):
        raise RuntimeError(
            f"linear: bias of shape {tuple(b.shape)} does not broadcast to {target}, the shape it is added to "
            f"(out_features {out_f})"
        )


class Bilinear(Node):
    float32_compute = True
    rerun_for_higher_order = True  # backward reads t = x1 . w, an intermediate (create_graph records it anew)
    rerun_unchecked = (3,)  # the bias, only added: changed in place before backward is no error (PyTorch's either)
    saved_for = ((2,), (0, 2), (0,), (1,))  # which gradients read x1, x2, w and t

    def forward(self, x1, x2, w, b):
        # out[n, o] = sum_ij x1[n, i] w[o, i, j] x2[n, j]
        # (sizes spelt out: -1 cannot be inferred for an empty batch)
        t = xp.matmul(x1, w.transpose(1, 0, 2).reshape(w.shape[1], -1)).reshape(x1.shape[0], w.shape[0], w.shape[2])
        out = xp.einsum("noj,nj->no", t, x2)
        if b is not None:
            out += b
        self.saved = (x1, x2, w, t)
        return out

    def backward(self, g):
        x1, x2, w, t = self.saved
        n1, n2, nw, nb = self.needs_input_grad
        g1 = xp.einsum("no,oij,nj->ni", g, w, x2, optimize=True) if n1 else None
        g2 = xp.einsum("no,noj->nj", g, t) if n2 else None
        gw = xp.einsum("no,ni,nj->oij", g, x1, x2, optimize=True) if nw else None
        return g1, g2, gw, (g.sum(0) if nb else None)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``out[..., o] = input1 @ weight[o] @ input2 + bias[o]``; inputs (*, in1) and (*, in2)."""
    o, i1, i2 = weight._data.shape
    if input1._data.shape[-1] != i1 or input2._data.shape[-1] != i2 or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear: input1 {tuple(input1.shape)} and input2 {tuple(input2.shape)} must share leading dims "
            f"and have last dims {i1} and {i2} (weight {tuple(weight.shape)})"
        )
    _check_same_dtype("bilinear", input1, input2, weight, bias)
    lead = input1.shape[:-1]
    out = Bilinear.apply(input1.reshape(-1, i1), input2.reshape(-1, i2), weight, bias)
    # PyTorch's composite ends with the bias's AddBackward0, else its ViewBackward0
    return shown_as(reshape_owned(out, *lead, o), "AddBackward0" if bias is not None else "ViewBackward0")
