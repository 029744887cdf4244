"""One WGAN-GP critic step, written once for ember and PyTorch: the tests that compare its gradients build their
critics and call it."""

from __future__ import annotations


def critic_step(lib, layers, arrays):
    """The step of ``bench/workloads.py``'s WGAN-GP row with the critic ``layers(lib.nn)`` (its parameters set from
    ``arrays[3:]``, in order) on real, fake and alpha ``arrays[:3]``: the Wasserstein terms plus the penalty, whose
    input gradient is taken with create_graph=True, then ``loss.backward()``. [loss, x_hat's gradient, *every
    parameter's gradient]."""
    lib.manual_seed(0)
    critic = layers(lib.nn)
    with lib.no_grad():
        for p, a in zip(critic.parameters(), arrays[3:]):
            p.copy_(lib.tensor(a))
    real, fake, alpha = (lib.tensor(a) for a in arrays[:3])
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(x_hat)
    (grads,) = lib.autograd.grad(scores, x_hat, lib.ones_like(scores), create_graph=True)
    penalty = ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    loss.backward()
    return [loss, x_hat.grad, *(p.grad for p in critic.parameters())]
