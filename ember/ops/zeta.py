"""The Hurwitz zeta function zeta(x, q) = sum_{k >= 0} (k + q)^-x (``torch.special.zeta``), as PyTorch computes it
(Cephes' ``zeta``), vectorised in NumPy and in float64 (PyTorch's CPU kernel accumulates float32 in double too):

- x == 1: inf; x < 1: nan; q a non-positive integer: inf; q < 0 with a non-integer x: nan;
- the direct sum of (q + k)^-x, at least 10 terms and until q + k > 9, stopping early where a term falls below
  machine epsilon (1.1e-16) of the sum;
- then the Euler-Maclaurin tail: the integral (q + n)^(1-x) / (x - 1), half the last term, and up to 12
  Bernoulli-number corrections, stopping where a correction falls below epsilon of the sum.

Differentiable in q only, as PyTorch's: d/dq zeta(x, q) = -x zeta(x + 1, q); the derivative with respect to x is
PyTorch's NotImplementedError.
"""

from __future__ import annotations

from .. import _dtype
from .._backend import xp
from .._dtype import np_kind
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import Node, torch_named
from ..autograd.recorded import RecordedArray, is_recorded, value_of
from .elementwise import cast, promote

_MACHEP = 1.11022302462515654042e-16
# (2k)! / B_2k for k = 1..12, Cephes' table
_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
      -7.1661652561756670113e18)


def _zeta64(x, q):
    """zeta(x, q) for float64 arrays (broadcast together), elementwise as Cephes' scalar loop."""
    shape = xp.broadcast_shapes(xp.shape(x), xp.shape(q))
    first_dtype = xp.result_type(x, q)
    x, q = (a.astype(xp.float64).ravel() for a in xp.broadcast_arrays(x, q))
    out = xp.full(shape, xp.nan).ravel()
    # Cephes' order of cases (nan x passes the first two): x == 1, x < 1, q at a pole, q < 0 with x not integral
    out[x == 1] = xp.inf
    rest = ~(x == 1) & ~(x < 1)
    pole = (q <= 0) & (q == xp.floor(q))
    out[rest & pole] = xp.inf
    todo = xp.flatnonzero(rest & ~pole & ~((q <= 0) & (x != xp.floor(x))))
    with xp.errstate(all="ignore"):
        xs, a = x[todo], q[todo].copy()
        # (PyTorch's first term is pow of the operands' own dtype, float32 for float32, the rest in double)
        s = (a.astype(first_dtype) ** -xs.astype(first_dtype)).astype(xp.float64)
        b = xp.zeros_like(s)
        i = 0
        summing = xp.arange(todo.size)  # the positions of todo still in the direct sum
        while summing.size:
            i += 1
            a[summing] += 1
            b[summing] = a[summing] ** -xs[summing]
            s[summing] += b[summing]
            bs, ss = b[summing], s[summing]
            converged = (-_MACHEP * ss < bs) & (bs < _MACHEP * ss)
            out[todo[summing[converged]]] = ss[converged]
            summing = summing[~converged]
            if i >= 9:  # (Cephes: while i < 9 or a <= 9)
                summing = summing[a[summing] <= 9.0]
        tail = xp.flatnonzero(xp.isnan(out[todo]))  # (those the direct sum did not answer)
        xs, a, b, s = xs[tail], a[tail], b[tail], s[tail]
        w = a
        s = s + b * w / (xs - 1) - 0.5 * b
        fa, k = xp.ones_like(s), 0.0
        left = xp.ones(s.shape, bool)
        for coefficient in _A:
            fa = fa * (xs + k)
            b = b / w
            t = fa * b / coefficient
            s = xp.where(left, s + t, s)
            left &= ~(xp.abs(t / s) < _MACHEP)
            k += 1
            fa = fa * (xs + k)
            b = b / w
            k += 1
        out[todo[tail]] = s
    return out.reshape(shape)


@torch_named("SpecialZetaBackward0")
class Zeta(Node):
    diagonal_jacobian = True

    def forward(self, x, q):
        self.saved = (x, q)
        return _zeta64(x, q).astype(xp.result_type(x, q))

    def backward(self, g):
        x, q = self.saved
        if self.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        if is_recorded(q):  # create_graph: the derivative by this op, recorded (differentiable again in q)
            xt = Tensor._make(xp.asarray(value_of(x)))
            return None, g * RecordedArray(zeta(xt + 1, q.t) * -xt)
        return None, g * -x * _zeta64(x + 1, q).astype(g.dtype)


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function zeta(input, other) (a number may stand for either, not both), in the operands'
    promoted dtype, integer ones giving the default float dtype. PyTorch's CPU kernel has no float16 or bfloat16
    version (NotImplementedError)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"special_zeta() received an invalid combination of arguments - got "
                        f"({c_type_name(input)}, {c_type_name(other)}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Number self, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    x, q = promote(input, other)
    dtype = (x if isinstance(x, Tensor) else q).dtype
    if np_kind(dtype.np) in "iub":
        dtype = _dtype.get_default_dtype()
    elif dtype.itemsize == 2:
        raise _dtype.not_implemented_for("zeta_cpu", dtype)
    x, q = (cast(v, dtype) if isinstance(v, Tensor) else Tensor._make(xp.asarray(v, dtype.np)) for v in (x, q))
    return Zeta.apply(x, q)
