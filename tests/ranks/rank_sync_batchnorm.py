"""SyncBatchNorm on N ranks x batch B equals BatchNorm on one process x N*B (run at 2 and 3 ranks by
tests/test_on_ranks.py): outputs, running statistics, gradients and the parameters after a few SGD steps under
DistributedDataParallel; under create_graph its gradient, as PyTorch's, cannot be differentiated again.

Every rank computes the one-process reference itself on the whole global batch (the same seeded data)."""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.parallel import DistributedDataParallel

B = 3


def build():
    ember.manual_seed(0)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 5 * 5, 6), nn.BatchNorm1d(6, momentum=None), nn.Linear(6, 1))


class Close:
    """Collects what differs; ``done()`` asserts nothing did (after the last collective)."""

    def __init__(self):
        self.problems = []

    def __call__(self, a, b, what, rtol=2e-5, atol=2e-6):
        a, b = np.asarray(a), np.asarray(b)
        if not np.allclose(a, b, rtol=rtol, atol=atol):
            self.problems.append(f"{what} differs by {np.abs(a - b).max()}")

    def done(self):
        assert not self.problems, "\n".join(self.problems)


def test_sync_batchnorm_under_ddp_equals_batchnorm_on_the_global_batch(rank, world, process_group):
    close = Close()
    reference = build()
    model = DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(build()))
    converted = sum(isinstance(m, nn.SyncBatchNorm) for m in model.modules())
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    gen = np.random.default_rng(1)
    for step in range(4):
        x_all = ember.tensor(gen.normal(2.0, 3.0, size=(world * B, 2, 5, 5)).astype(np.float32), requires_grad=True)
        y_all = ember.tensor(gen.normal(size=(world * B, 1)).astype(np.float32))
        mine = slice(rank * B, (rank + 1) * B)
        x = x_all.detach()[mine].clone().requires_grad_(True)

        ref_out = reference(x_all)
        ember.nn.functional.mse_loss(ref_out, y_all).backward()
        out = model(x)
        ember.nn.functional.mse_loss(out, y_all[mine]).backward()

        close(out.detach().numpy(), ref_out.detach().numpy()[mine], f"step {step} output")
        close(x.grad.numpy() / world, x_all.grad.numpy()[mine], f"step {step} input gradient / world")
        for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
            close(p.grad.numpy(), q.grad.numpy(), f"step {step} gradient of {name}")
        for (name, b), c in zip(model.module.named_buffers(), reference.buffers()):
            close(b.numpy(), c.numpy(), f"step {step} buffer {name}")
        ref_opt.step()
        opt.step()
        ref_opt.zero_grad()
        opt.zero_grad()
    for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
        close(p.detach().numpy(), q.detach().numpy(), f"parameter {name} after 4 steps")

    model.eval()  # eval: running statistics, no communication (rank 0 alone may evaluate)
    if rank == 0:
        with ember.no_grad():
            reference.eval()
            close(model.module(x_all.detach()).numpy(), reference(x_all.detach()).numpy(), "eval output")
    process_group.barrier()
    assert converted == 2, f"{converted} SyncBatchNorm layers after convert_sync_batchnorm"
    close.done()


def test_one_value_per_channel_over_all_ranks_is_refused_on_every_rank(rank):
    # the same ValueError on every rank, no hang
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.SyncBatchNorm(3)(ember.ones(1, 3) if rank == 0 else ember.ones(0, 3))


def test_the_gradient_under_create_graph_cannot_be_differentiated_again(rank):
    # the gradients are recorded without a derivative of their own, as PyTorch's SyncBatchNorm's
    layer = nn.SyncBatchNorm(3).double()
    xs = ember.tensor(np.random.default_rng(rank).normal(size=(4, 3)), requires_grad=True)
    (recorded,) = ember.autograd.grad(layer(xs).pow(2).sum(), xs, create_graph=True)
    (plain,) = ember.autograd.grad(layer(xs).pow(2).sum(), xs)
    assert recorded.requires_grad
    assert np.allclose(recorded.detach().numpy(), plain.numpy(), rtol=2e-5, atol=2e-6), "gradient under create_graph"
    with pytest.raises(RuntimeError, match="derivative for aten::batch_norm_backward_elemt is not implemented"):
        ember.autograd.grad(recorded.sum(), xs)
