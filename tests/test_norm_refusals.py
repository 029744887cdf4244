"""Each normalisation's refusals against PyTorch's, at their edges: the error type and message for parameters of
the wrong size, dtype or number, inputs too small to normalise and inputs of a dtype PyTorch's kernels are not built
for (integer, bool, complex), and the smallest inputs that are accepted, whose values match."""

import numpy as np
import pytest
import torch

import ember


def _cases(m):
    F = m.nn.functional

    def o(*shape, dt=None):
        return m.ones(*shape, dtype=m.float32 if dt is None else getattr(m, dt))

    return {
        # batch_norm: each parameter's size, the running statistics given together, the batch per channel, dtypes
        "bn weight size": lambda: F.batch_norm(o(2, 3), None, None, o(4), training=True),
        # a weight or bias of C elements in another shape is taken as its values; 2-D running statistics are not
        "bn (1, C) weight": lambda: F.batch_norm(m.linspace(-1, 2, 12).reshape(4, 3), None, None,
                                                 m.arange(3.0).reshape(1, 3), o(3, 1), training=True),
        "bn (C, 1, 1) weight, eval": lambda: F.batch_norm(m.linspace(-1, 2, 12).reshape(2, 3, 2), o(3), o(3) * 2,
                                                          m.arange(3.0).reshape(3, 1, 1)),
        "bn 0-d weight of one channel": lambda: F.batch_norm(m.tensor([[0.5], [2.0]]), None, None,
                                                             m.tensor(2.0), training=True),
        "bn 0-d weight of three channels": lambda: F.batch_norm(o(2, 3), None, None, m.tensor(2.0), training=True),
        "bn (1, C) running_mean": lambda: F.batch_norm(o(2, 3), o(1, 3), o(3)),
        "bn (C, 1) running_var, training": lambda: F.batch_norm(o(2, 3), o(3), o(3, 1), training=True),
        "bn running_mean size": lambda: F.batch_norm(o(2, 3), o(2), o(3)),
        # an empty 1-D input: PyTorch's kernel returns it (times weight[0], plus bias[0]) before it reads channels
        "bn empty 1-D, training": lambda: F.batch_norm(o(0), None, None, training=True),
        "bn empty 1-D, eval without statistics": lambda: F.batch_norm(o(0), None, None),
        "bn empty 1-D, weight and bias": lambda: F.batch_norm(o(0), o(3), o(3), o(3), o(3), training=True),
        "bn bias size": lambda: F.batch_norm(o(2, 3), None, None, None, o(2), training=True),
        "bn running_var size": lambda: F.batch_norm(o(2, 3), o(3), o(2)),
        "bn only running_mean, training": lambda: F.batch_norm(o(2, 3), o(3), None, training=True),
        "bn only running_var, training": lambda: F.batch_norm(o(2, 3), None, o(3), training=True),
        "bn only running_mean, eval": lambda: F.batch_norm(o(2, 3), o(3), None),
        "bn only running_var, eval": lambda: F.batch_norm(o(2, 3), None, o(3)),
        "bn one value per channel": lambda: F.batch_norm(o(1, 3), None, None, training=True),
        "bn one value per channel, 3-D": lambda: F.batch_norm(o(1, 3, 1), None, None, training=True),
        "bn two values per channel": lambda: F.batch_norm(o(1, 3, 2), None, None, training=True),
        "bn one value, eval": lambda: F.batch_norm(o(1, 3), o(3), o(3)),
        # eps: positive in training, non-negative in eval (0 is its edge in each)
        "bn eps 0, training": lambda: F.batch_norm(o(2, 3), None, None, training=True, eps=0.0),
        "bn eps 0, eval": lambda: F.batch_norm(m.linspace(-1, 2, 6).reshape(2, 3), o(3) * 0.5, o(3) * 2, eps=0.0),
        "bn eps below 0, eval": lambda: F.batch_norm(o(2, 3), o(3), o(3), eps=-1e-5),
        "bn float64 input, float32 weight": lambda: F.batch_norm(o(2, 3, dt="float64"), None, None, o(3),
                                                                 training=True),
        "bn float32 weight, float64 bias": lambda: F.batch_norm(o(2, 3), None, None, o(3), o(3, dt="float64"),
                                                                training=True),
        "bn float16 input, float64 weight": lambda: F.batch_norm(o(2, 3, dt="float16"), None, None,
                                                                 o(3, dt="float64"), training=True),
        "bn float32 input, float16 weight": lambda: F.batch_norm(o(2, 3), None, None, o(3, dt="float16"),
                                                                 training=True),
        "bn float64 input, float16 statistics": lambda: F.batch_norm(o(2, 3, dt="float64"), o(3, dt="float16"),
                                                                     o(3, dt="float16")),
        "bn bfloat16 input, float32 parameters": lambda: F.batch_norm(o(2, 3, dt="bfloat16"), o(3), o(3), o(3),
                                                                      o(3)),
        # layer_norm and rms_norm: normalized_shape's form and extent, the parameters' shapes and dtypes
        "ln int shape": lambda: F.layer_norm(o(2, 3), 3),
        "ln wrong trailing dims": lambda: F.layer_norm(o(2, 3), (2,)),
        "ln shape longer than the input": lambda: F.layer_norm(o(3), (2, 3)),
        "ln weight shape": lambda: F.layer_norm(o(2, 3), (3,), o(2)),
        "ln bias shape": lambda: F.layer_norm(o(2, 3), (3,), None, o(1, 3)),
        "ln whole input": lambda: F.layer_norm(o(2, 3), (2, 3)),
        "ln float64 weight": lambda: F.layer_norm(o(2, 3), (3,), o(3, dt="float64")),
        "ln float16 input, float64 weight": lambda: F.layer_norm(o(2, 3, dt="float16"), (3,), o(3, dt="float64")),
        "ln float32 input, float16 weight": lambda: F.layer_norm(o(2, 3), (3,), o(3, dt="float16")),
        "rms weight shape": lambda: F.rms_norm(o(2, 3), (3,), o(2)),
        "rms int shape": lambda: F.rms_norm(o(2, 3), 3),
        # group_norm: the input's dims, the values per group, the groups dividing the channels, the parameters
        "gn 1-D": lambda: F.group_norm(o(3), 1),
        "gn 0-d": lambda: F.group_norm(m.tensor(1.0), 1),
        "gn one value per group": lambda: F.group_norm(o(1, 2), 2),
        "gn two values per group": lambda: F.group_norm(o(1, 4), 2),
        "gn one value per group, spatial": lambda: F.group_norm(o(1, 1, 1), 1),
        "gn channels not divisible": lambda: F.group_norm(o(2, 5), 2),
        "gn weight size": lambda: F.group_norm(o(2, 4), 2, o(3)),
        "gn 2-D weight": lambda: F.group_norm(o(2, 4), 2, o(1, 4)),
        "gn bias size": lambda: F.group_norm(o(2, 4), 2, None, o(5)),
        "gn bias size beside a weight": lambda: F.group_norm(o(2, 4), 2, o(4), o(5)),
        "gn float64 weight": lambda: F.group_norm(o(2, 4), 2, o(4, dt="float64")),
        "gn float16 weight, float32 bias": lambda: F.group_norm(o(2, 4, dt="float16"), 2, o(4, dt="float16"), o(4)),
        # instance_norm: the spatial elements in training, the dims it reads, the running statistics, the sizes
        "in one spatial element, training": lambda: F.instance_norm(o(2, 3, 1)),
        "in two spatial elements, training": lambda: F.instance_norm(o(2, 3, 2)),
        "in 2-D, training": lambda: F.instance_norm(o(2, 3)),
        "in 2-D, eval": lambda: F.instance_norm(o(2, 3), o(3), o(3), use_input_stats=False),
        "in 1-D, eval": lambda: F.instance_norm(o(3), o(3), o(3), use_input_stats=False),
        "in 0-d, eval": lambda: F.instance_norm(m.tensor(1.0), o(1), o(1), use_input_stats=False),
        "in 1-D, training": lambda: F.instance_norm(o(3)),
        "in eval without statistics": lambda: F.instance_norm(o(2, 3, 4), use_input_stats=False),
        "in eval without running_var": lambda: F.instance_norm(o(2, 3, 4), o(3), use_input_stats=False),
        "in weight size": lambda: F.instance_norm(o(2, 3, 4), None, None, o(2)),
        "in bias size": lambda: F.instance_norm(o(2, 3, 4), None, None, None, o(4)),
        "in running_mean size": lambda: F.instance_norm(o(2, 3, 4), o(2), o(3)),
        "in running_var size": lambda: F.instance_norm(o(2, 3, 4), o(3), o(2)),
        "in (1, C) weight": lambda: F.instance_norm(o(2, 3, 4), None, None, o(1, 3)),
        "in (1, C) running_mean": lambda: F.instance_norm(o(2, 3, 4), o(1, 3), o(3)),
        "lrn 3-D": lambda: F.local_response_norm(o(2, 3, 2), 2),
    }


def _outcome(m, case):
    try:
        return "ran", _cases(m)[case]()
    except Exception as e:  # noqa: BLE001 (PyTorch's error of any type is the expectation)
        return type(e).__name__, str(e).replace("torch.", "ember.")


@pytest.mark.parametrize("case", list(_cases(torch)))
def test_norm_refusals_and_smallest_accepted_inputs_are_pytorchs(case):
    want, got = _outcome(torch, case), _outcome(ember, case)
    assert got[0] == want[0], (got, want)
    if want[0] == "ran":
        assert str(got[1].dtype).split(".")[-1] == str(want[1].dtype).split(".")[-1]
        np.testing.assert_allclose(got[1].float().numpy(), want[1].float().numpy(), rtol=1e-5, atol=1e-6)
    else:
        assert want[1] in got[1]


_NON_FLOATING = ["int64", "uint8", "bool", "complex64"]


def _non_floating_cases(m, dt):
    F = m.nn.functional
    like, f32 = getattr(m, dt), m.float32

    def o(*shape, dtype=like):
        return m.ones(*shape, dtype=dtype)

    return {
        "layer_norm": lambda x: F.layer_norm(x, (4,)),
        "layer_norm, weight and bias of its dtype": lambda x: F.layer_norm(x, (4,), o(4), o(4)),
        "layer_norm, float32 weight": lambda x: F.layer_norm(x, (4,), o(4, dtype=f32)),
        "layer_norm, no rows": lambda x: F.layer_norm(x[:0], (4,)),
        "group_norm": lambda x: F.group_norm(x, 2),
        "group_norm, weight and bias of its dtype": lambda x: F.group_norm(x, 2, o(4), o(4)),
        "group_norm, float32 weight": lambda x: F.group_norm(x, 2, o(4, dtype=f32)),
        "batch_norm, training": lambda x: F.batch_norm(x, None, None, training=True),
        "batch_norm, float32 weight": lambda x: F.batch_norm(x, None, None, o(4, dtype=f32), training=True),
        "batch_norm, eval": lambda x: F.batch_norm(x, o(4), o(4), o(4), o(4)),
        "batch_norm, eval, float32 statistics": lambda x: F.batch_norm(x, o(4, dtype=f32), o(4, dtype=f32)),
        "batch_norm, empty batch": lambda x: F.batch_norm(x[:0], None, None, training=True),
        "instance_norm": lambda x: F.instance_norm(x.reshape(2, 2, 2)),
        "instance_norm, eval": lambda x: F.instance_norm(x.reshape(2, 2, 2), o(2), o(2), use_input_stats=False),
    }


@pytest.mark.parametrize("case", list(_non_floating_cases(torch, "int64")))
@pytest.mark.parametrize("dtype", _NON_FLOATING)
def test_norms_of_an_integer_bool_or_complex_input_are_pytorchs_errors(dtype, case):
    """PyTorch's normalisation kernels are built for floating inputs only: NotImplementedError naming the kernel
    (after the mixed-dtype check of a float32 parameter for layer_norm and group_norm, before it for batch_norm),
    except for batch_norm of an empty batch, returned before the kernel is chosen."""
    out = []
    for m in (torch, ember):
        try:
            r = _non_floating_cases(m, dtype)[case](m.ones(2, 4, dtype=getattr(m, dtype)))
            out.append(("ran", tuple(r.shape), str(r.dtype).split(".")[-1]))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    assert out[1] == out[0]


def test_batch_norm_weight_of_another_shape_gets_its_gradient_in_that_shape():
    """A (1, C) weight and a (C, 1) bias: PyTorch's forward reads their C values, and its backward refuses to give
    them gradients of (C,); ember's gives the gradients of the 1-D ones in the shapes given."""
    def run(m, w_shape, b_shape):
        x = m.linspace(-1, 2, 12).reshape(4, 3)
        w = m.arange(1.0, 4.0).reshape(w_shape).requires_grad_()
        b = m.ones(b_shape).requires_grad_()
        (m.nn.functional.batch_norm(x, None, None, w, b, training=True) * m.arange(3.0)).sum().backward()
        return w.grad.numpy(), b.grad.numpy()

    with pytest.raises(RuntimeError, match="invalid gradient"):
        run(torch, (1, 3), (3, 1))
    want_w, want_b = run(torch, (3,), (3,))
    got_w, got_b = run(ember, (1, 3), (3, 1))
    np.testing.assert_allclose(got_w, want_w.reshape(1, 3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_b, want_b.reshape(3, 1), rtol=1e-5, atol=1e-6)
