"""The matrix products on integer and bool tensors as PyTorch's CPU kernels take them: beta and alpha truncated to
ints for the addmm family (addr refuses a float one), a complex one refused, and no bool kernel for the products
themselves (addr and outer, elementwise, have one)."""

from functools import partial

import pytest

import ember

torch = pytest.importorskip("torch")


def _cases(lib):
    M = lib.arange(4, dtype=lib.int64).reshape(2, 2)
    a = lib.arange(6, dtype=lib.int64).reshape(2, 3) - 2
    b = lib.arange(6, dtype=lib.int64).reshape(3, 2) + 1
    v = lib.tensor([1, -2, 3])
    return {
        "addmm": lambda: lib.addmm(M, a, b, beta=1.5, alpha=2.5),
        "addmm negative": lambda: lib.addmm(M, a, b, beta=-1.5, alpha=-0.5),
        "addmv": lambda: lib.addmv(M[0], a, v, alpha=2.5, beta=0.5),
        "baddbmm": lambda: lib.baddbmm(M[None], a[None], b[None], alpha=2.5),
        "addbmm": lambda: lib.addbmm(M, a[None], b[None], alpha=2.5, beta=-1.5),
        "addr float alpha": lambda: lib.addr(M, M[0], M[1], alpha=2.5),
        "addr float beta": lambda: lib.addr(M, M[0], M[1], beta=2.5),
        "addr ints": lambda: lib.addr(M, M[0], M[1], beta=2, alpha=3),
        "addmm complex alpha": lambda: lib.addmm(M, a, b, alpha=1j),
        "addmm bool": lambda: lib.addmm(M.bool(), a.bool(), b.bool()),
        "addmv bool": lambda: lib.addmv(M[0].bool(), a.bool(), v.bool()),
        "mm bool": lambda: lib.mm(a.bool(), b.bool()),
        "matmul bool": lambda: a.bool() @ b.bool(),
        "bmm bool": lambda: lib.bmm(a[None].bool(), b[None].bool()),
        "dot bool": lambda: lib.dot(v.bool(), v.bool()),
        "mv bool": lambda: lib.mv(a.bool(), v.bool()),
        "addr bool": lambda: lib.addr(M.bool(), M[0].bool(), M[1].bool()),
        "outer bool": lambda: lib.outer(v.bool(), v.bool()),
        "float addmm": lambda: lib.addmm(M.float(), a.float(), b.float(), beta=1.5, alpha=2.5),
    }


@pytest.mark.parametrize("case", sorted(_cases(torch)))
def test_integer_and_bool_products_as_pytorch(case):
    outcomes = []
    for lib in (torch, ember):
        try:
            r = _cases(lib)[case]()
            outcomes.append((str(r.dtype).split(".")[1], r.tolist()))
        except Exception as err:  # noqa: BLE001 (the type is compared)
            outcomes.append(type(err))
    assert outcomes[1] == outcomes[0]


_FAMILY = {  # each op with its operands' shapes
    "addmm": [(2, 2), (2, 3), (3, 2)],
    "addmv": [(2,), (2, 3), (3,)],
    "addr": [(2, 2), (2,), (2,)],
    "baddbmm": [(1, 2, 2), (1, 2, 3), (1, 3, 2)],
    "addbmm": [(2, 2), (1, 2, 3), (1, 3, 2)],
}


def _outcome(fn):
    try:
        r = fn()
    except Exception as err:  # noqa: BLE001 (the type and message are compared)
        return type(err), str(err).replace("torch", "ember")
    return str(r.dtype).split(".")[1], r.tolist()


@pytest.mark.parametrize("op", sorted(_FAMILY))
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int8", "int64", "bool", "complex64"])
@pytest.mark.parametrize("scalars", [{"alpha": 1j}, {"beta": 2j}, {"alpha": 1 + 0j}, {"beta": 2.5 + 0j, "alpha": -3 + 0j},
                                     {"beta": 2}, {"beta": 0, "alpha": -1}, {"beta": 2.5}, {"alpha": True},
                                     {"beta": False}])
def test_family_scalars_by_result_dtype(op, dt, scalars):
    # A complex beta or alpha with an imaginary part is refused for a result that is not complex (it made the
    # result complex), one without it taken as its real part (it was refused for integers); addr's float check and
    # bool results (its beta of 2 is True: the result was an int64) by its promoted dtype, bfloat16 a floating one
    # (its float beta was refused as for integers)
    def run(lib):
        operands = [lib.ones(*s, dtype=getattr(lib, dt)) * (1 if dt == "bool" else 0.5) for s in _FAMILY[op]]
        return _outcome(lambda: getattr(lib, op)(*operands, **scalars))

    assert run(ember) == run(torch)


def test_addr_scalars_by_promoted_result():
    cases = [lambda lib: lib.addr(lib.tensor([[True, False]]), lib.tensor([True]), lib.tensor([0, 1]), beta=2.5),
             lambda lib: lib.addr(lib.tensor([[1, 0]]), lib.tensor([True]), lib.tensor([0.5, 1.0]), beta=2.5),
             lambda lib: lib.addr(lib.tensor([[True, False]]), lib.tensor([True]), lib.tensor([0.5, 1.0]), beta=True),
             lambda lib: lib.addr(lib.tensor([[True, False]]), lib.tensor([True]), lib.tensor([False, True]), beta=3,
                                  alpha=0)]
    for case in cases:
        assert _outcome(partial(case, ember)) == _outcome(partial(case, torch))


@pytest.mark.parametrize("op", ["addmm", "addbmm", "baddbmm"])
@pytest.mark.parametrize("dts", [("float64", "float32", "float32"), ("float32", "float64", "float64"),
                                 ("float32", "float32", "float64"), ("float32", "float64", "float32"),
                                 ("float16", "float32", "float32"), ("float64", "float64", "float32")])
def test_family_dtype_mismatch_in_pytorchs_words(op, dts):
    # addmm/addbmm compare the input with mat2 first, then mat1 with mat2; baddbmm names the three dtypes where the
    # input's differs from batch1's (ember's own message was given, or matmul's m1/m2 one)
    def run(lib):
        operands = [lib.ones(*s, dtype=getattr(lib, d)) for s, d in zip(_FAMILY[op], dts)]
        return _outcome(lambda: getattr(lib, op)(*operands))

    assert run(ember) == run(torch)



def _product_with_scales(lib, op: str, dt: str, kw: dict):
    d = getattr(lib, dt)
    M, a, b, v = lib.ones(2, 2, dtype=d), lib.ones(2, 3, dtype=d), lib.ones(3, 2, dtype=d), lib.ones(2, dtype=d)
    if op == "addmm":
        return lib.addmm(M, a, b, **kw)
    if op == "addmv":
        return lib.addmv(v, a, lib.ones(3, dtype=d), **kw)
    if op == "addr":
        return lib.addr(M, v, v, **kw)
    if op == "baddbmm":
        return lib.baddbmm(M[None], a[None], b[None], **kw)
    if op == "addbmm":
        return lib.addbmm(M, a[None], b[None], **kw)
    return M.addmm_(a, b, **kw)


def _assert_scales_as_pytorch(op, dt, kw):
    """The product ``op`` on a ``dt`` result with the scales ``kw`` (a dict, or a function of the library giving
    one: scales that are the library's own tensors): ember's result (dtype, values) or RuntimeError message,
    PyTorch's."""
    outcomes = []
    for lib in (torch, ember):
        try:
            out = _product_with_scales(lib, op, dt, kw(lib) if callable(kw) else kw)
            outcomes.append((str(out.dtype).split(".")[-1], out.tolist()))
        except RuntimeError as err:
            outcomes.append(str(err))
    assert outcomes[1] == outcomes[0], kw


@pytest.mark.parametrize("scales", [
    {"beta": "tensor(2.)"}, {"alpha": "tensor(3)"}, {"beta": "tensor(True)"}, {"beta": "np.float64(0.5)"},
    {"alpha": "np.float64(2.5)", "beta": "np.int64(2)"}, {"beta": "np.complex128(2)"},
])
@pytest.mark.parametrize("op", ["addmm", "addmv", "addr", "baddbmm", "addbmm", "addmm_"])
@pytest.mark.parametrize("dt", ["float32", "int32"])
def test_scales_as_pytorchs_scalars(op, scales, dt):
    # PyTorch's Scalar: a 0-d tensor is its value, a NumPy scalar its Python number (an np.float64 beta kept a
    # float32 product float32 there; ember's result was float64, and a 0-d tensor was refused)
    import numpy as np

    _assert_scales_as_pytorch(op, dt, lambda lib: {k: eval(v, {"np": np, "tensor": lib.tensor})
                                                   for k, v in scales.items()})


@pytest.mark.parametrize("op", ["addmm", "addmv", "addr", "baddbmm", "addbmm"])
@pytest.mark.parametrize("dt,bits", [("uint8", 8), ("int8", 8), ("int16", 16), ("int32", 32), ("int64", 64)])
def test_integer_scales_at_the_edges_of_the_results_range_as_pytorch(op, dt, bits):
    # PyTorch's checked conversion of beta and alpha to an integer result: a negative value wraps into an unsigned
    # type while its magnitude fits (-1 -> 255, -255 -> 1; -256 refused: ember refused every negative one), one past
    # the range is refused naming the type as c10 does (int for int32: ember said int32_t)
    signed = dt != "uint8"
    top, bottom = (2 ** (bits - 1) - 1, -(2 ** (bits - 1))) if signed else (2 ** bits - 1, -(2 ** bits - 1))
    for kw in ({"alpha": top}, {"alpha": top + 1}, {"beta": bottom}, {"beta": bottom - 1}, {"alpha": -1},
               {"beta": -1, "alpha": bottom}):
        kw = {k: v for k, v in kw.items() if -(2 ** 63) <= v < 2 ** 64}  # (past them: the parser's own error)
        _assert_scales_as_pytorch(op, dt, kw)


@pytest.mark.parametrize("op", ["addmm", "addmv", "baddbmm", "addbmm"])
@pytest.mark.parametrize("dt", ["uint8", "int8"])
def test_float_scales_are_range_checked_before_truncation_as_pytorch(op, dt):
    # c10 checks a double against the integer type's range before truncating it: -0.5 and -1.5 overflow a uint8 and
    # 255.9 too, where an int -1 wraps to 255 (ember had wrapped int(-1.5) = -1); -128.5 and 127.9 overflow an int8
    values = (-0.5, -1.5, 255.9, 256.0, 2.7) if dt == "uint8" else (-128.5, 127.9, -128.0, 127.0, -1.5)
    for value in values:
        for kw in ({"alpha": value}, {"beta": value}):
            _assert_scales_as_pytorch(op, dt, kw)


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("batches", [0, 1, 2])
def test_addbmm_with_an_empty_result_reads_beta_as_pytorch(batches, dtype):
    """An empty result: PyTorch's addbmm returns before it reads beta or alpha once a batch runs (any scalar taken),
    and with no batch scales the input in place (``mul_(beta)``: a beta its dtype cannot hold refused)."""
    for beta in [0.5, 2, 300, True, 1j, 0]:
        for n, k, p in [(0, 3, 2), (2, 3, 0), (0, 0, 0), (2, 0, 0)]:
            outcomes = []
            for lib in (torch, ember):
                d = getattr(lib, dtype)
                try:
                    r = lib.addbmm(lib.zeros(n, p, dtype=d), lib.ones(batches, n, k, dtype=d),
                                   lib.ones(batches, k, p, dtype=d), beta=beta, alpha=2)
                    outcomes.append((str(r.dtype).split(".")[1], list(r.shape)))
                except Exception as err:  # noqa: BLE001 (the type is compared)
                    outcomes.append(type(err))
            assert outcomes[1] == outcomes[0], (beta, (n, k, p))


# each dimension of the result 0 in turn, the inner one not: (input, first operand, second operand)
_EMPTY_RESULTS = {"addmm": [[(0, 2), (0, 3), (3, 2)], [(2, 0), (2, 3), (3, 0)]],
                  "baddbmm": [[(0, 2, 2), (0, 2, 3), (0, 3, 2)], [(2, 0, 2), (2, 0, 3), (2, 3, 2)],
                              [(2, 2, 0), (2, 2, 3), (2, 3, 0)]],
                  "addmv": [[(0,), (0, 3), (3,)]]}


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
@pytest.mark.parametrize("op", sorted(_EMPTY_RESULTS))
def test_an_empty_result_reads_neither_scalar_as_pytorch(op, dtype):
    """An empty result of addmm, baddbmm and addmv, whichever of its dimensions is 0: PyTorch's kernels return
    before they read beta or alpha (any scalar taken: a float or complex one for an integer result)."""
    for beta, alpha in [(0.5, 2.5), (1j, 1), (300, 1j), (True, 0.5)]:
        for shapes in _EMPTY_RESULTS[op]:
            outcomes = []
            for lib in (torch, ember):
                d = getattr(lib, dtype)
                try:
                    r = getattr(lib, op)(*[lib.ones(s, dtype=d) for s in shapes], beta=beta, alpha=alpha)
                    outcomes.append((str(r.dtype).split(".")[1], list(r.shape)))
                except Exception as err:  # noqa: BLE001 (the type is compared)
                    outcomes.append(type(err))
            assert outcomes[1] == outcomes[0], (beta, alpha, shapes)
