"""Each refusal of the mutation-sampled ops (linalg, the normalisations, the class losses, the reductions, the
activations) beside the nearest call it lets through, against PyTorch: the refusal raises PyTorch's exception type
and, where ember words it as PyTorch does, its message; the call at the bound returns PyTorch's values. A check
whose comparison is off by one (``<`` for ``<=``), whose conditions are joined the wrong way or whose message
names the wrong operand fails one of the pair."""

import numpy as np
import pytest
from oracle import outcomes, to_np


def F(m):  # noqa: N802  (PyTorch's spelling)
    return m.nn.functional


def t(m, *shape, dtype=None):
    """A tensor of ``shape`` with distinct values of both signs (float64 unless given)."""
    return m.arange(float(np.prod(shape)), dtype=dtype or m.float64).reshape(shape) / 7 - 0.4


CASES = {
    # linalg.py
    "tensordot negative dims": lambda m: m.tensordot(t(m, 2, 3), t(m, 3, 2), dims=-1),
    "tensordot dims past ndim": lambda m: m.tensordot(t(m, 2, 3), t(m, 3, 2), dims=3),
    "tensordot dims = ndim": lambda m: m.tensordot(t(m, 2, 3), t(m, 2, 3), dims=2),
    "tensordot lists of two lengths": lambda m: m.tensordot(t(m, 2, 3), t(m, 3, 2), dims=([1, 0], [0])),
    "tensordot sizes differ": lambda m: m.tensordot(t(m, 2, 3), t(m, 2, 3), dims=([1], [0])),
    "mm 3-D": lambda m: m.mm(t(m, 2, 3, 4), t(m, 4, 5)),
    "mm 1-D": lambda m: m.mm(t(m, 3), t(m, 3, 5)),
    "bmm 2-D": lambda m: m.bmm(t(m, 3, 4), t(m, 4, 5)),
    "bmm batches": lambda m: m.bmm(t(m, 2, 3, 4), t(m, 3, 4, 5)),
    "mv of a vector": lambda m: m.mv(t(m, 3), t(m, 3)),
    "mv sizes": lambda m: m.mv(t(m, 2, 3), t(m, 4)),
    "addmv sizes": lambda m: m.addmv(t(m, 2), t(m, 2, 3), t(m, 4)),
    # (a matrix that is not square, and operands of distinct sizes: a message naming one size for another shows)
    "addmv input size": lambda m: m.addmv(t(m, 3), t(m, 2, 4), t(m, 4)),
    "addmv input size, no rows": lambda m: m.addmv(t(m, 5), t(m, 0, 4), t(m, 4)),
    "addmv input of one element ok": lambda m: m.addmv(t(m, 1), t(m, 2, 4), t(m, 4)),
    "addmv 0-d input ok": lambda m: m.addmv(m.tensor(0.5, dtype=m.float64), t(m, 2, 4), t(m, 4)),
    "addmv 2-D input": lambda m: m.addmv(t(m, 2, 1), t(m, 2, 4), t(m, 4)),
    "addmv 3-D matrix": lambda m: m.addmv(t(m, 2), t(m, 2, 4, 1), t(m, 4)),
    "addmv 2-D vector": lambda m: m.addmv(t(m, 2), t(m, 2, 4), t(m, 4, 1)),
    "addmv vector size": lambda m: m.addmv(t(m, 2), t(m, 2, 4), t(m, 3)),
    "mv of a 3-D matrix": lambda m: m.mv(t(m, 2, 4, 1), t(m, 4)),
    "mv sizes, not square": lambda m: m.mv(t(m, 2, 4), t(m, 3)),
    "outer of a 2-D vec2": lambda m: m.outer(t(m, 3), t(m, 2, 3)),
    "outer of a 0-d self": lambda m: m.outer(m.tensor(1.0, dtype=m.float64), t(m, 3)),
    "tensordot sizes differ, dims of two extents": lambda m: m.tensordot(t(m, 2, 3), t(m, 4, 3), dims=([0], [1])),
    "tensordot dims past the first's ndim": lambda m: m.tensordot(t(m, 2, 3), t(m, 3, 2, 4), dims=3),
    "matmul of a 0-d first": lambda m: m.matmul(m.tensor(1.0, dtype=m.float64), t(m, 3)),
    "matmul of a 0-d second": lambda m: m.matmul(t(m, 3), m.tensor(1.0, dtype=m.float64)),
    # (batches that do not broadcast: PyTorch's error first, before the inner sizes' and the dtypes')
    "matmul batches differ": lambda m: m.matmul(t(m, 2, 3, 4), t(m, 3, 4, 5)),
    "matmul batches differ, b requires grad": lambda m: m.matmul(t(m, 2, 3, 4), t(m, 3, 4, 5).requires_grad_()),
    "matmul batches differ, 4-D and 3-D": lambda m: m.matmul(t(m, 6, 2, 3, 4), t(m, 5, 4, 2)),
    "matmul batches differ, inner sizes too": lambda m: m.matmul(t(m, 2, 3, 4), t(m, 3, 5, 5)),
    "matmul batches differ, dtypes too": lambda m: m.matmul(t(m, 2, 3, 4), t(m, 3, 4, 5, dtype=m.float32)),
    "matmul batches broadcast ok": lambda m: m.matmul(t(m, 2, 1, 3, 4), t(m, 5, 4, 2)),
    # (the input's dtype named first, then the matrix's and the vector's)
    "addmv vector dtype": lambda m: m.addmv(t(m, 2), t(m, 2, 3), t(m, 3, dtype=m.float32)),
    "addmv input dtype": lambda m: m.addmv(t(m, 2, dtype=m.float32), t(m, 2, 3), t(m, 3)),
    "addmv matrix dtype": lambda m: m.addmv(t(m, 2), t(m, 2, 3, dtype=m.float32), t(m, 3)),
    "addmv input dtype, broadcast": lambda m: m.addmv(t(m, 1, dtype=m.float32), t(m, 2, 3), t(m, 3)),
    "mv dtypes": lambda m: m.mv(t(m, 2, 3, dtype=m.float32), t(m, 3)),
    "dot of 2-D": lambda m: m.dot(t(m, 2, 3), t(m, 2, 3)),
    "dot lengths": lambda m: m.dot(t(m, 3), t(m, 4)),
    "dot dtypes": lambda m: m.dot(t(m, 3), t(m, 3, dtype=m.float32)),
    "vdot lengths": lambda m: m.vdot(t(m, 3), t(m, 4)),
    "outer of 2-D": lambda m: m.outer(t(m, 2, 3), t(m, 3)),
    "ger of 2-D": lambda m: m.ger(t(m, 3), t(m, 2, 3)),
    "addr of 2-D": lambda m: m.addr(t(m, 3, 3), t(m, 3, 1), t(m, 3)),
    "addr dtypes": lambda m: m.addr(t(m, 3, 3), t(m, 3), t(m, 3, dtype=m.float32)),
    "addmm shapes": lambda m: m.addmm(t(m, 3, 3), t(m, 2, 3), t(m, 3, 2)),
    "addmm dtypes": lambda m: m.addmm(t(m, 2, 2), t(m, 2, 3), t(m, 3, 2, dtype=m.float32)),
    "matmul 0-d": lambda m: m.matmul(m.tensor(2.0), t(m, 3)),
    "matmul 1-D lengths": lambda m: m.matmul(t(m, 3), t(m, 4)),
    "baddbmm shapes": lambda m: m.baddbmm(t(m, 2, 3, 3), t(m, 2, 3, 4), t(m, 2, 4, 2)),
    "kron 0-d ok": lambda m: m.kron(m.tensor(2.0, dtype=m.float64), t(m, 2, 2)),
    "matmul of a list": lambda m: m.matmul(t(m, 2, 2), [[1.0, 0.0], [0.0, 1.0]]),
    "matmul 1-D by 2-D dtypes": lambda m: m.matmul(t(m, 3), t(m, 3, 2, dtype=m.float32)),
    "matmul 2-D by 1-D dtypes": lambda m: m.matmul(t(m, 2, 3), t(m, 3, dtype=m.float32)),
    "matmul 2-D dtypes": lambda m: m.matmul(t(m, 2, 3), t(m, 3, 2, dtype=m.float32)),
    "matmul 3-D dtypes": lambda m: m.matmul(t(m, 2, 2, 3), t(m, 2, 3, 2, dtype=m.float32)),
    "matmul 2-D by 3-D dtypes": lambda m: m.matmul(t(m, 2, 3), t(m, 2, 3, 2, dtype=m.float32)),
    "matmul 3-D by 2-D dtypes": lambda m: m.matmul(t(m, 2, 2, 3), t(m, 3, 2, dtype=m.float32)),
    "dot of 1-D and 2-D": lambda m: m.dot(t(m, 3), t(m, 3, 3)),
    "addr input float32 ok": lambda m: m.addr(t(m, 3, 3, dtype=m.float32), t(m, 3), t(m, 3)),
    "addmm input dtype": lambda m: m.addmm(t(m, 2, 2, dtype=m.float32), t(m, 2, 3), t(m, 3, 2)),
    "vdot of 2-D": lambda m: m.vdot(t(m, 2, 2), t(m, 2, 2)),
    "vdot of 1-D and 2-D": lambda m: m.vdot(t(m, 4), t(m, 2, 2)),
    "tensordot dims 0 ok": lambda m: m.tensordot(t(m, 2), t(m, 3), dims=0),
    "tensordot dims past one ndim": lambda m: m.tensordot(t(m, 2, 3, 2), t(m, 3, 2), dims=3),
    "matmul 3-D by 1-D dtypes": lambda m: m.matmul(t(m, 2, 2, 3), t(m, 3, dtype=m.float32)),
    "matmul 1-D by 3-D dtypes": lambda m: m.matmul(t(m, 3), t(m, 2, 3, 2, dtype=m.float32)),
    # norm.py
    "batch_norm one value per channel": lambda m: F(m).batch_norm(t(m, 1, 4), None, None, training=True),
    "batch_norm two values per channel ok": lambda m: F(m).batch_norm(t(m, 2, 4), None, None, training=True),
    "batch_norm running_var alone": lambda m: F(m).batch_norm(t(m, 2, 4), None, m.ones(4, dtype=m.float64), training=True),
    "batch_norm eval without stats": lambda m: F(m).batch_norm(t(m, 2, 4), None, None, training=False),
    "group_norm 1-D": lambda m: F(m).group_norm(t(m, 4), 2),
    "group_norm one value per group": lambda m: F(m).group_norm(t(m, 1, 2), 2),
    "group_norm one value per group (1, 4, 1)": lambda m: F(m).group_norm(t(m, 1, 4, 1), 4),
    "group_norm two values per group ok": lambda m: F(m).group_norm(t(m, 1, 4), 2),
    "group_norm channels not divisible": lambda m: F(m).group_norm(t(m, 2, 6, 2), 4),
    "instance_norm no stats": lambda m: F(m).instance_norm(t(m, 2, 3, 4), use_input_stats=False),
    "instance_norm one value": lambda m: F(m).instance_norm(t(m, 2, 3, 1)),
    "instance_norm two values ok": lambda m: F(m).instance_norm(t(m, 2, 3, 2)),
    "layer_norm shape": lambda m: F(m).layer_norm(t(m, 2, 3), (4,)),
    "layer_norm weight shape": lambda m: F(m).layer_norm(t(m, 2, 3), (3,), m.ones(4, dtype=m.float64)),
    "layer_norm bias shape": lambda m: F(m).layer_norm(t(m, 2, 3), (3,), None, m.ones(2, dtype=m.float64)),
    "layer_norm with a bias alone ok": lambda m: F(m).layer_norm(t(m, 2, 3), (3,), None, m.ones(3, dtype=m.float64) / 2),
    "layer_norm with a weight alone ok": lambda m: F(m).layer_norm(t(m, 2, 3), (3,), m.ones(3, dtype=m.float64) * 2),
    "rms_norm shape": lambda m: F(m).rms_norm(t(m, 2, 3), (2,)),
    "layer_norm float64 weight": lambda m: F(m).layer_norm(t(m, 2, 3, dtype=m.float32), (3,), m.ones(3, dtype=m.float64)),
    "layer_norm float64 bias": lambda m: F(m).layer_norm(t(m, 2, 3, dtype=m.float32), (3,), m.ones(3), m.ones(3, dtype=m.float64)),
    "batch_norm bfloat16 weight": lambda m: F(m).batch_norm(t(m, 2, 4, dtype=m.float32), None, None, m.ones(4, dtype=m.bfloat16), training=True),
    "layer_norm float16 input, float32 weight ok": lambda m: F(m).layer_norm(t(m, 2, 4, dtype=m.float16), (4,), m.ones(4) * 2),
    "layer_norm float32 input, float16 weight": lambda m: F(m).layer_norm(t(m, 2, 3, dtype=m.float32), (3,), m.ones(3, dtype=m.float16)),
    "layer_norm float64 input, float32 weight": lambda m: F(m).layer_norm(t(m, 2, 3), (3,), m.ones(3)),
    "layer_norm float16 input, float32 and float16": lambda m: F(m).layer_norm(t(m, 2, 3, dtype=m.float16), (3,), m.ones(3), m.ones(3, dtype=m.float16)),
    "layer_norm input of fewer dims": lambda m: F(m).layer_norm(t(m, 3), (2, 3)),
    "layer_norm of as many dims as normalized_shape ok": lambda m: F(m).layer_norm(t(m, 3), (3,)),
    "rms_norm of int": lambda m: F(m).rms_norm(m.arange(6).reshape(2, 3), (3,)),
    "group_norm (1, 4, 2) in 2 groups ok": lambda m: F(m).group_norm(t(m, 1, 4, 2), 2),
    "group_norm (1, 2, 2) in 2 groups ok": lambda m: F(m).group_norm(t(m, 1, 2, 2), 2),
    "instance_norm 1-D": lambda m: F(m).instance_norm(t(m, 4), m.zeros(4, dtype=m.float64), m.ones(4, dtype=m.float64), use_input_stats=False),
    "instance_norm 2-D with running stats ok": lambda m: F(m).instance_norm(t(m, 2, 3), m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64), use_input_stats=False),
    "instance_norm running_var alone": lambda m: F(m).instance_norm(t(m, 2, 3, 4), None, m.ones(3, dtype=m.float64), use_input_stats=False),
    "instance_norm running_mean alone": lambda m: F(m).instance_norm(t(m, 2, 3, 4), m.zeros(3, dtype=m.float64), None, use_input_stats=False),
    "instance_norm weight size": lambda m: F(m).instance_norm(t(m, 2, 3, 4), weight=m.ones(4, dtype=m.float64)),
    "instance_norm weight ok": lambda m: F(m).instance_norm(t(m, 2, 3, 4), weight=m.ones(3, dtype=m.float64) * 2),
    "local_response_norm 2-D": lambda m: F(m).local_response_norm(t(m, 2, 3), 2),
    "local_response_norm 3-D ok": lambda m: F(m).local_response_norm(t(m, 2, 3, 2), 2),
    # classification.py
    "cross_entropy weight size": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 1]), weight=m.ones(4, dtype=m.float64)),
    "cross_entropy batch sizes": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 1, 2])),
    "cross_entropy target shape": lambda m: F(m).cross_entropy(t(m, 2, 3, 4), m.zeros(2, 3, dtype=m.long)),
    "cross_entropy float target indices": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0.0, 1.0], dtype=m.float64)),
    "cross_entropy int32 target": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 1], dtype=m.int32)),
    "cross_entropy class past C": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 3])),
    "cross_entropy negative class": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, -1])),
    "cross_entropy class C-1 ok": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 2])),
    "cross_entropy label_smoothing > 1": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 2]), label_smoothing=1.5),
    "cross_entropy label_smoothing < 0": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 2]), label_smoothing=-0.1),
    "cross_entropy label_smoothing 1 ok": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 2]), label_smoothing=1.0),
    "cross_entropy label_smoothing 0 ok": lambda m: F(m).cross_entropy(t(m, 2, 3), m.tensor([0, 2]), label_smoothing=0.0),
    "cross_entropy soft int target": lambda m: F(m).cross_entropy(t(m, 2, 3), m.zeros(2, 3, dtype=m.long)),
    "nll 1-D input, 2-D target": lambda m: F(m).nll_loss(t(m, 3), m.zeros(1, 1, dtype=m.long)),
    "nll 1-D input, two targets": lambda m: F(m).nll_loss(t(m, 3), m.zeros(2, dtype=m.long)),
    "nll 1-D input, one target ok": lambda m: F(m).nll_loss(t(m, 3), m.zeros(1, dtype=m.long)),
    "nll weight dtype": lambda m: F(m).nll_loss(t(m, 2, 3), m.tensor([0, 1]), weight=m.ones(3)),
    "nll float target": lambda m: F(m).nll_loss(t(m, 2, 3), m.tensor([0.0, 1.0])),
    "nll uint8 target ok": lambda m: F(m).nll_loss(t(m, 2, 3), m.tensor([0, 1], dtype=m.uint8)),
    "nll target of shape (N, 1)": lambda m: F(m).nll_loss(t(m, 2, 3), m.zeros(2, 1, dtype=m.long)),
    # reduction.py
    "max of empty": lambda m: m.zeros(0).max(),
    "min of empty": lambda m: m.zeros(0, 3).min(),
    "max of one ok": lambda m: m.ones(1).max(),
    "amax of empty dim": lambda m: m.zeros(0, 3).amax(0),
    "amax of empty other dim ok": lambda m: m.zeros(0, 3).amax(1),
    "argmax of empty": lambda m: m.zeros(0).argmax(),
    "argmax of bool": lambda m: m.ones(3, dtype=m.bool).argmax(),
    "std of int": lambda m: m.arange(3).std(),
    "var of bool": lambda m: m.ones(3, dtype=m.bool).var(),
    "vector_norm of int": lambda m: m.linalg.vector_norm(m.arange(3)),
    "norm of int": lambda m: m.arange(3).norm(),
    "mean of int": lambda m: m.arange(3).mean(),
    "logsumexp of empty ok": lambda m: m.zeros(0, 2).logsumexp(0),
    "cumsum out of dim": lambda m: m.zeros(2, 3).cumsum(2),
    "sum dim out of range": lambda m: m.zeros(2, 3).sum(2),
    "sum dim -3": lambda m: m.zeros(2, 3).sum(-3),
    "sum dim -2 ok": lambda m: m.zeros(2, 3).sum(-2),
    "prod of bool dtype ok": lambda m: m.ones(3, dtype=m.bool).prod(),
    "mean dtype int": lambda m: m.ones(3).mean(dtype=m.int64),
    "max complex": lambda m: m.ones(3, dtype=m.complex64).max(),
    "aminmax of empty": lambda m: m.aminmax(m.zeros(0)),
    "cumsum dtype bool": lambda m: m.ones(3).cumsum(0, dtype=m.bool),
    "cumsum dtype int64 ok": lambda m: m.ones(3).cumsum(0, dtype=m.int64),
    "sum of a repeated dim": lambda m: m.zeros(2, 3).sum((0, 0)),
    "sum over two dims ok": lambda m: t(m, 2, 3).sum((1, 0)),
    # activation.py
    "hardtanh min > max": lambda m: F(m).hardtanh(t(m, 3), 1.0, -1.0),
    "hardtanh min = max ok": lambda m: F(m).hardtanh(t(m, 3), 0.5, 0.5),
    "gelu approximate": lambda m: F(m).gelu(t(m, 3), approximate="erf"),
    "hardtanh uint8 negative": lambda m: F(m).hardtanh(m.arange(3, dtype=m.uint8), -1, 1),
    "hardtanh uint8 zero ok": lambda m: F(m).hardtanh(m.arange(3, dtype=m.uint8), 0, 1),
    "elu of bool": lambda m: F(m).elu(m.ones(3, dtype=m.bool)),
    "softplus of int": lambda m: F(m).softplus(m.arange(3)),
    "glu odd": lambda m: F(m).glu(t(m, 3)),
    "glu 0-d": lambda m: F(m).glu(m.tensor(1.0)),
    "prelu weight size": lambda m: F(m).prelu(t(m, 2, 3), m.ones(2, dtype=m.float64)),
    "softmax dim": lambda m: F(m).softmax(t(m, 2, 3), 2),
    "threshold of bool": lambda m: F(m).threshold(m.ones(3, dtype=m.bool), 0.5, 0.0),
    "leaky_relu of bool": lambda m: F(m).leaky_relu(m.ones(3, dtype=m.bool)),
    "rrelu lower > upper": lambda m: F(m).rrelu(t(m, 3), 0.5, 0.1),
    "hardtanh uint8 max 0 ok": lambda m: F(m).hardtanh(m.arange(3, dtype=m.uint8), 0, 0),
    "hardtanh uint8 negative max": lambda m: F(m).hardtanh(m.arange(3, dtype=m.uint8), -2, -1),
}

# ember words these refusals its own way (naming the op, the shapes or the fix): only the type is compared
REWORDED = {
    "mm 3-D", "mm 1-D", "bmm 2-D", "bmm batches", "dot lengths", "vdot lengths", "addr of 2-D", "addmm shapes",
    "addmm dtypes", "matmul 1-D lengths", "baddbmm shapes", "batch_norm one value per channel", "group_norm 1-D",
    "instance_norm one value", "layer_norm weight shape", "layer_norm bias shape", "rms_norm shape",
    "cross_entropy target shape", "cross_entropy float target indices", "cross_entropy int32 target",
    "cross_entropy class past C", "cross_entropy negative class", "cross_entropy soft int target", "nll float target",
    "std of int", "var of bool", "vector_norm of int", "norm of int", "mean of int", "mean dtype int", "max complex",
    "hardtanh min > max", "gelu approximate", "matmul of a list", "addmm input dtype", "instance_norm weight size",
    "local_response_norm 2-D", "nll target of shape (N, 1)",
}


def _builtin(error: type) -> type:
    return next(b for b in type(error).__mro__ if b.__module__ == "builtins")


@pytest.mark.parametrize("name", list(CASES))
def test_a_refusal_and_the_call_at_its_bound_as_pytorchs(name):
    (got, got_warnings), (want, want_warnings) = outcomes(CASES[name])
    assert [c for c, _ in got_warnings] == [c for c, _ in want_warnings]
    if isinstance(want, Exception):
        assert isinstance(got, _builtin(want)), f"ember gave {got!r}; PyTorch raised {want!r}"
        if name not in REWORDED:
            assert str(got).split("\n")[0] == str(want).split("\n")[0]
        return
    assert not isinstance(got, Exception), f"ember raised {got!r}; PyTorch returned {want!r}"
    for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=1e-12, atol=1e-12, err_msg=name, strict=True)
