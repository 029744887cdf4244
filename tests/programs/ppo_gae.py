"""PPO with GAE on a numpy bandit-walk environment: Categorical policy, value head, clipped surrogate,
minibatches from BatchSampler(SubsetRandomSampler), advantage normalisation, entropy bonus, approx KL. The actions
are Categorical samples: both frameworks draw PyTorch's, so the rollouts (and rewards) are the same."""
import numpy as np
import torch
import torch.nn as nn
from _support import rng, same_weights
from torch.distributions import Categorical
from torch.utils.data.sampler import BatchSampler, SubsetRandomSampler

torch.manual_seed(0)
r = rng(5)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.actor = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, gain=np.sqrt(2))
                nn.init.constant_(m.bias, 0.0)

    def get_action_and_value(self, x, action=None):
        h = self.shared(x)
        probs = Categorical(logits=self.actor(h))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(h).squeeze(-1)


def env_step(obs, action):
    reward = (action == np.argmax(obs[:, :3], axis=1)).astype(np.float32) - 0.1 * obs[:, 3]
    nxt = r.standard_normal(obs.shape).astype(np.float32)
    done = r.random(obs.shape[0]) < 0.1
    return nxt, reward, done


agent = ActorCritic()
same_weights(agent)
optimizer = torch.optim.Adam(agent.parameters(), lr=3e-3, eps=1e-5)
num_envs, num_steps, gamma, lam, clip_coef = 4, 16, 0.99, 0.95, 0.2
obs = torch.from_numpy(r.standard_normal((num_envs, 4)).astype(np.float32))
done = torch.zeros(num_envs)

for update in range(4):
    frac = 1.0 - update / 4
    optimizer.param_groups[0]["lr"] = frac * 3e-3
    b_obs, b_act, b_logp, b_rew, b_done, b_val = [], [], [], [], [], []
    for _step in range(num_steps):
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(obs)
        nxt, reward, d = env_step(obs.numpy(), action.numpy())
        b_obs.append(obs)
        b_act.append(action)
        b_logp.append(logprob)
        b_val.append(value)
        b_done.append(done)
        b_rew.append(torch.tensor(reward))
        obs, done = torch.Tensor(nxt), torch.Tensor(d.astype(np.float32))
    rewards, dones, values = torch.stack(b_rew), torch.stack(b_done), torch.stack(b_val)
    with torch.no_grad():
        next_value = agent.get_action_and_value(obs)[3]
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            if t == num_steps - 1:
                nextnonterminal, nextvalues = 1.0 - done, next_value
            else:
                nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
        returns = advantages + values
    B_obs, B_act, B_logp = torch.stack(b_obs).reshape(-1, 4), torch.stack(b_act).reshape(-1), torch.stack(b_logp).reshape(-1)
    B_adv, B_ret, B_val = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
    clipfracs = []
    for _epoch in range(3):
        for mb in BatchSampler(SubsetRandomSampler(range(num_envs * num_steps)), 16, drop_last=False):
            mb = torch.tensor(mb)
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(B_obs[mb], B_act.long()[mb])
            logratio = newlogprob - B_logp[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]
            adv = B_adv[mb]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
            v_clipped = B_val[mb] + torch.clamp(newvalue - B_val[mb], -clip_coef, clip_coef)
            v_loss = 0.5 * torch.max((newvalue - B_ret[mb]) ** 2, (v_clipped - B_ret[mb]) ** 2).mean()
            loss = pg_loss - 0.01 * entropy.mean() + v_loss * 0.5
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()
    y_pred, y_true = B_val.numpy(), B_ret.numpy()
    explained_var = np.nan if np.var(y_true) == 0 else 1 - np.var(y_true - y_pred) / np.var(y_true)
    print(f"update {update} reward {rewards.sum().item():.4f} pg {pg_loss.item():.5f} v {v_loss.item():.5f} "
          f"kl {approx_kl.item():.6f} clipfrac {np.mean(clipfracs):.4f} ev {explained_var:.4f}")
