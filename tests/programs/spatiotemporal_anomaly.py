"""Multivariate sensor series, as the spatio-temporal forecasting and anomaly repositories write them.

- A graph learner as MTGNN's: node embeddings give an antisymmetric score matrix, ``relu(tanh(alpha * ...))``, of
  which each row keeps its ``topk`` entries through a mask made by ``mask.scatter_(1, idx, s.fill_(1))``; the
  graph is learned on a random subgraph of nodes each step (``X[:, :, ids, :]``, embeddings indexed by ``ids``),
  mix-hop propagation (``torch.einsum('ncwl,vw->ncvl', ...)``) and a layer norm whose per-node affine parameters
  are indexed by the same ids (``F.layer_norm(x, shape, weight[:, ids, :], bias[:, ids, :])``). The loss is the
  legacy ``nn.L1Loss(size_average=False)``, and the optimizer wrapper clips ``model.parameters()`` once more after
  its SGD has spent the generator (PyTorch warns that nothing is clipped).
- STGCN's gated temporal convolution (``conv1(X) + sigmoid(conv2(X))``) and its graph convolution written as
  ``torch.einsum("ij,jklm->kilm", [A_hat, t.permute(1, 0, 2, 3)])`` (operands in a list), batch-normalized with
  the nodes as channels.
- Anomaly-Transformer's association discrepancy: series attention against a Gaussian prior of the distance
  ``|i - j|`` with a learned sigma per position, a symmetric KL of each against the other detached, and the
  minimax step (``loss1.backward(retain_graph=True)`` then ``loss2.backward()``).
- SAGAN's hand-made spectral norm: the wrapped layer's ``weight`` deleted from ``_parameters``, ``weight_u``,
  ``weight_v`` (``w.data.new(h).normal_(0, 1)``) and ``weight_bar`` registered, power iteration through ``.data =``
  assignments and the normalized weight set as a plain attribute on every forward.
- DeepAR's training loop: an LSTM stepped one time step at a time with its hidden and cell states, missing inputs
  filled in place from the last prediction (``batch[t, zero_index, 0] = mu[zero_index]``), a Gaussian likelihood
  (``torch.distributions.Normal``) over the observed targets only, batches drawn by a ``Sampler`` whose order
  comes from ``torch.multinomial`` over float64 weights.

    python spatiotemporal_anomaly.py [--steps N]
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn
from torch.nn import Parameter
from torch.utils.data import DataLoader, Dataset, Sampler

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()

N_NODES, T_IN, SUB, K = 8, 12, 6, 3
data_rng = rng(7)
t_axis = np.arange(200)[:, None]
series = (np.sin(t_axis / 5.0 + data_rng.random((1, N_NODES)) * 6) * (1 + data_rng.random((1, N_NODES)))
          + 0.1 * data_rng.standard_normal((200, N_NODES))).astype(np.float32)
series[120:124, 2] += 4.0  # an anomaly


class GraphLearner(nn.Module):
    def __init__(self, n, dim, k, alpha=3.0):
        super().__init__()
        self.emb1, self.emb2 = nn.Embedding(n, dim), nn.Embedding(n, dim)
        self.lin1, self.lin2 = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.k, self.alpha = k, alpha

    def forward(self, idx):
        m1 = torch.tanh(self.alpha * self.lin1(self.emb1(idx)))
        m2 = torch.tanh(self.alpha * self.lin2(self.emb2(idx)))
        a = torch.mm(m1, m2.transpose(1, 0)) - torch.mm(m2, m1.transpose(1, 0))
        adj = F.relu(torch.tanh(self.alpha * a))
        mask = torch.zeros(idx.size(0), idx.size(0))
        mask.fill_(float("0"))
        s1, t1 = (adj + torch.rand_like(adj) * 0.01).topk(self.k, 1)
        mask.scatter_(1, t1, s1.fill_(1))
        return adj * mask


class MixProp(nn.Module):
    def __init__(self, c_in, c_out, depth=2, beta=0.05):
        super().__init__()
        self.mlp = nn.Conv2d((depth + 1) * c_in, c_out, kernel_size=(1, 1))
        self.depth, self.beta = depth, beta

    def forward(self, x, adj):
        adj = adj + torch.eye(adj.size(0))
        a = adj / adj.sum(1).view(-1, 1)
        h, out = x, [x]
        for _ in range(self.depth):
            h = self.beta * x + (1 - self.beta) * torch.einsum("ncwl,vw->ncvl", (h, a)).contiguous()
            out.append(h)
        return self.mlp(torch.cat(out, dim=1))


class NodeLayerNorm(nn.Module):
    def __init__(self, shape, eps=1e-5):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.Tensor(*shape)), nn.Parameter(torch.Tensor(*shape))
        self.eps = eps
        nn.init.ones_(self.weight)
        nn.init.zeros_(self.bias)

    def forward(self, x, idx):
        return F.layer_norm(x, tuple(x.shape[1:]), self.weight[:, idx, :], self.bias[:, idx, :], self.eps)


class MTGNNLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.gc = GraphLearner(N_NODES, 6, K)
        self.start = nn.Conv2d(1, 8, kernel_size=(1, 1))
        self.filt, self.gate = nn.Conv2d(8, 8, (1, 3), dilation=(1, 2)), nn.Conv2d(8, 8, (1, 3), dilation=(1, 2))
        self.prop = MixProp(8, 8)
        self.norm = NodeLayerNorm((8, N_NODES, T_IN - 4))
        self.end = nn.Conv2d(8 * (T_IN - 4), 1, kernel_size=(1, 1))

    def forward(self, x, idx):
        adj = self.gc(idx)
        h = self.start(x)
        h = torch.tanh(self.filt(h)) * torch.sigmoid(self.gate(h))
        h = F.dropout(h, 0.0, training=self.training) + self.prop(h, adj)
        h = self.norm(h, idx)
        h = h.permute(0, 1, 3, 2).reshape(h.size(0), -1, h.size(2), 1)
        return self.end(F.relu(h)).squeeze(1).squeeze(-1)


class Optim:
    def __init__(self, params, lr, clip):
        self.params, self.clip = params, clip  # a generator: Adam below reads it to the end
        self.optimizer = torch.optim.SGD(self.params, lr=lr, weight_decay=1e-5)

    def step(self):
        torch.nn.utils.clip_grad_norm_(self.params, self.clip)
        self.optimizer.step()


def windows(data, length, horizon=1):
    x = np.stack([data[i:i + length] for i in range(len(data) - length - horizon)])
    y = np.stack([data[i + length + horizon - 1] for i in range(len(data) - length - horizon)])
    return torch.from_numpy(x), torch.from_numpy(y)


X, Y = windows(series[:150] / np.abs(series).max(0), T_IN)
model = MTGNNLike()
same_weights(model)
optim = Optim(model.parameters(), 1e-3, 5)
criterion = nn.L1Loss(size_average=False)
perm_rng = rng(3)
for step in range(args.steps):
    model.zero_grad()
    batch = X[step * 16:(step + 1) * 16].unsqueeze(1).transpose(2, 3)  # (B, 1, nodes, time)
    ids = torch.tensor(perm_rng.permutation(N_NODES)[:SUB])
    out = model(batch[:, :, ids, :], ids)
    loss = criterion(out, Y[step * 16:(step + 1) * 16][:, ids])
    loss.backward()
    optim.step()
    print(f"mtgnn step {step}: l1 {loss.item():.5f} adjacency {model.gc(torch.arange(N_NODES)).sum().item():.5f}")


class TimeBlock(nn.Module):
    def __init__(self, c_in, c_out, kernel_size=3):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, (1, kernel_size))
        self.conv2 = nn.Conv2d(c_in, c_out, (1, kernel_size))
        self.conv3 = nn.Conv2d(c_in, c_out, (1, kernel_size))

    def forward(self, X):
        X = X.permute(0, 3, 1, 2)
        out = F.relu(self.conv1(X) + torch.sigmoid(self.conv2(X)) + self.conv3(X))
        return out.permute(0, 2, 3, 1)


class STGCNBlock(nn.Module):
    def __init__(self, c_in, spatial, c_out, n):
        super().__init__()
        self.temporal1 = TimeBlock(c_in, c_out)
        self.Theta1 = nn.Parameter(torch.FloatTensor(c_out, spatial))
        self.temporal2 = TimeBlock(spatial, c_out)
        self.batch_norm = nn.BatchNorm2d(n)
        stdv = 1. / math.sqrt(self.Theta1.shape[1])
        self.Theta1.data.uniform_(-stdv, stdv)

    def forward(self, X, A_hat):
        t = self.temporal1(X)
        lfs = torch.einsum("ij,jklm->kilm", [A_hat, t.permute(1, 0, 2, 3)])
        return self.batch_norm(self.temporal2(F.relu(torch.matmul(lfs, self.Theta1))))


A = (rng(5).random((N_NODES, N_NODES)) < 0.4).astype(np.float32) + np.eye(N_NODES, dtype=np.float32)
d = np.reciprocal(np.sqrt(A.sum(1)))
A_wave = torch.from_numpy(d[:, None] * A * d[None, :])
stgcn = nn.ModuleList([STGCNBlock(1, 4, 8, N_NODES), nn.Linear((T_IN - 4) * 8, 2)])
same_weights(stgcn)
opt = torch.optim.Adam(stgcn.parameters(), lr=1e-3)
Xs, Ys = windows(series[:150], T_IN, 2)
for step in range(args.steps):
    x = Xs[step * 10:(step + 1) * 10].permute(0, 2, 1).unsqueeze(-1)  # (B, nodes, time, 1)
    h = stgcn[0](x, A_wave)
    out = stgcn[1](h.reshape(h.shape[0], h.shape[1], -1))
    loss = F.mse_loss(out[..., -1], Ys[step * 10:(step + 1) * 10])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"stgcn step {step}: mse {loss.item():.5f} running_var {stgcn[0].batch_norm.running_var.sum().item():.5f}")


def l2normalize(v, eps=1e-12):
    return v / (v.norm() + eps)


class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight"):
        super().__init__()
        self.module, self.name = module, name
        w = getattr(self.module, self.name)
        height = w.data.shape[0]
        width = w.view(height, -1).data.shape[1]
        u = Parameter(w.data.new(height).normal_(0, 1), requires_grad=False)
        v = Parameter(w.data.new(width).normal_(0, 1), requires_grad=False)
        u.data, v.data = l2normalize(u.data), l2normalize(v.data)
        w_bar = Parameter(w.data)
        del self.module._parameters[self.name]
        self.module.register_parameter(self.name + "_u", u)
        self.module.register_parameter(self.name + "_v", v)
        self.module.register_parameter(self.name + "_bar", w_bar)

    def forward(self, *args):
        u, v = getattr(self.module, self.name + "_u"), getattr(self.module, self.name + "_v")
        w = getattr(self.module, self.name + "_bar")
        height = w.data.shape[0]
        v.data = l2normalize(torch.mv(torch.t(w.view(height, -1).data), u.data))
        u.data = l2normalize(torch.mv(w.view(height, -1).data, v.data))
        sigma = u.dot(w.view(height, -1).mv(v))
        setattr(self.module, self.name, w / sigma.expand_as(w))
        return self.module.forward(*args)


class AnomalyAttention(nn.Module):
    def __init__(self, win, d_model):
        super().__init__()
        self.embed = SpectralNorm(nn.Linear(N_NODES, d_model))
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.sigma = nn.Linear(d_model, 1)
        self.out = nn.Linear(d_model, N_NODES)
        self.distances = torch.zeros((win, win))
        for i in range(win):
            for j in range(win):
                self.distances[i][j] = abs(i - j)

    def forward(self, x):
        h = self.embed(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        series = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
        sigma = torch.sigmoid(self.sigma(h) * 5) + 1e-5
        sigma = torch.pow(3, sigma) - 1
        sigma = sigma.repeat(1, 1, x.shape[1])
        prior = self.distances.unsqueeze(0).repeat(x.shape[0], 1, 1)
        prior = 1.0 / (math.sqrt(2 * math.pi) * sigma) * torch.exp(-prior ** 2 / 2 / (sigma ** 2))
        return self.out(series @ v), series, prior


def my_kl_loss(p, q):
    return torch.mean(torch.sum(p * (torch.log(p + 0.0001) - torch.log(q + 0.0001)), dim=-1), dim=1)


WIN = 16
detector = AnomalyAttention(WIN, 16)
same_weights(detector)
opt = torch.optim.Adam(detector.parameters(), lr=1e-3)
segments = torch.from_numpy(np.stack([series[i:i + WIN] for i in range(0, 100, 4)]))
for step in range(args.steps):
    x = segments[step * 6:(step + 1) * 6]
    out, series_att, prior = detector(x)
    prior = prior / torch.unsqueeze(torch.sum(prior, dim=-1), dim=-1)
    series_loss = torch.mean(my_kl_loss(series_att, prior.detach()) + my_kl_loss(prior.detach(), series_att))
    prior_loss = torch.mean(my_kl_loss(prior, series_att.detach()) + my_kl_loss(series_att.detach(), prior))
    rec_loss = F.mse_loss(out, x)
    loss1, loss2 = rec_loss - 3 * series_loss, rec_loss + 3 * prior_loss
    opt.zero_grad()
    loss1.backward(retain_graph=True)
    loss2.backward()
    opt.step()
    print(f"anomaly step {step}: rec {rec_loss.item():.5f} series {series_loss.item():.5f} "
          f"prior {prior_loss.item():.5f} sigma_u {detector.embed.module.weight_u.sum().item():.5f}")
detector.eval()
with torch.no_grad():
    out, series_att, prior = detector(torch.from_numpy(series[112:112 + WIN]).unsqueeze(0))
    prior = prior / torch.unsqueeze(torch.sum(prior, dim=-1), dim=-1)
    metric = torch.softmax(-my_kl_loss(series_att, prior) - my_kl_loss(prior, series_att), dim=-1)
    energy = metric * torch.mean((out - torch.from_numpy(series[112:112 + WIN])) ** 2, dim=-1)
print(f"anomaly energy {energy.sum().item():.5f} argmax {energy.argmax().item()}")


class WindowSet(Dataset):
    def __init__(self):
        x = np.stack([series[i:i + 12, :4].T for i in range(0, 120, 3)]).reshape(-1, 12)
        self.data = np.abs(x).astype(np.float32) + 0.5
        self.data[::7, 5] = 0.0  # missing values
        self.ids = np.arange(len(self.data)) % 4

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i, :-1], int(self.ids[i]), self.data[i, 1:]


class WeightedSampler(Sampler):
    def __init__(self, v):
        self.weights = torch.as_tensor(np.abs(v) / np.sum(np.abs(v)), dtype=torch.double)
        self.num_samples = self.weights.shape[0]

    def __iter__(self):
        return iter(torch.multinomial(self.weights, self.num_samples, True).tolist())

    def __len__(self):
        return self.num_samples


class DeepAR(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(4, 3)
        self.lstm = nn.LSTM(input_size=5, hidden_size=8, num_layers=2, dropout=0.0)
        self.mu, self.presigma = nn.Linear(16, 1), nn.Linear(16, 1)

    def forward(self, x, idx, hidden, cell):
        lstm_input = torch.cat((x, self.embedding(idx)), dim=2)
        output, (hidden, cell) = self.lstm(lstm_input, (hidden, cell))
        hidden_permute = hidden.permute(1, 2, 0).contiguous().view(hidden.shape[1], -1)
        sigma = F.softplus(self.presigma(hidden_permute))
        return torch.squeeze(self.mu(hidden_permute)), torch.squeeze(sigma), hidden, cell


def gaussian_nll(mu, sigma, labels):
    zero_index = labels != 0
    distribution = torch.distributions.normal.Normal(mu[zero_index], sigma[zero_index])
    return -torch.mean(distribution.log_prob(labels[zero_index]))


windows_set = WindowSet()
deepar = DeepAR()
same_weights(deepar)
opt = torch.optim.Adam(deepar.parameters(), lr=1e-2)
loader = DataLoader(windows_set, batch_size=8, sampler=WeightedSampler(windows_set.data.mean(1)))
for step, (x, idx, labels) in enumerate(loader):
    if step == args.steps:
        break
    x = x.t().unsqueeze(-1)  # (time, batch, 1)
    x = torch.cat([x, torch.linspace(0, 1, x.shape[0]).view(-1, 1, 1).expand(-1, x.shape[1], 1)], dim=2)
    labels = labels.t()
    hidden = torch.zeros(2, x.shape[1], 8)
    cell = torch.zeros(2, x.shape[1], 8)
    loss = torch.zeros(1)
    mu = torch.zeros(x.shape[1])
    for t in range(x.shape[0]):
        zero_index = x[t, :, 0] == 0
        if t > 0 and torch.sum(zero_index) > 0:
            x[t, zero_index, 0] = mu[zero_index].detach()
        mu, sigma, hidden, cell = deepar(x[t].unsqueeze_(0).clone(), idx.unsqueeze(0), hidden, cell)
        loss += gaussian_nll(mu, sigma, labels[t])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"deepar step {step}: nll {loss.item() / x.shape[0]:.5f} ids {idx.tolist()}")
