"""The matrix products on integer and bool tensors as PyTorch's CPU kernels take them: beta and alpha truncated to
ints for the addmm family (addr refuses a float one), a complex one refused, and no bool kernel for the products
themselves (addr and outer, elementwise, have one)."""

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
