"""CPU time of single small ops and of the backward of a chain of them, for the ember found first on the path.

    PYTHONPATH=/tmp/before python bench/small_op_calls.py     # the code before (``git archive`` into a folder)
    PYTHONPATH=$PWD python bench/small_op_calls.py            # this checkout

Run the two alternately a few times and compare each line's least figure: separate processes, so a change to any
module (not only to one function, as ``func_ab.py`` swaps) is compared. Least µs of CPU time over 15 blocks
(20,000 calls; 300 for the chain, 5,000 for the Linear, 5,000 and 100 for the embedding lookups); the chain's backward
alone is the least of 300 single calls of wall clock. One JSON line: call -> µs. Nothing here is a test.
"""

from __future__ import annotations

import json
import os
import time
import timeit

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import ember  # noqa: E402 (after the thread counts are set)


def least(stmt: str, space: dict, number: int = 20000, repeat: int = 15) -> float:
    return min(timeit.repeat(stmt, globals=space, number=number, repeat=repeat, timer=time.process_time)) / number * 1e6


def main() -> None:
    x, y = ember.randn(4, 4, requires_grad=True), ember.randn(4, 4, requires_grad=True)
    a, b = ember.randn(4, 4), ember.randn(4, 4)

    def chain():  # 20 recorded ops of 4 x 4 tensors, y's gradient added twenty times
        t = x
        for _ in range(10):
            t = t + y
            t = t * y
        return t.sum()

    space = {"ember": ember, "x": x, "y": y, "a": a, "b": b, "chain": chain}
    calls = {"x + y": "x + y", "a + b": "a + b", "x * y": "x * y", "a * b": "a * b", "x.add(y)": "x.add(y)",
             "x.exp()": "x.exp()", "a.exp()": "a.exp()", "maximum(x, y)": "ember.maximum(x, y)",
             "x.add(y, alpha=2)": "x.add(y, alpha=2)", "x.mul(other=y)": "x.mul(other=y)",
             "a.addcmul_(b, b, value=0.5)": "a.addcmul_(b, b, value=0.5)", "a.sum(1)": "a.sum(1)",
             "a.sum(axis=1)": "a.sum(axis=1)"}
    out = {name: least(stmt, space) for name, stmt in calls.items()}
    out["chain of 20 and its backward"] = least("chain().backward()", space, number=300)
    out["the chain's backward alone"] = min(timeit.repeat("loss.backward()", setup="loss = chain()", globals=space,
                                                          number=1, repeat=300)) * 1e6
    # embedding lookups under no_grad: GPT inference's token lookup (64 of a 65-row table) and the embedding rows'
    # batch (256 x 32 of 50,000 rows; 100 calls a block)
    token, table = ember.nn.Embedding(65, 128), ember.nn.Embedding(50000, 128)
    space.update(token=token, table=table, tokens=ember.tensor([[i % 65 for i in range(64)]]),
                 batch=ember.tensor([[(i * 7919 + j) % 50000 for i in range(32)] for j in range(256)]))
    # a small Linear under no_grad (16 x 32 by 32 x 32: the module call and the op's Python, not the GEMM)
    space.update(layer=ember.nn.Linear(32, 32), rows=ember.randn(16, 32))
    with ember.no_grad():
        out["Linear(32, 32) of 16 x 32 (no_grad)"] = least("layer(rows)", space, number=5000)
        out["embedding of 1 x 64 (no_grad)"] = least("token(tokens)", space, number=5000)
        out["embedding of 256 x 32 from 50,000 rows (no_grad)"] = least("table(batch)", space, number=100)
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))


if __name__ == "__main__":
    main()
