"""A Rainbow-style agent on a small chain: a dueling distributional (C51) Q-network whose heads are noisy linear
layers, trained from a prioritized replay of n-step transitions with double-DQN targets, in the idiom of the public
Rainbow tutorials.

The noisy layers keep their factorised Gaussian noise in buffers (``torch.randn``, ``sign() * sqrt(abs())``, the
outer product ``ger``) and drop it in eval mode; the target distribution is projected onto the support with
``index_add_`` on flattened views offset by ``linspace(...).long()``; the loss is each transition's cross-entropy
weighted by its importance-sampling weight, and the new priorities are those losses. Transitions come from NumPy
(random actions on a fixed chain), so PyTorch and ember replay the same data.

    python rainbow_c51.py [--updates N]
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn, optim

parser = argparse.ArgumentParser()
parser.add_argument("--updates", type=int, default=40)
args = parser.parse_args()

STATES, ACTIONS, ATOMS, N_STEP, GAMMA, BATCH = 6, 2, 11, 3, 0.9, 16
V_MIN, V_MAX, ALPHA, BETA, PRIOR_EPS = -1.0, 3.0, 0.6, 0.4, 1e-6


class NoisyLinear(nn.Module):
    """Linear layer with factorised Gaussian noise on its weights and bias (training mode only)."""

    def __init__(self, in_features, out_features, std_init=0.5):
        super().__init__()
        self.in_features, self.out_features, self.std_init = in_features, out_features, std_init
        self.weight_mu = nn.Parameter(torch.Tensor(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.Tensor(out_features, in_features))
        self.register_buffer("weight_epsilon", torch.Tensor(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.Tensor(out_features))
        self.bias_sigma = nn.Parameter(torch.Tensor(out_features))
        self.register_buffer("bias_epsilon", torch.Tensor(out_features))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.in_features)
        self.weight_mu.data.uniform_(-mu_range, mu_range)
        self.weight_sigma.data.fill_(self.std_init / math.sqrt(self.in_features))
        self.bias_mu.data.uniform_(-mu_range, mu_range)
        self.bias_sigma.data.fill_(self.std_init / math.sqrt(self.out_features))

    @staticmethod
    def scale_noise(size):
        x = torch.randn(size)
        return x.sign().mul(x.abs().sqrt())

    def reset_noise(self):
        epsilon_in, epsilon_out = self.scale_noise(self.in_features), self.scale_noise(self.out_features)
        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
        self.bias_epsilon.copy_(epsilon_out)

    def forward(self, x):
        if self.training:
            return F.linear(x, self.weight_mu + self.weight_sigma * self.weight_epsilon,
                            self.bias_mu + self.bias_sigma * self.bias_epsilon)
        return F.linear(x, self.weight_mu, self.bias_mu)


class Network(nn.Module):
    def __init__(self, support):
        super().__init__()
        self.support = support
        self.feature = nn.Sequential(nn.Linear(STATES, 32), nn.ReLU())
        self.advantage_hidden, self.advantage = NoisyLinear(32, 32), NoisyLinear(32, ACTIONS * ATOMS)
        self.value_hidden, self.value = NoisyLinear(32, 32), NoisyLinear(32, ATOMS)

    def logits(self, x):
        feature = self.feature(x)
        advantage = self.advantage(F.relu(self.advantage_hidden(feature))).view(-1, ACTIONS, ATOMS)
        value = self.value(F.relu(self.value_hidden(feature))).view(-1, 1, ATOMS)
        return value + advantage - advantage.mean(dim=1, keepdim=True)

    def dist(self, x):
        return F.softmax(self.logits(x), dim=-1).clamp(min=1e-3)

    def log_dist(self, x):
        return F.log_softmax(self.logits(x), dim=-1)

    def forward(self, x):
        return torch.sum(self.dist(x) * self.support, dim=2)

    def reset_noise(self):
        for layer in (self.advantage_hidden, self.advantage, self.value_hidden, self.value):
            layer.reset_noise()


def collect(generator, episodes=40):
    """n-step transitions of a random walk on the chain: +1 at the right end (terminal), -0.02 per step."""
    obs, acts, rews, next_obs, done = [], [], [], [], []
    eye = np.eye(STATES, dtype=np.float32)
    for _ in range(episodes):
        path, state = [], 1
        while len(path) < 12:
            action = int(generator.integers(ACTIONS))
            following = min(state + 1, STATES - 1) if action else max(state - 1, 0)
            terminal = following == STATES - 1
            path.append((state, action, 1.0 if terminal else -0.02, following, terminal))
            state = following
            if terminal:
                break
        for t in range(len(path)):
            ret, end = 0.0, path[t]
            for k, step in enumerate(path[t:t + N_STEP]):
                ret += GAMMA ** k * step[2]
                end = step
                if step[4]:
                    break
            obs.append(eye[path[t][0]])
            acts.append(path[t][1])
            rews.append(ret)
            next_obs.append(eye[end[3]])
            done.append(float(end[4]))
    return (np.stack(obs), np.array(acts), np.array(rews, dtype=np.float32), np.stack(next_obs),
            np.array(done, dtype=np.float32))


torch.manual_seed(0)
support = torch.linspace(V_MIN, V_MAX, ATOMS)
dqn, dqn_target = Network(support), Network(support)
same_weights(dqn)
dqn_target.load_state_dict(dqn.state_dict())
dqn_target.eval()
optimizer = optim.Adam(dqn.parameters(), lr=3e-3)

generator = rng(3)
obs, acts, rews, next_obs, done = collect(generator)
priorities = np.ones(len(obs))
delta_z = float(V_MAX - V_MIN) / (ATOMS - 1)
print(f"transitions {len(obs)} terminal {int(done.sum())}")

for update in range(1, args.updates + 1):
    probs = priorities ** ALPHA / (priorities ** ALPHA).sum()
    indices = np.searchsorted(np.cumsum(probs), generator.random(BATCH) * probs.sum())
    indices = np.minimum(indices, len(obs) - 1)
    weights = (len(obs) * probs[indices]) ** (-BETA)
    weights = torch.FloatTensor((weights / weights.max()).reshape(-1, 1))

    state, next_state = torch.FloatTensor(obs[indices]), torch.FloatTensor(next_obs[indices])
    action = torch.LongTensor(acts[indices])
    reward = torch.FloatTensor(rews[indices].reshape(-1, 1))
    terminated = torch.FloatTensor(done[indices].reshape(-1, 1))

    with torch.no_grad():
        next_action = dqn(next_state).argmax(1)  # double DQN: the online network picks, the target evaluates
        next_dist = dqn_target.dist(next_state)[range(BATCH), next_action]
        t_z = (reward + (1 - terminated) * GAMMA ** N_STEP * support).clamp(min=V_MIN, max=V_MAX)
        b = (t_z - V_MIN) / delta_z
        lower, upper = b.floor().long(), b.floor().long() + 1
        offset = torch.linspace(0, (BATCH - 1) * ATOMS, BATCH).long().unsqueeze(1).expand(BATCH, ATOMS)
        proj_dist = torch.zeros(next_dist.size())
        proj_dist.view(-1).index_add_(0, (lower + offset).view(-1), (next_dist * (upper.float() - b)).view(-1))
        proj_dist.view(-1).index_add_(0, (upper.clamp(max=ATOMS - 1) + offset).view(-1),
                                      (next_dist * (b - lower.float())).view(-1))

    log_p = dqn.log_dist(state)[range(BATCH), action]
    elementwise_loss = -(proj_dist * log_p).sum(1)
    loss = torch.mean(elementwise_loss * weights)

    optimizer.zero_grad()
    loss.backward()
    grad_norm = nn.utils.clip_grad_norm_(dqn.parameters(), 10.0)
    optimizer.step()

    priorities[indices] = elementwise_loss.detach().cpu().numpy() + PRIOR_EPS
    dqn.reset_noise()
    dqn_target.reset_noise()
    if update % 10 == 0:
        dqn_target.load_state_dict(dqn.state_dict())
    if update % 5 == 0:
        print(f"update {update} loss {loss.item():.6f} grad-norm {grad_norm.item():.6f} "
              f"projected-mass {proj_dist.sum().item():.5f} max-priority {priorities.max():.6f}")

dqn.eval()
with torch.no_grad():
    q = dqn(torch.eye(STATES))
print("q", " ".join(f"{v:.5f}" for v in q.view(-1).tolist()))
print("greedy", q.argmax(1).tolist())
