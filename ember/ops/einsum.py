"""einsum: Einstein summation over the operands' labelled dimensions.

The equation is first made explicit (every ``...`` replaced by letters of its own, right-aligned as
broadcasting aligns dimensions; the implicit output is the ellipsis then the letters used once, in
alphabetical order). The gradient of each operand is itself an einsum: the upstream gradient
contracted with the other operands onto the operand's letters; a letter only that operand has
(summed away) is broadcast back, and a repeated letter (a diagonal) is written back onto the diagonal.
"""

from __future__ import annotations

import operator

from .._autocast import lower_precision
from .._backend import xp
from .._dtype import SCALAR_TYPE_NAMES, not_implemented_for
from .._dtype import int64 as _dtype_int64
from .._size import c_type_name
from .._tensor import Tensor
from ..autograd.graph import Node
from .elementwise import cast, conj_if_complex
from .shape import expand


class Einsum(Node):
    float32_compute = True

    def forward(self, *arrays, inputs, output):
        self.saved, self.inputs, self.output = arrays, inputs, output
        # each operand is read for the others' gradients (its own reads only its shape)
        self.saved_for = tuple(tuple(j for j in range(len(arrays)) if j != k) for k in range(len(arrays)))
        return xp.einsum(",".join(inputs) + "->" + output, *arrays)

    def backward(self, g):
        arrays, inputs = self.saved, self.inputs
        sizes = {c: n for subs, a in zip(inputs, arrays) for c, n in zip(subs, a.shape)}
        grads = []
        for k, (subs, a) in enumerate(zip(inputs, arrays)):
            if not self.needs_input_grad[k]:
                grads.append(None)
                continue
            others = [(s, b) for j, (s, b) in enumerate(zip(inputs, arrays)) if j != k]
            known = set(self.output).union(*(set(s) for s, _ in others))
            letters = list(dict.fromkeys(subs))  # each letter once, in order
            reached = "".join(c for c in letters if c in known)
            grad = xp.einsum(",".join([self.output] + [s for s, _ in others]) + "->" + reached,
                             g, *[conj_if_complex(b) for _, b in others])  # complex: the others' conjugates
            # letters only this operand has were summed away: each of their positions got the same gradient
            grad = grad.reshape([sizes[c] if c in known else 1 for c in letters])
            grad = xp.broadcast_to(grad, [sizes[c] for c in letters])
            if len(letters) != len(subs):  # a repeated letter: write back onto the diagonal
                full = xp.zeros_like(g, shape=a.shape)
                grid = dict(zip(letters, xp.ix_(*[xp.arange(sizes[c]) for c in letters])))
                full[tuple(grid[c] for c in subs)] = grad
                grad = full
            grads.append(grad)
        return tuple(grads)


def _explicit(equation: str, shapes: list) -> tuple[list, str]:
    """(input subscripts, output subscripts) with letters only: ellipses expanded, implicit output made explicit."""
    import string  # (here: its Template class compiles a pattern, which ``import ember`` need not pay)

    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise RuntimeError(
            f"einsum(): {len(shapes)} operands were given but the equation {equation!r} names {len(inputs)}"
        )
    for subs in inputs + [rhs]:
        bad = [c for c in subs.replace("...", "") if c not in string.ascii_letters]
        if bad:
            raise RuntimeError(f"einsum(): invalid subscript {bad[0]!r} in equation {equation!r}; "
                               "subscripts must be letters (a-z, A-Z)")
    unused = [c for c in string.ascii_letters if c not in eq]
    n_ell = 0
    for subs, shape in zip(inputs, shapes):
        named = len(subs.replace("...", ""))
        if "..." in subs:
            n_ell = max(n_ell, len(shape) - named)
        elif named != len(shape):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match the number "
                f"of dimensions ({len(shape)}) for operand {inputs.index(subs)} and no ellipsis was given"
            )
    ell = "".join(unused[:n_ell])
    expanded = []
    for subs, shape in zip(inputs, shapes):
        if "..." in subs:
            n = len(shape) - len(subs.replace("...", ""))
            subs = subs.replace("...", ell[len(ell) - n:] if n else "")
        expanded.append(subs)
    if arrow:
        output = rhs.replace("...", ell)
    else:
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        output = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    for c in output:
        if output.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
        if not any(c in s for s in expanded):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
    return expanded, output


def _sublist_letters(sublist) -> str:
    """The subscripts of one sublist: 0-25 are A-Z, 26-51 are a-z and ``Ellipsis`` is ``...``, as in PyTorch."""
    letters = []
    for n in sublist:
        if n is Ellipsis:
            letters.append("...")
            continue
        n = operator.index(n)  # (any integer: a NumPy one too, as PyTorch's arithmetic on it accepts)
        if not 0 <= n < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        letters.append(chr(ord("A") + n) if n < 26 else chr(ord("a") + n - 26))
    return "".join(letters)


def _pairwise_dtype(inputs: list, output: str, operands, sizes: dict):
    """The dtype of PyTorch's einsum of operands of several dtypes, or of integers: it contracts them left to right,
    in pairs. A letter only one operand has (and the output has not) is first summed away on that operand (``sum``:
    an integer or bool operand becomes int64). A pair that shares no letter summed there (or only letters of size
    1) is multiplied, promoting (float32 by float64 is float64); a pair that sums a letter is a bmm, which takes
    one dtype (PyTorch's "expected scalar type Float but found Double", naming the left then the right) and has no
    bool kernel, and, with no element, gives zeros of the right operand's dtype."""
    from .._dtype import promote_types

    counts: dict[str, int] = {}
    for subs in inputs:
        for c in set(subs):
            counts[c] = counts.get(c, 0) + 1
    last = {c: k for k, subs in enumerate(inputs) for c in subs}

    def own(k: int):  # operand k's dtype after its own sums
        d = operands[k].dtype
        if d.is_floating_point or d.is_complex or not any(counts[c] == 1 and c not in output for c in inputs[k]):
            return d
        return _dtype_int64

    result, seen, empty = own(0), set(inputs[0]), not operands[0]._data.size
    for k in range(1, len(operands)):
        d, subs = own(k), set(inputs[k])
        if not any(c in seen and c not in output and last[c] == k and sizes[c] != 1 for c in subs):
            result = promote_types(result, d)  # (a product)
        elif empty or not operands[k]._data.size:
            result = d
        elif result != d:
            raise RuntimeError(f"expected scalar type {SCALAR_TYPE_NAMES[result.name]} but found "
                               f"{SCALAR_TYPE_NAMES[d.name]}")
        elif d.name == "bool":
            raise not_implemented_for("bmm", d)
        seen |= subs
        empty = empty or not operands[k]._data.size
    return result


@lower_precision
def einsum(*args) -> Tensor:
    """Einstein summation, e.g. ``einsum("bij,bjk->bik", a, b)`` (batched matmul), ``einsum("ii", a)``
    (trace), ``einsum("...ij->...ji", a)``. Operands may also come as one list, or in the sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (integers 0-51 and ``...`` as subscripts, an optional output
    sublist last). Operands of several dtypes, and integer ones, give PyTorch's dtype or its error
    (``_pairwise_dtype``)."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):  # the sublist form: operand, subscripts, operand, subscripts, ..., [output]
        equation = ",".join(_sublist_letters(s) for s in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + _sublist_letters(args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {c_type_name(t)}")
    inputs, output = _explicit(equation, [t._data.shape for t in operands])
    sizes: dict[str, int] = {}
    for k, (subs, t) in enumerate(zip(inputs, operands)):
        seen: dict[str, int] = {}
        for c, n in zip(subs, t._data.shape):
            if seen.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't match, "
                                   f"{seen[c]} != {n}")
            if c not in sizes or sizes[c] == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
    first = operands[0]._data.dtype
    if any(t._data.dtype != first for t in operands) or first.kind in "biu":
        # the dtype PyTorch's contractions give (or their error); every operand computed in it
        result = _pairwise_dtype(inputs, output, operands, sizes)
        operands = [t if t.dtype == result else cast(t, result) for t in operands]
    # a size-1 dimension broadcasts against the letter's size elsewhere, as in PyTorch
    operands = [t if all(n == sizes[c] for c, n in zip(subs, t._data.shape))
                else expand(t, [sizes[c] for c in subs]) for subs, t in zip(inputs, operands)]
    return Einsum.apply(*operands, inputs=inputs, output=output)
