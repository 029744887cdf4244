"""Pointwise activations: one node whose forward also yields f'(x) when a gradient is needed.

Each activation is a function ``fn(x, need_grad, *params) -> (f(x), f'(x) or None)``;
``Pointwise`` saves the derivative and backward is ``g * f'(x)``. Computing the
derivative alongside the forward reuses its intermediates (exp, tanh, ...).

Gradients of gradients (``create_graph``): a piecewise-linear activation's f' is piecewise constant, so the
saved f' is right as a constant (f'' = 0, as PyTorch's); the product g * f' is still recorded as depending on x
(``unary.PiecewiseLinearGrad``), so that it requires grad, as PyTorch's, even for a constant g. A smooth one
(``SmoothPointwise``) runs ``fn`` again on the recorded input, so that f'(x) is recorded; its kernels written
with ``out=`` (GELU, Hardswish, SELU/CELU) then take the same formula in plain array expressions. Such a node
keeps its input for this until backward.
"""

from __future__ import annotations

import math

from ... import _dtype
from ..._backend import xp
from ..._kernels import activation as compiled
from ..._kernels._omp import region_threads
from ..._kernels.policy import policy
from ..._meta import contiguous_strides, iterator_strides, kept_layout, strides_like
from ..._parallel import multiply, parallel_blocks, parallel_flat, parallel_rows
from ..._tensor import Tensor
from ...autograd.graph import Node, shown_as, torch_named, version_checked
from ...autograd.lowp import narrow, to_float32
from ...autograd.no_derivative import _NotImplemented
from ...autograd.recorded import RecordedArray, is_recorded
from ...autograd.saved_attributes import not_saved, saved_tensor, saved_value
from ...autograd.selected import selected_gradient, selected_product
from ...ops import unary
from ...ops.elementwise import cast, not_implemented_for
from ...ops.erf import half_erfc_abs_into
from ...ops.pointwise import _erfc


class Pointwise(Node):
    """A piecewise-linear activation: f' (saved) is piecewise constant."""

    diagonal_jacobian = True
    float32_compute = True
    constant_saved = (0,)  # (f': its float32 values, as forward computed them, a constant of the gradient)
    contiguous_result = False  # (True: PyTorch's kernel allocates a contiguous result, log_sigmoid's)
    # True where PyTorch's op writes into ``empty_like(input)`` (hardtanh's): a dense input's strides, those of its
    # size-1 dimensions included, where an elementwise kernel's result takes TensorIterator's there (such a node
    # is ``own_layout``: ``apply`` leaves its result as forward lays it out)
    input_strides_result = False
    saves_input = False  # (True: PyTorch's node saves the input, ``node_named``'s ``saved``)
    # True where PyTorch's backward kernel selects (``f' != 0 ? g f' : 0``, hardtanh's, threshold's) rather than
    # multiplying by f': +0.0 where f' is 0 whatever g (``autograd.selected``; a product gives -0.0 or NaN).
    # ``selected``, below, is the one place that forms such a gradient
    selects_gradient = False
    # PyTorch's backward kernel's two operands in its TensorIterator's order, which lays the gradient out (the
    # first whose strides tell two dimensions apart decides; a broadcast gradient's, ``y.sum()``'s, tell nothing):
    # "gx" (grad_output, self: ``hardtanh_backward``'s, ``gelu_backward``'s), "xg" (self first:
    # ``threshold_backward``'s, ``leaky_relu_backward``'s), None: the gradient as computed
    backward_operands: str | None = "gx"
    input_strides = None  # (forward's input's strides, in bytes, and item size: the gradient's layout)

    # ``selected_from_input(g, x, *params)``: a selecting node's gradient in one compiled pass from the saved input
    # (the same bits as ``selected_product`` of f'), or None where that kernel would not run on such arrays (``g``
    # None: whether it would); where it would, forward keeps no f'
    selected_from_input = None

    # ``passes(x, *params)``: where a selecting node's gradient passes (g f', a bool mask of the input), for one whose
    # f' is 0 also where PyTorch's kernel multiplies (hardswish's at x = -1.5: g * 0, -0.0 for a negative g); None:
    # where f' != 0 (``selected_product``)
    passes = None

    def forward(self, x, fn, params):
        need = self.needs_input_grad is not None
        if need and x.__class__ is xp.ndarray and x.ndim > 1 and not (x.flags.c_contiguous and 1 not in x.shape):
            self.input_strides = (x.strides, x.itemsize)  # (a row-major input, the common case: None)
        if need and self.selected_from_input is not None and self.saves_input and \
                self.selected_from_input(None, x, *params):
            need = False  # (backward reads the saved input)
        out, deriv = fn(x, need, *params)
        # the input too where PyTorch's node saves it (``_saved_self``), which the formula does not read (f' is
        # saved): no copy, its array is held for the version check already (``_apply``)
        self.saved = (deriv, x) if self.saves_input else (deriv,)
        self.fn, self.params = fn, params
        if self.contiguous_result and out.__class__ is xp.ndarray:  # (not a recorded array: create_graph's rerun)
            return xp.ascontiguousarray(out)
        out = kept_layout(out, x)  # (a kernel on the flat array computes row-major: the input's layout, as PyTorch's)
        return strides_like(out, x) if self.input_strides_result and out.__class__ is xp.ndarray else out

    def derivative(self, x=None):
        """f' at ``x``, by default as forward saved it; where it did not keep it (an in-place form,
        ``keep_original_input``; under saved-tensor hooks, ``_pack_saved``), made again from the saved input (in
        float32 for a half-precision one, as forward computed it)."""
        deriv = self.saved[0] if x is None else None
        if deriv is None:
            x = self.saved[1] if x is None else x
            x = x.t._data if type(x) is RecordedArray else x
            if self.half_dtype is not None and x.dtype == self.half_dtype:
                x = to_float32([x], x.dtype)[0]
            deriv = self.fn(x, True, *self.params)[1]
        return deriv

    def _pack_saved(self, inputs) -> None:
        """Under saved-tensor hooks, the node saves what PyTorch's saves, its input (``_saved_self``): f' is not
        kept (nor handed to the pack hook), but made again from the unpacked input at backward, so that a hook
        that lets the input go (checkpointing) leaves nothing of it alive."""
        if self.saves_input:
            self.saved = (None, self.saved[1])
        super()._pack_saved(inputs)

    # the name of PyTorch's backward op where it has no derivative (``hardsigmoid_backward``): under create_graph
    # the gradient is recorded as its ``NotImplemented`` node, whose backward is PyTorch's error
    backward_op_without_derivative: str | None = None

    # ``derivative_from_result(result, *params)``: f' from the result, for a node whose PyTorch in-place form reads
    # its result (``EluBackward1``): ``_maybe_inplace`` replaces the f' forward made from the input with it
    derivative_from_result = None

    def backward(self, g):
        if type(g) is RecordedArray and self.backward_op_without_derivative is not None:
            plain = g.t._data
            plain = self.selected(plain) if self.selects_gradient else multiply(plain, self.derivative())
            if plain.dtype != g.dtype:  # (a half-precision gradient times the float32 f': rounded once, as PyTorch's
                plain = narrow(plain, g.dtype)  # kernel computing in float32)
            depends_on = [t for t in (g.t, _input_of(self, g)) if t._requires_grad]  # (grad_output, self)
            return (RecordedArray(_NotImplemented.apply(*depends_on, grad=plain,
                                                        op=self.backward_op_without_derivative)),)
        if type(g) is RecordedArray:  # create_graph: the product depends on x, with derivative zero (f'' = 0)
            return (unary.piecewise_linear_grad(g, self.derivative(), _input_of(self, g),
                                                selects=self.selects_gradient),)
        if self.selects_gradient:
            return (self.laid_out(self.selected(g), g),)
        return (self.laid_out(multiply(g, self.derivative()), g),)  # split among the intra-op threads

    def laid_out(self, gx, g):
        """The input's gradient ``gx`` (a plain array) in the layout PyTorch's backward kernel gives it
        (``unary.backward_layout``): its TensorIterator's for the gradient ``g`` and the input, in
        ``backward_operands``' order; "contiguous": row-major (rrelu's in training, ``grad * noise``)."""
        order = self.backward_operands
        if order is None or gx.__class__ is not xp.ndarray or gx.ndim < 2:
            return gx
        if order == "contiguous":
            return xp.ascontiguousarray(gx)
        if self.input_strides is None:  # (a row-major input without size-1 dimensions)
            if g.__class__ is not xp.ndarray or g.flags.c_contiguous and gx.flags.c_contiguous:
                return gx  # (row-major operands: TensorIterator's row-major result, NumPy's)
            strides = tuple(s * gx.itemsize for s in contiguous_strides(gx.shape))
        else:
            strides, itemsize = self.input_strides
            strides = tuple(s // itemsize * gx.itemsize for s in strides)
        if order == "g(x+1)":  # (softsign's grad / (1 + |x|): the divisor laid out as ``|x|``, then ``1 + |x|``)
            for operands in ((), (0,)):
                made = iterator_strides((xp.lib.stride_tricks.as_strided(gx, gx.shape, strides), *operands), gx.shape)
                strides = tuple(s * gx.itemsize for s in (contiguous_strides(gx.shape) if made is None else made))
            order = "gx"
        # a stand-in of the input's strides (never read: only its layout orders the dimensions)
        x = xp.lib.stride_tricks.as_strided(gx, gx.shape, strides)
        return unary.backward_layout(gx, (g, x) if order == "gx" else (x, g))

    def selected(self, g):
        """A selecting node's gradient: ``selected_product`` of f' (or g f' where ``passes``), in one compiled pass
        from the saved input where the node has one (``selected_from_input``), forward kept no f' and ``g`` is a
        plain array. A recorded ``g`` (create_graph) reaches here only in a smooth node, whose f' is recorded."""
        if self.saved[0] is None and self.selected_from_input is not None and type(g) is xp.ndarray:
            gx = self.selected_from_input(g, self.saved[1], *self.params)
            if gx is not None:
                return gx
        if self.passes is None:
            return selected_product(g, self.derivative())
        x = self.saved[1]  # (a node with ``passes`` saves its input)
        passes = self.passes(x.t._data if type(x) is RecordedArray else x, *self.params)
        return selected_gradient(multiply(g, self.derivative()), passes)

    def keep_original_input(self, original: Tensor) -> None:
        """The in-place form (``_maybe_inplace``) of a node that saves its input: that input is overwritten by the
        result, so the node keeps ``original``, a copy of the input as it was (at the input's place in the graph),
        as PyTorch's in-place form saves ``self.clone()`` (its ``_saved_self``, whose grad_fn is that clone's
        ``CloneBackward0``: the caller gives the entry that identity, ``inplace._saved_as_clone``). A piecewise-linear
        node then drops f', made again from the clone at backward (one array kept, as PyTorch's node keeps); a
        smooth one keeps f' and reruns from the clone under create_graph."""
        self.saved = (self.saved[0] if self.rerun_for_higher_order else None, original._data)
        fn = original.grad_fn
        edge = (fn, original._output_nr) if fn else None
        self._saved_versions += ((original._vc, original._vc[0], original._data, (edge, 1)),)


def _input_of(node: Node, g) -> Tensor:
    """A tensor of the graph standing for ``node``'s input (its edge; its values, which the product's gradient
    never reads, are not kept: the node saves f' alone): the input the node saved, which for an in-place form is
    PyTorch's ``self.clone()`` (``keep_original_input``: its CloneBackward0's edge), or the node's result for one
    that saved its result (leaky_relu_'s ``_saved_result``: PyTorch's formula reads the result, its edge the node's
    output), else the node's own edge."""
    source = next((entry[3][0] for entry in node._saved_versions if entry[3][1] == 1), None)
    fn, nr = source if source.__class__ is tuple else (node, source) if source.__class__ is int else \
        node.next_edges[0]
    return Tensor._make(xp.broadcast_to(xp.zeros((), g.dtype), g.shape), fn, nr)


class SmoothPointwise(Pointwise):
    """A smooth activation: under create_graph f'(x) is computed again from the recorded input."""

    rerun_for_higher_order = True
    constant_saved = ()

    def backward(self, g):  # (f'(x) recorded under create_graph: the rerun forward's)
        if type(g) is RecordedArray:
            return (self.selected(g) if self.selects_gradient else multiply(g, self.derivative()),)
        return (self.laid_out(self.selected(g) if self.selects_gradient else multiply(g, self.derivative()), g),)


def _saved_param(position: int) -> property:
    """PyTorch's ``grad_fn._saved_<parameter>``: the activation's parameter at ``position`` (as a number)."""
    return property(lambda node: node.params[position])


def node_named(name: str, smooth: bool = True, own: str | None = None, saved: tuple[str, ...] | None = None,
               reads_result_in_place: bool = True, selects_gradient: bool = False, selected_from_input=None,
               passes=None, **attributes) -> type:
    """The node class of one activation: ``SmoothPointwise`` (``Pointwise`` for a piecewise-linear one, not
    ``smooth``) under PyTorch's node name ``name`` (``GeluBackward0``), made once per activation so that its
    ``grad_fn`` reads as PyTorch's at no cost per call. ``own``: ember's class name (``__qualname__``, by which
    DTensor's sharding rules look ops up), the activation's where PyTorch's name is another op's (softsign's
    ``DivBackward0``); by default ``name`` without ``Backward0``. ``saved``: where PyTorch's node saves its input
    (``_saved_self``), the names of the parameters it saves too (``_saved_negative_slope``), those of the leading
    activation parameters, in order. Its in-place form (``EluBackward1``, ``_maybe_inplace``'s ``result_saved``)
    reads its result, the input it overwrote: that entry shows as ``_saved_result``, as PyTorch's, and there is no
    ``_saved_self`` (unless not ``reads_result_in_place``: threshold_'s ``ThresholdBackward1`` saves its input).
    ``selects_gradient``: ``Pointwise.selects_gradient`` (a piecewise-linear one whose PyTorch kernel selects),
    ``selected_from_input`` its one-pass form (``Pointwise.selected_from_input``), ``passes`` where it passes the
    gradient if not where f' != 0 (``Pointwise.passes``). ``attributes``: further class attributes (PyTorch's other
    ``_saved_*`` entries, ``Pointwise.contiguous_result``)."""
    if (selected_from_input is not None or passes is not None) and not selects_gradient:
        raise TypeError("selected_from_input and passes belong to a selecting node's gradient")
    if passes is not None and saved is None:
        raise TypeError("passes reads the saved input")
    base = SmoothPointwise if smooth else Pointwise
    own = own or name[:-len("Backward0")]
    namespace: dict = {"__module__": __name__, "__qualname__": own, "selects_gradient": selects_gradient,
                       **attributes}
    if selected_from_input is not None:
        namespace["selected_from_input"] = staticmethod(selected_from_input)
    if passes is not None:
        namespace["passes"] = staticmethod(passes)
    if saved is not None:
        namespace["saves_input"] = True
        namespace["_saved_self"], namespace["_raw_saved_self"] = saved_tensor(1)
        namespace.update({f"_saved_{param}": _saved_param(k) for k, param in enumerate(saved)})
    if saved is not None and reads_result_in_place:
        result, raw_result = saved_tensor(1)  # (the input the in-place form overwrote with its result)
        namespace["attributes_shown"] = {name[:-1] + "1": {
            "_saved_result": result, "_raw_saved_result": raw_result, **not_saved("self")}}
    return torch_named(name)(type(own, (base,), namespace))


_LEAKY_RELU = node_named("LeakyReluBackward0", smooth=False, saved=("negative_slope",), backward_operands="xg")
_GELU = node_named("GeluBackward0", saved=("approximate",))
_SILU = node_named("SiluBackward0", saved=())
_SOFTPLUS = node_named("SoftplusBackward0", saved=("beta", "threshold"))
# (hardtanh's node, whose one-pass gradient is defined with it, below)
# PyTorch's CPU forward also returns exp(-|x|) (``_logsigmoid``'s ``e``), which its node saves: made again from the
# saved input when read, rather than kept
_LOG_SIGMOID = node_named("LogSigmoidBackward0", saved=(), contiguous_result=True, backward_operands=None,
                          _saved_buffer=property(
    lambda node: Tensor._make(xp.exp(-xp.abs(saved_value(node, 1)._data)))))


def _apply(x: Tensor, fn, *params, node: type, saves_input: bool = True, kernel: str | None = None) -> Tensor:
    """``fn``'s activation of ``x``, recorded as ``node`` (a ``node_named`` class). ``saves_input``: PyTorch's
    formula reads ``x`` (saved: changing it in place before backward is its error), as every activation's here but
    tanhshrink's (composed there: x - tanh(x)).
    ``kernel``: PyTorch's CPU kernel, which has no integer version (its NotImplementedError for an integer ``x``);
    without one (PyTorch's activations composed of other ops: softsign, tanhshrink) an integer ``x`` is computed
    in the default float dtype. A Python int among ``params`` is read as PyTorch's argument parser reads a Scalar
    (``_dtype.scalar_int``)."""
    _dtype.scalar_ints(params)
    if not x.is_floating_point():
        if kernel is not None:
            raise not_implemented_for(kernel, x.dtype)
        x = cast(x, _dtype.get_default_dtype())
    out = node.apply(x, fn=fn, params=params)
    return version_checked(out, x) if saves_input else out


_TENSOR_OR_ARRAY = (Tensor, xp.ndarray)
_COMPILED_FLOATS = (xp.dtype(xp.float32), xp.dtype(xp.float64))  # the dtypes of the compiled activation kernels


def scalar_params(op: str, positions: tuple, **params) -> tuple:
    """An activation's parameters (``negative_slope``, ``alpha``, ``min_val``, ...) as PyTorch's argument parser
    reads a Scalar: a 0-d tensor that does not require grad is its number, any other tensor its TypeError naming
    the parameter's position in the call (``positions``, one a parameter: PyTorch's functional passes them by
    position, so ``leaky_relu(x, negative_slope=t)`` is "(position 2)" too), the first by position
    (``_dtype.scalar_tensor_number``); a Python int past the uint64 range its OverflowError, checked in the
    order given (``_dtype.scalar_int``); a NumPy array, even a 0-d one, PyTorch's TypeError (no Number to it)."""
    values = tuple(params.values())
    for v in values:
        if isinstance(v, _TENSOR_OR_ARRAY):  # (rare: the common call pays one isinstance per parameter)
            for at, (name, value) in zip(positions, params.items()):
                if isinstance(value, xp.ndarray):
                    raise TypeError(f"{op}(): argument '{name}' (position {at}) must be Number, not numpy.ndarray")
            read = {name: _dtype.scalar_tensor_number(v, op, name, position=at) if isinstance(v, Tensor) else v
                    for at, (name, v) in sorted(zip(positions, params.items()), key=lambda e: e[0])}
            values = tuple(read[name] for name in params)
            break
    _dtype.scalar_ints(values)
    return values


def _scalar(x, value: float):
    """A Python number as a scalar of x's dtype, so float32 stays float32. Any other number (a complex or NumPy
    one: an activation's parameter) is converted as PyTorch's kernels convert a Scalar to their opmath type
    (``checked_fill``: a complex number's imaginary part is its RuntimeError, not NumPy's ComplexWarning)."""
    if value.__class__ is not float and value.__class__ is not int:
        value = _dtype.checked_fill(value, x.dtype if x.dtype.itemsize > 2 else xp.dtype(xp.float32))
    return x.dtype.type(value)


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_K = math.sqrt(2 / math.pi)


def _gelu_erf_into(x, out, d) -> None:
    """out = x Phi(x) and, when d is given, d = Phi(x) + x phi(x) (the derivative)."""
    s = x.dtype.type
    a = xp.abs(x)
    e = d if d is not None else xp.empty_like(x)
    half_erfc_abs_into(a, _SQRT_HALF, out, e)  # out = q = Phi(-|x|), e = exp(-x^2/2)
    xp.subtract(s(0.5), out, out=out)  # r = Phi(|x|) - 1/2
    if d is None:  # x Phi(x) = x/2 + |x| r: no copysign, NumPy's slowest pass here (~6 multiplies)
        a *= out
        xp.multiply(x, s(0.5), out=out)
        out += a
        return
    # Phi(x) = 1/2 + sign(x) r with sign(x) = 1 - 2 signbit(x): cheaper than copysign
    xp.multiply(xp.signbit(x), s(-2), out=a)
    a += 1
    out *= a
    out += s(0.5)
    e *= x  # phi(x) = e / sqrt(2 pi)
    e *= s(_INV_SQRT_2PI)
    e += out
    out *= x


def _gelu_erf64_into(x, out, d) -> None:
    """``_gelu_erf_into`` for float64: Phi(x) = erfc(-x / sqrt 2) / 2 by the C library's erfc, element by element
    (the float32 kernels' polynomial, good to 1.5e-7, left float64 results 2e-7 away from PyTorch's)."""
    cdf = _erfc(x * -_SQRT_HALF)
    cdf *= 0.5
    xp.multiply(x, cdf, out=out)
    if d is not None:
        xp.square(x, out=d)
        d *= -0.5
        xp.exp(d, out=d)
        d *= x
        d *= _INV_SQRT_2PI
        d += cdf


def _gelu_tanh_into(x, out, d) -> None:
    """out = x (1 + th) / 2 with th = tanh(k (x + 0.044715 x^3)); when d is given, the derivative
    d = (1 + th)/2 + x/2 (1 - th^2) k (1 + 3 * 0.044715 x^2)."""
    s = x.dtype.type
    x2 = d if d is not None else xp.empty_like(x)
    xp.square(x, out=x2)
    th = xp.multiply(x2, s(0.044715 * _TANH_K))
    th += s(_TANH_K)
    th *= x
    xp.tanh(th, out=th)
    xp.multiply(th, s(0.5), out=out)
    out += s(0.5)  # (1 + th) / 2
    if d is not None:
        x2 *= s(0.5 * 3 * 0.044715 * _TANH_K)
        x2 += s(0.5 * _TANH_K)
        x2 *= x  # x/2 k (1 + 3 * 0.044715 x^2)
        xp.square(th, out=th)
        xp.subtract(1, th, out=th)
        th *= x2
        xp.add(th, out, out=d)
    out *= x


def sigmoid_array(x, e=None):
    """The logistic function without overflow or cancellation: with e = exp(-|x|) <= 1 (``e`` if given: the
    softplus-based activations have it already), 1 / (1 + e) for x >= 0 and e / (1 + e) below, written
    max(e, [x >= 0]) / (1 + e) (a masked select is NumPy's slowest pass). The tanh form (1 + tanh(x/2)) / 2
    cancels for x << 0: 0 instead of 2e-9 at x = -20 in float32. Recorded (create_graph), it is the sigmoid op,
    whose derivative s (1 - s) holds everywhere: this form's max and |x| have kinks at 0, where differentiating
    them would give 0 instead of 1/4 (wherever exp(-|x|) rounds to 1)."""
    if is_recorded(x):
        return RecordedArray(unary.sigmoid(x.t))
    if e is None:
        e = xp.exp(-xp.abs(x))
    return xp.maximum(e, x >= 0) / (1 + e)


def _leaky_relu(x, need, slope):
    s = _scalar(x, slope)
    if type(x) is xp.ndarray and x.dtype in (xp.float32, xp.float64) and x.flags.c_contiguous and policy.use_compiled():
        # one pass instead of three or four (0.20 -> 0.05 ms on a WGAN critic's first (32, 32, 16, 16) activation)
        out = xp.empty_like(x)
        d = xp.empty_like(x) if need else xp.empty(0, x.dtype)
        parallel_rows(lambda xs, os, ds: compiled.leaky_relu(xs, s, _scalar(x, 1), os, ds), x.reshape(-1),
                      out.reshape(-1), d.reshape(-1))
        return out, (d if need else None)
    # Ufuncs only, no ``where``: they keep x's memory order (a convolution's output is a batch-last view), while
    # ``where`` writes C order and ``copyto(where=)`` is a slow masked loop (6x the time on a conv2d output).
    pos = x > 0
    if not need and 0 < slope <= 1:  # (not 0: inf * 0 is NaN)
        return xp.maximum(x, x * s), None  # x * s <= x exactly where x > 0; NaN propagates
    d = xp.add(pos, xp.multiply(xp.logical_not(pos), s))  # 1 or slope, exactly (one term is 0)
    return x * d, (d if need else None)


def _gelu_recorded(x, approximate):
    """GELU and its derivative in plain expressions (for recorded arrays, which the fused kernels cannot take)."""
    if approximate == "tanh":
        th = xp.tanh(_TANH_K * (x + 0.044715 * x * x * x))
        half = 0.5 * (1 + th)
        return x * half, half + 0.5 * x * (1 - th * th) * _TANH_K * (1 + 3 * 0.044715 * x * x)
    from ...ops.pointwise import erf

    cdf = 0.5 * (1 + RecordedArray(erf(x.t * _SQRT_HALF)))
    return x * cdf, cdf + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu(x, need, approximate):
    if is_recorded(x):
        return _gelu_recorded(x, approximate)
    # Each formula writes into the output, the derivative and at most two temporaries (in-place ufuncs): GELU
    # runs on the largest activations of a transformer, where a temporary per operation costs as much as the
    # math. Every element is independent, so the flat arrays are split among the intra-op threads, and into
    # cache-sized blocks.
    if approximate != "tanh" and x.dtype in (xp.float32, xp.float64) and policy.use_compiled():  # one pass
        return (_compiled_pointwise(compiled.gelu_erf, x, need, compiled.gelu_erf_blocks) if x.dtype == xp.float32
                else _compiled_pointwise(compiled.gelu_erf64, x, need, compiled.gelu_erf64))
    out = xp.empty(x.shape, x.dtype)
    deriv = xp.empty(x.shape, x.dtype) if need else None
    kernel = (_gelu_tanh_into if approximate == "tanh" else
              _gelu_erf64_into if x.dtype.itemsize > 4 else _gelu_erf_into)
    parallel_blocks(kernel, x.reshape(-1), out.reshape(-1), None if deriv is None else deriv.reshape(-1))
    return out, deriv


def _silu(x, need):
    if type(x) is xp.ndarray and x.dtype == xp.float32 and policy.use_compiled():  # one pass
        return _compiled_pointwise(compiled.silu, x, need, compiled.silu_blocks)
    s = sigmoid_array(x)
    return x * s, (s * (1 + x * (1 - s)) if need else None)


def _compiled_pointwise(kernel, x, need, regions):
    """(f(x), f'(x) if need) by a compiled kernel(x, out, d) on flat arrays, split among the threads: with
    ``policy.omp``, one region of ``regions.parallel`` on numba's OpenMP threads (``regions``: the kernel's form
    with a ``prange`` loop, taking the region's thread count after d unless it is the kernel itself)."""
    out = xp.empty(x.shape, x.dtype)
    deriv = xp.empty(x.shape, x.dtype) if need else None
    flat_deriv = xp.empty(0, x.dtype) if deriv is None else deriv.reshape(-1)
    threads = region_threads(x.size, x.size)
    if threads:
        extra = () if regions is kernel else (threads,)
        regions.parallel(x.reshape(-1), out.reshape(-1), flat_deriv, *extra)
        return out, deriv
    parallel_rows(kernel, x.reshape(-1), out.reshape(-1), flat_deriv, min_elements=policy.min_parallel_elements)
    return out, deriv


def exp_linear(x, need, alpha, scale, inner):
    """PyTorch's ELU kernel, for ELU, SELU (fixed alpha and scale) and CELU (inner = 1 / alpha): scale * alpha *
    expm1(x * inner) for x < 0 (expm1: exact near 0, where exp(x) - 1 cancels), scale * x otherwise (NaN, and a
    signed zero kept: -0.0 at -0.0); the derivative scale * alpha * inner * exp(x * inner) for x <= 0, scale for
    x > 0, NaN for NaN (PyTorch's vectorised kernel, which all but a tensor's last few elements take, selects on
    x > 0; its scalar loop for those tests x <= 0 and gives scale, so PyTorch's answer at a NaN depends on the
    element's position and the CPU's vector width: ember's is the vectorised one's). Written without masked selects
    (NumPy's where/copyto with a mask are the slowest passes here): z = minimum(x, 0) * inner is 0 for x > 0 (NaN for
    NaN), so the exponential terms are constants there, and each value is one branch plus the other's zero; where
    that sum is a zero, its sign is the chosen branch's (``_branch_at_zeros``), as PyTorch's select gives it (-0.0
    for x < 0 with alpha 0, the gradient's -0.0 at -inf with a negative alpha), where -0.0 + 0.0 would be +0.0."""
    if is_recorded(x):  # create_graph: the same formula out of place
        # (x where x < 0, else 0, by a select: fmin's tie at x = 0 would pass half the gradient, where PyTorch's
        # second derivative takes x < 0)
        z = xp.where(x < 0, x, 0) * inner
        # f' as PyTorch's vectorised kernel selects it (on x > 0): at a NaN the exponential branch of a NaN, so the
        # gradient and its own derivative are NaN there; x * 0 keeps a zero's derivative 0, as z's select
        z_at_nan = xp.where(x > 0, 0, xp.where(x < 0, x, x * 0)) * inner
        d = xp.where(x > 0, _scalar(x, scale), scale * alpha * inner * xp.exp(z_at_nan))
        return xp.where(x < 0, scale * alpha * xp.expm1(z), scale * x), d
    z = xp.asarray(xp.minimum(x, _scalar(x, 0)))  # (an array to write into: a 0-d x's minimum is a scalar)
    if inner != 1:
        z *= _scalar(x, inner)
    out = xp.expm1(z)
    out *= _scalar(x, alpha * scale)
    pos = xp.asarray(xp.maximum(x, _scalar(x, 0)))  # (NaN propagates; an array, as z)
    if scale != 1:
        pos *= _scalar(x, scale)
    out += pos
    out = _branch_at_zeros(out, x, True, lambda neg: xp.expm1(neg * _scalar(x, inner)) * _scalar(x, alpha * scale),
                           lambda other: other * _scalar(x, scale))
    if not need:
        return out, None
    d = xp.exp(z, out=z)
    d *= _scalar(x, scale * alpha * inner)
    xp.multiply(~(x <= 0), _scalar(x, scale * (1 - alpha * inner)), out=pos)
    d += pos
    d = _branch_at_zeros(d, x, False, lambda neg: xp.exp(neg * _scalar(x, inner)) * _scalar(x, scale * alpha * inner),
                         lambda other: xp.full_like(other, scale))
    return out, d


def exp_linear_grad_from_result(result, alpha, scale, inner):
    """f' of ``exp_linear`` from its result, as PyTorch's in-place form (``EluBackward1``, ``elu_backward`` with
    ``is_result``) computes it: input_scale * (result + alpha * scale) where not result > 0 (NaN: NaN, as its
    vectorised loop), scale above, with the coefficients in the result's dtype (float32 for a half one: PyTorch's
    opmath). Where the result has rounded to -alpha * scale (x = -50 in float32) that is exactly 0, not exp(x)."""
    if result.dtype.itemsize < 4:
        result = result.astype(xp.float32)
    negative = result + _scalar(result, alpha) * _scalar(result, scale)
    negative *= _scalar(result, inner)
    return xp.where(result > 0, _scalar(result, scale), negative)


def _refuser(op: str):
    """The backward of an in-place ELU (CELU; ``op`` "elu") with a negative alpha, or of an in-place LeakyReLU
    ("leakyReLu") with a negative slope: f' from its result would be wrong where the negative branch's result is
    positive, which PyTorch refuses (its message, as ``elu_backward``'s and ``leaky_relu_backward``'s)."""
    def refuse(*grads):
        raise RuntimeError(f"In-place {op} backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    return refuse


_refuse_negative_slope = _refuser("elu")
_refuse_negative_leaky_slope = _refuser("leakyReLu")


# (ELU's and SELU's node, whose in-place form's f' is ``exp_linear_grad_from_result``)
_ELU = node_named("EluBackward0", saved=("alpha", "scale", "input_scale"),
                  derivative_from_result=staticmethod(exp_linear_grad_from_result))


def _branch_at_zeros(values, x, strict: bool, negative_branch, other_branch):
    """``values`` (a two-branch function of ``x`` computed as one branch plus the other's zero) with its zeros
    recomputed from the branch each element takes (``negative_branch`` for x < 0, or x <= 0 where not ``strict``):
    a zero's sign is that branch's (``values`` corrected in place, returned). Rare (a signed zero input, an
    underflow, a zero coefficient), so one pass where there is none."""
    if values.all():  # (no zero: one pass, no temporary)
        return values
    values = xp.asarray(values)  # (a 0-d x's values are a NumPy scalar)
    zeros = values == 0
    at = x[zeros]
    values[zeros] = xp.where(at < 0 if strict else at <= 0, negative_branch(at), other_branch(at))
    return values


def _softplus(x, need, beta, threshold):
    bx = x * _scalar(x, beta)
    linear = bx > threshold
    # log(1 + e^z) = max(z, 0) + log1p(e^-|z|) never overflows
    e = xp.exp(-xp.abs(bx))
    soft = (xp.maximum(bx, 0) + xp.log1p(e)) / _scalar(x, beta)
    out = xp.where(linear, x, soft)
    if not need:
        return out, None
    d = xp.where(linear, _scalar(x, 1), sigmoid_array(bx, e))
    if is_recorded(x):  # create_graph: PyTorch's double backward masks beta x < threshold where its backward takes
        # beta x <= threshold: at equality the sigmoid's value, held constant (its derivative 0 there)
        d = xp.where(bx == _scalar(x, threshold), d.t._data, d)
    return out, d


def _hardtanh(x, need, lo, hi):
    out = xp.clip(x, lo, hi)
    return out, ~_hardtanh_clipped(x, lo, hi) if need else None  # (f' as a bool mask: ``selected_product``)


def _hardtanh_clipped(x, lo, hi):
    """Where hardtanh's derivative is 0: at and beyond the bounds (NaN is not: it takes the gradient, as PyTorch's
    kernel)."""
    return (x <= lo) | (x >= hi)


def _hardtanh_grad(g, x, lo, hi):
    """hardtanh's input gradient from the saved input, as PyTorch's ``hardtanh_backward``: g where x is strictly
    inside the bounds (or NaN), else 0 (also for an infinite or NaN g, which a product with f' would make NaN).
    One compiled pass (``_kernels.activation.hardtanh_grad``) where it runs, else NumPy's ``where`` (the reference).
    ``g`` None: whether forward may leave f' unmade (a plain array ``x``); None where this does not apply (the
    caller selects by f', ``Pointwise.selected``)."""
    if x.__class__ is not xp.ndarray:
        return None
    if g is None:
        return True
    if g.shape != x.shape:
        return None
    if not (x.dtype in _COMPILED_FLOATS and g.dtype == x.dtype
            and policy.compiles(x.size, policy.min_compiled_elements)):
        return selected_gradient(g, ~_hardtanh_clipped(x, lo, hi))
    lo, hi = x.dtype.type(lo), x.dtype.type(hi)  # (as NumPy compares x with a Python number: in x's dtype)
    gx = xp.empty_like(x)

    def grad(go, xo, d):
        if go.ndim == 1:
            compiled.hardtanh_grad(go, xo, lo, hi, d)
        else:  # (arrays parallel_flat cannot flatten come whole: the reference)
            xp.copyto(d, selected_gradient(go, ~_hardtanh_clipped(xo, lo, hi)))

    parallel_flat(grad, g, x, gx, min_elements=policy.min_parallel_pass_elements, flat=True)
    return gx


_HARDTANH = node_named("HardtanhBackward0", smooth=False, saved=("min_val", "max_val"), selects_gradient=True,
                       selected_from_input=_hardtanh_grad, input_strides_result=True,
                       own_layout=True)


def _logsigmoid(x, need):
    e = xp.exp(-xp.abs(x))
    out = xp.minimum(x, 0) - xp.log1p(e)
    return out, (sigmoid_array(-x, e) if need else None)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """max(0, x) + negative_slope * min(0, x)."""
    (negative_slope,) = scalar_params("leaky_relu" + "_" * inplace, (2,), negative_slope=negative_slope)
    out = _apply(input, _leaky_relu, negative_slope, node=_LEAKY_RELU, kernel="leaky_relu_cpu")
    return _maybe_inplace(input, out, inplace, result_saved=True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x); ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got '{approximate}'")
    return _apply(input, _gelu, approximate, node=_GELU, kernel="GeluKernelImpl")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (a.k.a. swish)."""
    return _maybe_inplace(input, _apply(input, _silu, node=_SILU, kernel="silu_cpu"), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    (alpha,) = scalar_params("elu" + "_" * inplace, (2,), alpha=alpha)
    out = _apply(input, exp_linear, alpha, 1, 1, node=_ELU, kernel="elu_cpu")  # (scales: PyTorch's ints)
    return _maybe_inplace(input, out, inplace, result_saved=True)


@_dtype.keyword_scalars  # (a C function in PyTorch: a keyword's TypeError names no position)
def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:  # (ints, as PyTorch's defaults)
    """log(1 + exp(beta x)) / beta; linear where beta * x > threshold."""
    beta, threshold = scalar_params("softplus", (2, 3), beta=beta, threshold=threshold)
    return _apply(input, _softplus, beta, threshold, node=_SOFTPLUS, kernel="softplus_cpu")


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val); gradient 1 strictly inside, 0 at and beyond the bounds (as PyTorch)."""
    if min_val > max_val:  # (checked by PyTorch's Python function, before its C one reads the numbers)
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    # (PyTorch's parser reports max_val's overflow first)
    max_val, min_val = scalar_params("hardtanh" + "_" * inplace, (3, 2), max_val=max_val, min_val=min_val)
    # a NumPy scalar bound as the Python number PyTorch reads (np.float64 would promote a float32 result)
    min_val, max_val = (v.item() if isinstance(v, xp.generic) else v for v in (min_val, max_val))
    if input.is_complex():  # (PyTorch's hardtanh is a clamp, which complex numbers have no order for)
        raise NotImplementedError("clamp is not supported for complex types")
    if not input.is_floating_point():  # integers: clamped in their own dtype, no gradient
        if not input.dtype.is_signed and input.dtype != _dtype.bool_ and (int(min_val) < 0 or int(max_val) < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        lo, hi = integer_limits(input, "hardtanh", min_val, max_val)
        # (into PyTorch's empty_like(input), as the float path's node: ``input_strides_result``)
        return _maybe_inplace(input, Tensor._make(strides_like(xp.clip(input._data, lo, hi), input._data)), inplace)
    return _maybe_inplace(input, _apply(input, _hardtanh, min_val, max_val, node=_HARDTANH), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0, 6, inplace)  # (ints, as PyTorch's relu6 passes them: its ``_saved_max_val`` is 6)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed without overflow."""
    return _apply(input, _logsigmoid, node=_LOG_SIGMOID, kernel="log_sigmoid_cpu")


def integer_limits(x: Tensor, op: str, *limits: float) -> list:
    """An integer ``x``'s clamping activation (hardtanh, threshold) keeps its dtype, as PyTorch's: the limits
    converted to it (a float truncated toward zero); a bool ``x`` is PyTorch's error."""
    if x.dtype == _dtype.bool_:
        raise RuntimeError(f"Bool inputs not supported for {op}")
    dt = x._data.dtype  # (an int past the dtype's range is PyTorch's RuntimeError, as a fill value's)
    return [xp.asarray(_dtype.checked_fill(int(v), dt)).astype(dt)[()] for v in limits]


def _maybe_inplace(input: Tensor, out: Tensor, inplace: bool, result_saved: bool = False,
                   second_form: bool = False) -> Tensor:
    """``inplace=True``: write the result into ``input``, which takes the result's node in the graph (version bump,
    graph rebase; as PyTorch's in-place activation, not a copy's node). That overwrites the input, so a node that
    saves it keeps a clone of it as it was, as PyTorch's in-place form saves ``self.clone()`` (its ``_saved_self``,
    ``Pointwise.keep_original_input``; a node that reruns its forward under create_graph reruns from it).
    ``result_saved`` (leaky_relu_, elu_, selu_, celu_, rrelu_ read their result, the input now): that entry is
    PyTorch's ``_saved_result``, an output of the node, checked at the input's version (changing it again is the
    error). PyTorch names the in-place form of those (and of threshold_, ``second_form``) ``...Backward1``
    (EluBackward1)."""
    if not inplace:
        return out
    from ...ops.indexing import check_inplace
    from ...ops.inplace import _rebase, _saved_as_clone, _snapshot, _tracked

    tracked = _tracked(input)
    check_inplace(input, tracked)
    node = out.grad_fn
    original = None
    if node is not None and node.saves_input and not result_saved and not node._packed:
        # PyTorch's in-place form saves ``self.clone()`` (``keep_original_input``): the copy, which takes that
        # identity below as every in-place op's (``inplace._saved_as_clone``)
        original = _snapshot(input)
    if node is not None and node.rerun_for_higher_order:  # (the clone's array where there is one: no second copy)
        snapshot = _snapshot(input, copy=original is None)
        if original is not None:
            snapshot._data = original._data
        node.keep_for_rerun((snapshot,), node._rerun[1])
    if node is not None and node._packed and node.saves_input:
        # under saved-tensor hooks the node packed its input, which the result overwrites: f' kept, made from the
        # input before that (``_saved_self`` reads the input as it is then; PyTorch's packs a clone)
        node.saved = (node.derivative(input._data), node.saved[1])
    # input takes the result's place in the graph (its node, as PyTorch's in-place activation's, not a copy's)
    _rebase(input, out, tracked)
    if node is not None:
        node.forget_versions_of(input)
        if original is not None:
            node.keep_original_input(original)
            _saved_as_clone(node, original)
        elif result_saved:
            if node.saves_input and not node._packed:  # saved[1], the input, holds the result now: PyTorch's
                # ``_saved_result``, an output of the node (its grad_fn the node), at the input's version
                node._saved_versions += ((input._vc, input._vc[0], input._data, (0, 1)),)
            node.check_versions_of(input)  # (also by the gradient's nodes under create_graph: recorded._still_checked)
            if node.derivative_from_result is not None and node.saved[0].__class__ is xp.ndarray:
                node.saved = (node.derivative_from_result(input._data, *node.params), *node.saved[1:])
            if node.derivative_from_result is not None and node.params[0] < 0:
                node.backward = _refuse_negative_slope  # (at backward, as PyTorch's elu_backward refuses)
            elif node.__class__ is _LEAKY_RELU and node.params[0] < 0:  # (leaky_relu_backward's refusal; ember's
                node.backward = _refuse_negative_leaky_slope  # f' is the input's, but PyTorch's reads the result)
        if (result_saved or second_form) and input.grad_fn is node:  # (not a view's CopySlices)
            shown_as(input, node.name()[:-1] + "1")
    return input
