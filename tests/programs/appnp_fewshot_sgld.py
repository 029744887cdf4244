"""Three research-code idioms in one script: APPNP node classification (gasteigerjo/ppnp), prototypical-network
episodes (orobix's Prototypical-Networks) and a joint energy model's SGLD replay buffer (wgrathwohl/JEM).

APPNP: a propagation matrix built in NumPy, handed to the module as a legacy ``torch.sparse.FloatTensor(LongTensor,
FloatTensor, shape)`` and kept as a sparse *buffer*; dropout on a sparse matrix through ``coalesce()``, ``_values()``,
``_indices()`` and ``F.dropout``; a first layer taking a sparse attribute matrix (``torch.sparse.mm`` and
``torch.sparse.addmm`` with an expanded bias); power iteration ``A_drop @ preds + alpha * local``; an L2 penalty on
the first layer only; early stopping that keeps ``copy.deepcopy(model.state_dict())`` (the sparse buffer too) and
loads it back at the end.
Prototypical networks: a batch sampler over a NaN-filled ``torch.Tensor(ndarray)`` index table (``np.isnan``,
``np.where`` and ``np.argwhere`` on tensors, ``torch.randperm`` of a 0-d tensor, an uninitialised
``torch.LongTensor(n)`` filled slice by slice) feeding ``DataLoader(batch_sampler=...)``; prototypes from
``target.eq(c).nonzero()[:n_support].squeeze(1)`` per ``torch.unique`` class; squared distances through
``unsqueeze().expand()``; ``log_softmax(-dists).view(...).gather(2, ...)``.
JEM: a classifier whose ``logsumexp`` is an energy, ``t.FloatTensor(bs, ...).uniform_(-1, 1)`` initial samples, a
replay buffer indexed by ``randint`` (class-conditional offsets), SGLD steps
``x_k.data += lr * autograd.grad(f(x_k).sum(), [x_k], retain_graph=True)[0] + std * randn_like(x_k)`` and the
samples written back with ``replay_buffer[inds] = ...``."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(27)

# ---------------------------------------------------------------- APPNP on a two-community graph
N, FEAT, CLASSES = 60, 30, 3
labels_np = np.repeat(np.arange(CLASSES), N // CLASSES)
same = labels_np[:, None] == labels_np[None, :]
adj = np.triu((r.random((N, N)) < np.where(same, 0.15, 0.02)).astype(np.float64), 1)
adj = adj + adj.T
attr = (r.random((N, FEAT)) < 0.1 + 0.2 * (np.arange(FEAT)[None, :] % CLASSES == labels_np[:, None])).astype(np.float64)
attr = attr / np.maximum(attr.sum(1, keepdims=True), 1)  # row-normalised bag of words


def to_sparse(m):
    row, col = np.nonzero(m)
    return torch.sparse.FloatTensor(torch.LongTensor(np.array([row, col])), torch.FloatTensor(m[row, col]), m.shape)


def calc_a_hat(a):
    a = a + np.eye(a.shape[0])
    d_invsqrt = 1 / np.sqrt(a.sum(1))
    return d_invsqrt[:, None] * a * d_invsqrt[None, :]


class SparseDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, input):
        input_coal = input.coalesce()
        drop_val = F.dropout(input_coal._values(), self.p, self.training)
        return torch.sparse.FloatTensor(input_coal._indices(), drop_val, input.shape)


class MixedDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.dense_dropout, self.sparse_dropout = nn.Dropout(p), SparseDropout(p)

    def forward(self, input):
        return self.sparse_dropout(input) if input.is_sparse else self.dense_dropout(input)


class MixedLinear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(in_features, out_features))
        self.bias = nn.Parameter(torch.Tensor(out_features)) if bias else None
        nn.init.kaiming_uniform_(self.weight, mode="fan_out", a=5 ** 0.5)
        if self.bias is not None:
            _, fan_out = nn.init._calculate_fan_in_and_fan_out(self.weight)
            nn.init.uniform_(self.bias, -1 / fan_out ** 0.5, 1 / fan_out ** 0.5)

    def forward(self, input):
        if self.bias is None:
            return torch.sparse.mm(input, self.weight) if input.is_sparse else input.matmul(self.weight)
        if input.is_sparse:
            return torch.sparse.addmm(self.bias.expand(input.shape[0], -1), input, self.weight)
        return torch.addmm(self.bias, input, self.weight)


class PPRPowerIteration(nn.Module):
    def __init__(self, adj_matrix, alpha, niter, drop_prob):
        super().__init__()
        self.alpha, self.niter = alpha, niter
        self.register_buffer("A_hat", to_sparse((1 - alpha) * calc_a_hat(adj_matrix)))
        self.dropout = MixedDropout(drop_prob)

    def forward(self, local_preds, idx):
        preds = local_preds
        for _ in range(self.niter):
            preds = self.dropout(self.A_hat) @ preds + self.alpha * local_preds
        return preds[idx]


class APPNP(nn.Module):
    def __init__(self, nfeatures, nclasses, hidden, drop_prob, propagation, bias):
        super().__init__()
        self.fcs = nn.ModuleList([MixedLinear(nfeatures, hidden, bias=bias), nn.Linear(hidden, nclasses, bias=bias)])
        self.reg_params = list(self.fcs[0].parameters())
        self.dropout = MixedDropout(drop_prob)
        self.propagation = propagation

    def forward(self, attr_matrix, idx):
        hidden = F.relu(self.fcs[0](self.dropout(attr_matrix)))
        return F.log_softmax(self.propagation(self.fcs[1](self.dropout(hidden)), idx), dim=-1)


attr_sparse = to_sparse(attr)
labels = torch.LongTensor(labels_np)
perm = r.permutation(N)
idx_train, idx_stop, idx_test = (torch.LongTensor(perm[a:b]) for a, b in ((0, 15), (15, 35), (35, N)))
for bias in (False, True):
    model = APPNP(FEAT, CLASSES, 16, 0.5, PPRPowerIteration(adj, alpha=0.1, niter=5, drop_prob=0.2), bias)
    same_weights(model.fcs)  # (the parameters: the sparse buffer is computed, the same in both)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    reg_lambda = torch.tensor(5e-3)
    best = (float("inf"), None, -1)
    for epoch in range(12):
        model.train()
        optimizer.zero_grad()
        log_preds = model(attr_sparse, idx_train)
        loss = F.nll_loss(log_preds, labels[idx_train]) + reg_lambda / 2 * sum(
            torch.sum(param ** 2) for param in model.reg_params)
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.set_grad_enabled(False):
            stop_loss = F.nll_loss(model(attr_sparse, idx_stop), labels[idx_stop]).item()
        if stop_loss < best[0]:
            best = (stop_loss, copy.deepcopy(model.state_dict()), epoch)
        print(f"appnp bias={bias} epoch {epoch}: train {loss.item():.5f} stopping {stop_loss:.5f}")
    model.load_state_dict(best[1])
    with torch.no_grad():
        preds = model(attr_sparse, idx_test).argmax(1)
    print(f"appnp bias={bias} best epoch {best[2]}, test accuracy {(preds == labels[idx_test]).float().mean().item():.4f}",
          "buffer", model.propagation.A_hat.is_sparse, model.propagation.A_hat._nnz())


# ---------------------------------------------------------------- prototypical-network episodes
class PrototypicalBatchSampler:
    def __init__(self, labels, classes_per_it, num_samples, iterations):
        self.labels, self.classes_per_it, self.sample_per_class, self.iterations = (labels, classes_per_it,
                                                                                    num_samples, iterations)
        self.classes, self.counts = np.unique(self.labels, return_counts=True)
        self.classes = torch.LongTensor(self.classes)
        self.indexes = torch.Tensor(np.empty((len(self.classes), max(self.counts)), dtype=int) * np.nan)
        self.numel_per_class = torch.zeros_like(self.classes)
        for idx, label in enumerate(self.labels):
            label_idx = np.argwhere(self.classes == label).item()
            self.indexes[label_idx, np.where(np.isnan(self.indexes[label_idx]))[0][0]] = idx
            self.numel_per_class[label_idx] += 1

    def __iter__(self):
        spc, cpi = self.sample_per_class, self.classes_per_it
        for _ in range(self.iterations):
            batch = torch.LongTensor(spc * cpi)
            c_idxs = torch.randperm(len(self.classes))[:cpi]
            for i, c in enumerate(self.classes[c_idxs]):
                label_idx = torch.arange(len(self.classes)).long()[self.classes == c].item()
                sample_idxs = torch.randperm(self.numel_per_class[label_idx])[:spc]
                batch[i * spc:(i + 1) * spc] = self.indexes[label_idx][sample_idxs]
            yield batch[torch.randperm(len(batch))]

    def __len__(self):
        return self.iterations


def euclidean_dist(x, y):
    n, m, d = x.size(0), y.size(0), x.size(1)
    return torch.pow(x.unsqueeze(1).expand(n, m, d) - y.unsqueeze(0).expand(n, m, d), 2).sum(2)


def prototypical_loss(input, target, n_support):
    classes = torch.unique(target)
    n_classes = len(classes)
    n_query = target.eq(classes[0].item()).sum().item() - n_support
    support_idxs = [target.eq(c).nonzero()[:n_support].squeeze(1) for c in classes]
    prototypes = torch.stack([input[idx_list].mean(0) for idx_list in support_idxs])
    query_idxs = torch.stack([target.eq(c).nonzero()[n_support:] for c in classes]).view(-1)
    dists = euclidean_dist(input[query_idxs], prototypes)
    log_p_y = F.log_softmax(-dists, dim=1).view(n_classes, n_query, -1)
    target_inds = torch.arange(0, n_classes).view(n_classes, 1, 1).expand(n_classes, n_query, 1).long()
    loss_val = -log_p_y.gather(2, target_inds).squeeze().view(-1).mean()
    _, y_hat = log_p_y.max(2)
    return loss_val, y_hat.eq(target_inds.squeeze(2)).float().mean()


SHOT_CLASSES = 8
centres = r.normal(0, 1, (SHOT_CLASSES, 1, 8, 8)).astype(np.float32)
images = np.concatenate([c + 1.5 * r.normal(0, 1, (5, 1, 8, 8)).astype(np.float32) for c in centres])
shot_labels = np.repeat(np.arange(SHOT_CLASSES), 5)
dataset = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(shot_labels))
sampler = PrototypicalBatchSampler(shot_labels, classes_per_it=4, num_samples=4, iterations=5)
loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler)
protonet = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
same_weights(protonet)
optim = torch.optim.Adam(protonet.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer=optim, gamma=0.5, step_size=1)
for epoch in range(2):
    for x, y in loader:
        optim.zero_grad()
        loss, acc = prototypical_loss(protonet(x), target=y, n_support=2)
        loss.backward()
        optim.step()
        print(f"protonet epoch {epoch}: loss {loss.item():.6f} acc {acc.item():.4f} classes {sorted(set(y.tolist()))}")
    scheduler.step()


# ---------------------------------------------------------------- JEM: SGLD from a replay buffer
class CCF(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.f = nn.Sequential(nn.Flatten(), nn.Linear(2 * 6 * 6, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32),
                               nn.LeakyReLU(0.2))
        self.class_output = nn.Linear(32, n_classes)

    def classify(self, x):
        return self.class_output(self.f(x)).squeeze()

    def forward(self, x, y=None):
        logits = self.classify(x)
        return logits.logsumexp(1) if y is None else torch.gather(logits, 1, y[:, None])


n_classes, bs, buffer_size = 4, 8, 40
f = CCF(n_classes)
same_weights(f)
replay_buffer = torch.FloatTensor(buffer_size, 2, 6, 6).uniform_(-1, 1)
energy_optim = torch.optim.Adam(f.parameters(), lr=1e-3)


def sample_q(f, replay_buffer, y=None, n_steps=5, sgld_lr=1.0, sgld_std=0.01, reinit_freq=0.05):
    f.eval()
    per_class = len(replay_buffer) if y is None else len(replay_buffer) // n_classes
    inds = torch.randint(0, per_class, (bs,))
    if y is not None:
        inds = y.cpu() * per_class + inds
    choose_random = (torch.rand(bs) < reinit_freq).float()[:, None, None, None]
    init_sample = choose_random * torch.FloatTensor(bs, 2, 6, 6).uniform_(-1, 1) + (1 - choose_random) * replay_buffer[inds]
    x_k = torch.autograd.Variable(init_sample, requires_grad=True)
    for _ in range(n_steps):
        f_prime = torch.autograd.grad(f(x_k, y=y).sum(), [x_k], retain_graph=True)[0]
        x_k.data += sgld_lr * f_prime + sgld_std * torch.randn_like(x_k)
    f.train()
    final_samples = x_k.detach()
    replay_buffer[inds] = final_samples.cpu()
    return final_samples


for step in range(4):
    x_data = torch.from_numpy(np.tanh(r.normal(0, 1, (bs, 2, 6, 6))).astype(np.float32))
    y_data = torch.from_numpy(r.integers(0, n_classes, bs))
    x_q, x_q_lab = sample_q(f, replay_buffer), sample_q(f, replay_buffer, y=y_data)
    fp, fq = f(x_data).mean(), f(x_q).mean()
    fp_y, fq_y = f(x_data, y_data).mean(), f(x_q_lab, y_data).mean()
    loss = -(fp - fq) + nn.CrossEntropyLoss()(f.classify(x_data), y_data) - (fp_y - fq_y)
    energy_optim.zero_grad()
    loss.backward()
    energy_optim.step()
    print(f"jem step {step}: f(x_p_d)={fp.item():.6f} f(x_q)={fq.item():.6f} loss {loss.item():.6f} "
          f"buffer {replay_buffer.abs().sum().item():.4f}")
