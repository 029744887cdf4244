"""TRPO on a point mass in the idiom of 2017 reference code: float64 by default, a Gaussian policy with a state-free
log standard deviation, GAE advantages, the value network fitted by SciPy's L-BFGS over its flattened weights, and
the policy moved along the natural gradient: conjugate gradients on Fisher-vector products (the Hessian of the KL
divergence times a vector, by double backward), then a backtracking line search on the surrogate.

Actions are the policy's mean plus its standard deviation times NumPy normals, so PyTorch and ember take the same
actions from the same weights.

    python trpo_natural_gradient.py [--iterations N]
"""

import argparse

import numpy as np
import scipy.optimize
import torch
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--iterations", type=int, default=3)
parser.add_argument("--episodes", type=int, default=6)
parser.add_argument("--max-kl", type=float, default=1e-2)
parser.add_argument("--damping", type=float, default=1e-1)
args = parser.parse_args()

torch.set_default_dtype(torch.float64)
HORIZON, GAMMA, TAU = 20, 0.99, 0.95


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1))
        self.log_std = nn.Parameter(torch.zeros(1, 1))

    def forward(self, states):
        mean = self.body(states)
        log_std = self.log_std.expand_as(mean)
        return mean, log_std, torch.exp(log_std)


def log_density(x, mean, log_std, std):
    return (-(x - mean).pow(2) / (2 * std.pow(2)) - 0.5 * np.log(2 * np.pi) - log_std).sum(1, keepdim=True)


def flat_params(model):
    return torch.cat([p.data.view(-1) for p in model.parameters()])


def set_flat_params(model, flat):
    offset = 0
    for p in model.parameters():
        n = p.numel()
        p.data.copy_(flat[offset:offset + n].view(p.size()))
        offset += n


def flat_grad(grads):
    return torch.cat([g.contiguous().view(-1) for g in grads])


def conjugate_gradients(fvp, b, steps=10, tol=1e-10):
    x, r, p = torch.zeros(b.size()), b.clone(), b.clone()
    rr = torch.dot(r, r)
    for _ in range(steps):
        Ap = fvp(p)
        alpha = rr / torch.dot(p, Ap)
        x += alpha * p
        r -= alpha * Ap
        new_rr = torch.dot(r, r)
        p = r + new_rr / rr * p
        rr = new_rr
        if rr < tol:
            break
    return x


def rollouts(policy, noise):
    """Point mass on a line, pushed by the action; reward: minus the distance to 1 and a small action cost."""
    states, actions, rewards, masks = [], [], [], []
    for _episode in range(args.episodes):
        position, velocity = float(noise.uniform(-1, 1)), 0.0
        for t in range(HORIZON):
            state = np.array([position, velocity])
            with torch.no_grad():
                mean, _, std = policy(torch.from_numpy(state).unsqueeze(0))
            action = float(mean[0, 0] + std[0, 0] * noise.standard_normal())
            velocity = 0.9 * velocity + 0.1 * np.clip(action, -2, 2)
            position += velocity
            states.append(state)
            actions.append([action])
            rewards.append(-abs(position - 1.0) - 0.01 * action ** 2)
            masks.append(0.0 if t == HORIZON - 1 else 1.0)
    return (torch.tensor(np.array(states)), torch.tensor(actions), torch.tensor(rewards), torch.tensor(masks))


def advantages(values, rewards, masks):
    returns, deltas, adv = torch.zeros(len(rewards), 1), torch.zeros(len(rewards), 1), torch.zeros(len(rewards), 1)
    prev_return = prev_value = prev_adv = 0.0
    for i in reversed(range(rewards.size(0))):
        returns[i] = rewards[i] + GAMMA * prev_return * masks[i]
        deltas[i] = rewards[i] + GAMMA * prev_value * masks[i] - values.data[i]
        adv[i] = deltas[i] + GAMMA * TAU * prev_adv * masks[i]
        prev_return, prev_value, prev_adv = returns[i, 0], values.data[i, 0], adv[i, 0]
    return returns, (adv - adv.mean()) / adv.std()


def fit_value(value_net, states, targets):
    def loss_and_grad(flat):
        set_flat_params(value_net, torch.from_numpy(flat))
        for p in value_net.parameters():
            p.grad = None
        loss = (value_net(states) - targets).pow(2).mean()
        loss = loss + 1e-3 * sum(p.pow(2).sum() for p in value_net.parameters())
        loss.backward()
        return loss.item(), flat_grad([p.grad for p in value_net.parameters()]).numpy()

    flat, loss, _ = scipy.optimize.fmin_l_bfgs_b(loss_and_grad, flat_params(value_net).numpy(), maxiter=10)
    set_flat_params(value_net, torch.from_numpy(flat))
    return loss


def trpo_step(policy, states, actions, adv):
    with torch.no_grad():
        old_mean, old_log_std, old_std = (t.clone() for t in policy(states))  # log_std is a view of the weight
        old_log_prob = log_density(actions, old_mean, old_log_std, old_std)

    def surrogate():
        return -(adv * torch.exp(log_density(actions, *policy(states)) - old_log_prob)).mean()

    def kl(reference=None):
        """KL(reference || policy), averaged over the states; by default the reference is the policy itself,
        detached: zero, but with the Fisher information as its Hessian."""
        mean, log_std, std = policy(states)
        mean0, log_std0, std0 = reference or (mean.detach(), log_std.detach(), std.detach())
        return (log_std - log_std0 + (std0.pow(2) + (mean0 - mean).pow(2)) / (2 * std.pow(2)) - 0.5).sum(1).mean()

    def fisher_vector_product(v):
        grads = torch.autograd.grad(kl(), list(policy.parameters()), create_graph=True)
        kl_v = (flat_grad(grads) * v).sum()
        return flat_grad(torch.autograd.grad(kl_v, list(policy.parameters()))) + args.damping * v

    loss = surrogate()
    loss_grad = flat_grad(torch.autograd.grad(loss, list(policy.parameters())))
    step_dir = conjugate_gradients(fisher_vector_product, -loss_grad)
    shs = 0.5 * (step_dir * fisher_vector_product(step_dir)).sum(0, keepdim=True)
    full_step = step_dir / torch.sqrt(shs / args.max_kl)[0]
    expected = (-loss_grad * step_dir).sum(0, keepdim=True) / torch.sqrt(shs / args.max_kl)[0]
    old = flat_params(policy)
    for fraction in 0.5 ** np.arange(10):
        set_flat_params(policy, old + fraction * full_step)
        with torch.no_grad():
            new_loss = surrogate()
        if (loss - new_loss).item() / (expected * fraction).item() > 0.1 and (loss - new_loss).item() > 0:
            break
    else:
        set_flat_params(policy, old)
    with torch.no_grad():
        return expected.item(), surrogate().item(), kl((old_mean, old_log_std, old_std)).item(), float(fraction)


torch.manual_seed(0)
policy, value_net = Policy(), nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1))
same_weights(policy, value_net)
noise = rng(0)
for iteration in range(args.iterations):
    states, actions, rewards, masks = rollouts(policy, noise)
    with torch.no_grad():
        values = value_net(states)
    returns, adv = advantages(values, rewards, masks)
    value_loss = fit_value(value_net, states, returns)
    expected, after, kl_div, fraction = trpo_step(policy, states, actions, adv)
    print(f"iteration {iteration} return {rewards.sum().item() / args.episodes:.6f} value {value_loss:.6f} "
          f"expected improvement {expected:.6f} surrogate {after:.6f} kl {kl_div:.6e} step {fraction:.4f} "
          f"log_std {policy.log_std.item():.6f}")
