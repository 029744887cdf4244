"""REINFORCE on a small corridor: a policy network picks left/right from a Categorical over its logits, and is
trained by the policy-gradient loss -log_prob(action) * (return - baseline) minus an entropy bonus.

Actions are drawn from the policy's probabilities with NumPy uniforms (inverse CDF), so PyTorch and ember take
the same actions from the same weights.

    python reinforce.py [--iterations N]
"""

import argparse

import numpy as np
import torch
from _support import rng, same_weights
from torch import nn
from torch.distributions import Categorical

parser = argparse.ArgumentParser()
parser.add_argument("--iterations", type=int, default=40)
parser.add_argument("--episodes", type=int, default=8)
args = parser.parse_args()

CELLS, HORIZON, GAMMA = 7, 12, 0.95


def observe(position):
    obs = np.zeros(CELLS, dtype=np.float32)
    obs[position] = 1.0
    return obs


def run_episode(policy, uniforms):
    """One episode from the middle cell: +1 for reaching the right end, -0.05 per step; (states, actions, rewards)."""
    position, states, actions, rewards = CELLS // 2, [], [], []
    for t in range(HORIZON):
        obs = observe(position)
        with torch.no_grad():
            probs = Categorical(logits=policy(torch.from_numpy(obs))).probs.numpy()
        action = int(uniforms[t] > probs[0])  # 0: left, 1: right
        states.append(obs)
        actions.append(action)
        position = min(max(position + (1 if action else -1), 0), CELLS - 1)
        done = position == CELLS - 1
        rewards.append(1.0 if done else -0.05)
        if done:
            break
    return states, actions, rewards


def discounted(rewards):
    out, total = [], 0.0
    for r in reversed(rewards):
        total = r + GAMMA * total
        out.append(total)
    return out[::-1]


torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(CELLS, 16), nn.Tanh(), nn.Linear(16, 2))
same_weights(policy)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.01)
noise = rng(1)

for it in range(args.iterations):
    states, actions, returns, totals = [], [], [], []
    for _ in range(args.episodes):
        s, a, r = run_episode(policy, noise.random(HORIZON))
        states += s
        actions += a
        returns += discounted(r)
        totals.append(sum(r))
    obs = torch.from_numpy(np.stack(states))
    acts = torch.tensor(actions)
    ret = torch.tensor(returns, dtype=torch.float32)
    advantage = ret - ret.mean()
    dist = Categorical(logits=policy(obs))
    log_prob = dist.log_prob(acts)
    entropy = dist.entropy().mean()
    loss = -(log_prob * advantage).mean() - 0.01 * entropy
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if it % 10 == 9 or it == 0:
        print(f"iteration {it + 1}: return {np.mean(totals):.5f} loss {loss.item():.6f} "
              f"entropy {entropy.item():.6f} steps {len(actions)}")

with torch.no_grad():
    final = Categorical(logits=policy(torch.from_numpy(np.stack([observe(p) for p in range(CELLS)]))))
    print("P(right) by cell:", " ".join(f"{p:.5f}" for p in final.probs[:, 1].tolist()))
    print(f"mean entropy {final.entropy().mean().item():.6f}")
