"""instance_norm's recorded graph as PyTorch's: the input viewed as (1, N * C, *), per-channel tensors repeated per
sample, batch_norm's node (three edges: input, weight, bias; the running statistics are no inputs of the graph),
the result a view back (ViewBackward0), in training and in evaluation mode; its size errors are batch_norm's of
the repeated tensors."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, str(Path(__file__).parent))
from oracle import assert_same_error, assert_same_grads, node_names  # noqa: E402


def _inputs(m, affine):
    x = m.tensor(np.random.default_rng(0).standard_normal((2, 3, 5)), requires_grad=True)
    w, b = (m.tensor([1.0, 2.0, 0.5], dtype=m.float64, requires_grad=True),
            m.tensor([0.1, -0.2, 0.3], dtype=m.float64, requires_grad=True)) if affine else (None, None)
    return x, w, b


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("running", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_instance_norm_chain_and_gradients_as_pytorchs(affine, running, use_input_stats):
    if not running and not use_input_stats:
        return
    out = {}
    for m in (torch, ember):
        x, w, b = _inputs(m, affine)
        stats = (m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)) if running else (None, None)
        y = m.nn.functional.instance_norm(x, *stats, w, b, use_input_stats=use_input_stats)
        (y * m.arange(30.0, dtype=m.float64).reshape(2, 3, 5)).sum().backward()
        out[m] = node_names(y.grad_fn, 4), y.detach().numpy(), (x, w, b)
    assert out[ember][0] == out[torch][0]
    np.testing.assert_allclose(out[ember][1], out[torch][1], rtol=1e-10, atol=1e-12)
    assert_same_grads([t for t in out[ember][2] if t is not None], [t for t in out[torch][2] if t is not None])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_node_has_pytorchs_three_edges(training):
    names = [node_names(m.nn.functional.batch_norm(m.ones(2, 3, 4, requires_grad=True), m.zeros(3), m.ones(3),
                                                   m.ones(3, requires_grad=True), None, training=training).grad_fn, 1)
             for m in (torch, ember)]
    assert names[1] == names[0]


def test_instance_norm_result_changed_in_place_as_pytorchs():
    names = []
    for m in (torch, ember):
        x, _, _ = _inputs(m, False)
        y = m.nn.functional.instance_norm(x)
        y.mul_(2)
        names.append(node_names(y.grad_fn, 3))
    assert names[1] == names[0]


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("which", ["running_mean", "weight", "bias"])
def test_instance_norm_size_errors_as_pytorchs(which, use_input_stats):
    def run(m):
        kw = {"running_mean": m.zeros(3), "running_var": m.ones(3)}
        kw[which] = m.ones(4)
        return m.nn.functional.instance_norm(m.ones(2, 3, 5), **kw, use_input_stats=use_input_stats)

    assert_same_error(run)
