"""PPO and SAC on a continuous-control toy (a noisy point mass pushed towards the origin), in the idioms of
single-file RL code: orthogonally initialised ``layer_init`` MLPs, a state-independent ``actor_logstd`` parameter
``expand_as`` the mean, ``Normal(mean, std)`` with ``log_prob(...).sum(1)`` and ``entropy().sum(1)``, GAE written
backwards over preallocated rollout tensors, minibatches indexed by shuffled NumPy indices, the clipped surrogate
``torch.max(pg_loss1, pg_loss2)`` with the clipped value loss, per-minibatch advantage normalisation,
``clip_grad_norm_``, a learning rate annealed through ``optimizer.param_groups[0]["lr"]``, and a
``SummaryWriter`` logging scalars. The SAC part squashes a reparameterised ``Normal`` with ``tanh`` (the
log-probability correction ``log(1 - tanh^2 + eps)``), trains twin Q networks against ``torch.min`` of two target
networks updated by Polyak averaging through ``.data.copy_``, and tunes the entropy temperature from a
``log_alpha`` leaf.

Every random number (initial states, environment noise, action noise, minibatch order) comes from NumPy: actions
are ``mean + std * eps`` with NumPy ``eps``, so PyTorch and ember take the same actions from the same weights.

    python ppo_sac_continuous.py [--iterations N] [--sac-steps N]
"""

import argparse
import os
import tempfile

import numpy as np
import torch
from _support import rng, same_weights
from torch import nn
from torch.distributions.normal import Normal
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--iterations", type=int, default=6)
parser.add_argument("--sac-steps", type=int, default=30)
args = parser.parse_args()

OBS, ACT, ENVS, STEPS, MINIBATCHES, EPOCHS = 4, 2, 4, 16, 4, 3
GAMMA, LAMBDA, CLIP, ENT, VF, MAX_NORM, LR = 0.99, 0.95, 0.2, 0.01, 0.5, 0.5, 3e-3
noise = rng(3)


class PointMass:
    """A batch of ``n`` point masses: state (position, velocity) in 2-D, reward minus the distance to the origin."""

    def __init__(self, n):
        self.state = noise.standard_normal((n, OBS)).astype(np.float32)

    def step(self, action):
        action = np.clip(action, -1.0, 1.0)
        pos, vel = self.state[:, :2], self.state[:, 2:]
        vel = 0.8 * vel + 0.2 * action
        pos = pos + 0.1 * vel + 0.01 * noise.standard_normal(pos.shape)
        self.state = np.concatenate([pos, vel], 1).astype(np.float32)
        reward = -np.linalg.norm(pos, axis=1) - 0.01 * (action ** 2).sum(1)
        done = np.linalg.norm(pos, axis=1) > 4.0
        self.state[done] = noise.standard_normal((int(done.sum()), OBS)).astype(np.float32)
        return self.state.copy(), reward.astype(np.float32), done


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):  # noqa: B008 - the idiom of the RL code it follows
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(OBS, 32)), nn.Tanh(), layer_init(nn.Linear(32, 32)),
                                    nn.Tanh(), layer_init(nn.Linear(32, 1), std=1.0))
        self.actor_mean = nn.Sequential(layer_init(nn.Linear(OBS, 32)), nn.Tanh(), layer_init(nn.Linear(32, 32)),
                                        nn.Tanh(), layer_init(nn.Linear(32, ACT), std=0.01))
        self.actor_logstd = nn.Parameter(torch.zeros(1, ACT))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None, eps=None):
        action_mean = self.actor_mean(x)
        action_std = torch.exp(self.actor_logstd.expand_as(action_mean))
        probs = Normal(action_mean, action_std)
        if action is None:
            action = action_mean + action_std * torch.from_numpy(eps)
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


def train_ppo(writer):
    torch.manual_seed(1)
    agent = Agent()
    same_weights(agent)
    optimizer = torch.optim.Adam(agent.parameters(), lr=LR, eps=1e-5)
    envs = PointMass(ENVS)
    obs = torch.zeros((STEPS, ENVS, OBS))
    actions = torch.zeros((STEPS, ENVS, ACT))
    logprobs, rewards, dones, values = (torch.zeros((STEPS, ENVS)) for _ in range(4))
    next_obs, next_done = torch.Tensor(envs.state.copy()), torch.zeros(ENVS)
    batch_size = STEPS * ENVS
    minibatch_size = batch_size // MINIBATCHES
    for iteration in range(1, args.iterations + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / args.iterations) * LR
        for step in range(STEPS):
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                eps = noise.standard_normal((ENVS, ACT)).astype(np.float32)
                action, logprob, _, value = agent.get_action_and_value(next_obs, eps=eps)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            state, reward, done = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).view(-1)
            next_obs, next_done = torch.Tensor(state), torch.Tensor(done.astype(np.float32))
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(STEPS)):
                if t == STEPS - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + GAMMA * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + GAMMA * LAMBDA * nextnonterminal * lastgaelam
            returns = advantages + values
        b_obs, b_logprobs, b_actions = obs.reshape((-1, OBS)), logprobs.reshape(-1), actions.reshape((-1, ACT))
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        b_inds = np.arange(batch_size)
        clipfracs = []
        for _ in range(EPOCHS):
            noise.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start:start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > CLIP).float().mean().item()]
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - CLIP, 1 + CLIP)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()
                newvalue = newvalue.view(-1)
                v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -CLIP, CLIP)
                v_loss = 0.5 * torch.max(v_loss_unclipped, (v_clipped - b_returns[mb_inds]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - ENT * entropy_loss + v_loss * VF
                optimizer.zero_grad()
                loss.backward()
                grad_norm = nn.utils.clip_grad_norm_(agent.parameters(), MAX_NORM)
                optimizer.step()
        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        explained_var = 1 - np.var(y_true - y_pred) / np.var(y_true)
        writer.add_scalar("losses/value_loss", v_loss.item(), iteration)
        writer.add_scalar("losses/policy_loss", pg_loss.item(), iteration)
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], iteration)
        print(f"ppo {iteration}: reward {rewards.mean().item():.5f} v_loss {v_loss.item():.6f} "
              f"pg_loss {pg_loss.item():.6f} entropy {entropy_loss.item():.6f} kl {approx_kl.item():.6f} "
              f"clipfrac {np.mean(clipfracs):.4f} grad_norm {grad_norm.item():.5f} explained_var {explained_var:.5f}")


LOG_STD_MAX, LOG_STD_MIN, TAU = 2, -5, 0.05


class SoftQNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(OBS + ACT, 32), nn.Linear(32, 32), nn.Linear(32, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(OBS, 32), nn.Linear(32, 32)
        self.fc_mean, self.fc_logstd = nn.Linear(32, ACT), nn.Linear(32, ACT)
        self.register_buffer("action_scale", torch.tensor(np.ones(ACT), dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor(np.zeros(ACT), dtype=torch.float32))

    def get_action(self, x, eps):
        x = torch.relu(self.fc2(torch.relu(self.fc1(x))))
        mean, log_std = self.fc_mean(x), torch.tanh(self.fc_logstd(x))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = mean + std * torch.from_numpy(eps)  # rsample's reparameterisation, with NumPy's noise
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        return action, log_prob, torch.tanh(mean) * self.action_scale + self.action_bias


def train_sac():
    torch.manual_seed(2)
    actor, qf1, qf2 = Actor(), SoftQNetwork(), SoftQNetwork()
    same_weights(actor, qf1, qf2)
    qf1_target, qf2_target = SoftQNetwork(), SoftQNetwork()
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    q_optimizer = torch.optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=1e-3)
    actor_optimizer = torch.optim.Adam(list(actor.parameters()), lr=3e-4)
    target_entropy = -torch.prod(torch.Tensor((ACT,))).item()
    log_alpha = torch.zeros(1, requires_grad=True)
    alpha = log_alpha.exp().item()
    a_optimizer = torch.optim.Adam([log_alpha], lr=1e-3)
    envs = PointMass(1)
    buffer = []
    state = envs.state.copy()
    for step in range(args.sac_steps):
        with torch.no_grad():
            action, _, _ = actor.get_action(torch.Tensor(state), noise.standard_normal((1, ACT)).astype(np.float32))
        next_state, reward, done = envs.step(action.numpy())
        buffer.append((state[0], action.numpy()[0], reward[0], next_state[0], float(done[0])))
        state = next_state
        if len(buffer) < 8:
            continue
        idx = noise.integers(0, len(buffer), 8)
        obs_b, act_b, rew_b, next_b, done_b = (torch.tensor(np.stack([buffer[i][k] for i in idx]),
                                                            dtype=torch.float32) for k in range(5))
        with torch.no_grad():
            next_action, next_log_pi, _ = actor.get_action(next_b, noise.standard_normal((8, ACT)).astype(np.float32))
            min_qf_next = torch.min(qf1_target(next_b, next_action), qf2_target(next_b, next_action)) - alpha * next_log_pi
            next_q_value = rew_b.flatten() + (1 - done_b.flatten()) * GAMMA * min_qf_next.view(-1)
        qf1_a_values, qf2_a_values = qf1(obs_b, act_b).view(-1), qf2(obs_b, act_b).view(-1)
        qf_loss = nn.functional.mse_loss(qf1_a_values, next_q_value) + nn.functional.mse_loss(qf2_a_values, next_q_value)
        q_optimizer.zero_grad()
        qf_loss.backward()
        q_optimizer.step()
        pi, log_pi, _ = actor.get_action(obs_b, noise.standard_normal((8, ACT)).astype(np.float32))
        min_qf_pi = torch.min(qf1(obs_b, pi), qf2(obs_b, pi))
        actor_loss = ((alpha * log_pi) - min_qf_pi).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()
        with torch.no_grad():
            _, log_pi, _ = actor.get_action(obs_b, noise.standard_normal((8, ACT)).astype(np.float32))
        alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()
        a_optimizer.zero_grad()
        alpha_loss.backward()
        a_optimizer.step()
        alpha = log_alpha.exp().item()
        for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
            target_param.data.copy_(TAU * param.data + (1 - TAU) * target_param.data)
        for param, target_param in zip(qf2.parameters(), qf2_target.parameters()):
            target_param.data.copy_(TAU * param.data + (1 - TAU) * target_param.data)
        if step % 10 == 9:
            print(f"sac {step + 1}: qf_loss {qf_loss.item():.6f} actor_loss {actor_loss.item():.6f} "
                  f"alpha {alpha:.6f} alpha_loss {alpha_loss.item():.6f} q1 {qf1_a_values.mean().item():.6f}")
    with torch.no_grad():
        _, _, greedy = actor.get_action(torch.Tensor(envs.state), np.zeros((1, ACT), np.float32))
    print("greedy action:", " ".join(f"{a:.5f}" for a in greedy.flatten().tolist()))


with tempfile.TemporaryDirectory() as log_dir:
    with SummaryWriter(os.path.join(log_dir, "ppo")) as writer:
        train_ppo(writer)
    print("event files:", len(os.listdir(writer.log_dir)))
train_sac()
