"""Four research-code idioms in one script: knowledge-graph embeddings (ibalazevic/TuckER and
DeepGraphLearning/KnowledgeGraphEmbedding's RotatE), an RNN-T loss by the forward algorithm
(lorenlugosch/transducer-tutorial), I3D's "same"-padded 3-D convolutions (piergiaj/pytorch-i3d) and matching-network
episodes (oscarknagg/few-shot).

TuckER: entity and relation ``nn.Embedding``s with ``xavier_normal_`` on ``.weight.data``, a core tensor
``nn.Parameter(torch.tensor(np.random.uniform(...), dtype=torch.float, requires_grad=True))`` contracted by
``torch.mm(r, W.view(d2, -1)).view(-1, d1, d1)`` and ``torch.bmm``, BatchNorm1d and dropout around it, scores against
``E.weight.transpose(1, 0)`` through ``sigmoid`` and ``BCELoss`` on label-smoothed ``torch.FloatTensor`` targets
built in NumPy, ``ExponentialLR``; filtered ranking that writes ``predictions[j, filt] = 0.0`` with a Python list,
restores the target with ``.item()``, sorts with ``torch.sort(descending=True)`` and finds the rank with ``np.where``.
RotatE: bare ``nn.Parameter`` embeddings drawn with ``nn.init.uniform_`` in a fixed range, ``torch.index_select``
of head, relation and tail (``unsqueeze(1)``, ``.view(batch, k, -1)`` for the negatives), ``torch.chunk(x, 2,
dim=2)`` into real and imaginary halves, the relation's phase through ``cos``/``sin``, ``torch.stack([re, im],
dim=0).norm(dim=0)``, self-adversarial negative weights ``F.softmax(score * alpha, dim=1).detach()``,
``F.logsigmoid``, word2vec-style subsampling weights ``torch.sqrt(1 / torch.Tensor([count]))``.
RNN-T: a bidirectional GRU encoder, a ``GRUCell`` predictor started from a learned ``nn.Parameter`` state
(``torch.stack([state] * batch)``), a joiner ``tanh(f.unsqueeze(2) + g.unsqueeze(1))``, ``log_softmax(3)``, the
forward variable written cell by cell into ``torch.zeros(B, T, U + 1)`` with ``log_alpha[:, t, u] = torch.logsumexp(
torch.stack([...]), dim=0)`` and ``torch.gather`` of the labels, then greedy decoding one step at a time.
I3D: a ``Unit3D`` whose forward computes TensorFlow's "same" padding with ``np.ceil`` and pads with ``F.pad`` before
an unpadded ``nn.Conv3d``, a ``MaxPool3dSamePadding(nn.MaxPool3d)`` that pads and calls ``super().forward``,
``AvgPool3d``, ``squeeze(3).squeeze(3)``, ``F.upsample(..., mode='linear')`` back to the clip's length, a
localisation and a classification ``binary_cross_entropy_with_logits`` (``torch.max(x, dim=2)[0]``), gradients
accumulated over two clips, SGD with momentum and ``MultiStepLR``.
Matching networks: an episode ``Sampler`` subclass that calls ``super().__init__()`` without the old ``data_source``
(PyTorch 2.2 removed it), labels ``torch.arange(0, k, 1 / q).long()``, cosine distances from ``x / x.norm(...)``
and ``mm``, an attention over ``-distances``, one-hot support labels by ``scatter(1, y, 1)``, ``mm`` of both,
``clamp`` and ``log`` into ``NLLLoss``, and ``clip_grad_norm_``."""
import math
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(28)
np.random.seed(28)

# ---------------------------------------------------------------- a small knowledge graph (with inverse relations)
N_ENT, N_REL = 30, 3
triples = sorted({(int(h), int(k), int((h * (k + 2) + r.integers(0, 3)) % N_ENT))
                  for h, k in zip(r.integers(0, N_ENT, 160), r.integers(0, N_REL, 160))})
triples += [(t, k + N_REL, h) for h, k, t in triples]
order = r.permutation(len(triples))
train = [triples[i] for i in order[:-20]]
test = [triples[i] for i in order[-20:]]
er_vocab = defaultdict(list)
for h, k, t in triples:
    er_vocab[(h, k)].append(t)


class TuckER(nn.Module):
    def __init__(self, d1, d2):
        super().__init__()
        self.E = nn.Embedding(N_ENT, d1)
        self.R = nn.Embedding(2 * N_REL, d2)
        self.W = nn.Parameter(torch.tensor(np.random.uniform(-1, 1, (d2, d1, d1)), dtype=torch.float,
                                           requires_grad=True))
        self.input_dropout, self.hidden_dropout1, self.hidden_dropout2 = nn.Dropout(0.2), nn.Dropout(0.3), nn.Dropout(0.3)
        self.bn0, self.bn1 = nn.BatchNorm1d(d1), nn.BatchNorm1d(d1)
        self.loss = nn.BCELoss()

    def init(self):
        nn.init.xavier_normal_(self.E.weight.data)
        nn.init.xavier_normal_(self.R.weight.data)

    def forward(self, e1_idx, r_idx):
        e1 = self.E(e1_idx)
        x = self.input_dropout(self.bn0(e1)).view(-1, 1, e1.size(1))
        rel = self.R(r_idx)
        W_mat = torch.mm(rel, self.W.view(rel.size(1), -1)).view(-1, e1.size(1), e1.size(1))
        x = torch.bmm(x, self.hidden_dropout1(W_mat)).view(-1, e1.size(1))
        x = self.hidden_dropout2(self.bn1(x))
        return torch.sigmoid(torch.mm(x, self.E.weight.transpose(1, 0)))


tucker = TuckER(8, 6)
tucker.init()
same_weights(tucker)
opt = torch.optim.Adam(tucker.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.ExponentialLR(opt, 0.95)
pairs = sorted({(h, k) for h, k, _ in train})
for it in range(1, 4):
    tucker.train()
    losses = []
    for j in range(0, len(pairs), 64):
        batch = np.array(pairs[j:j + 64])
        targets = np.zeros((len(batch), N_ENT))
        for i, pair in enumerate(batch):
            targets[i, er_vocab[tuple(pair)]] = 1.0
        targets = torch.FloatTensor(targets)
        targets = ((1.0 - 0.1) * targets) + (1.0 / targets.size(1))
        opt.zero_grad()
        loss = tucker.loss(tucker(torch.tensor(batch[:, 0]), torch.tensor(batch[:, 1])), targets)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    scheduler.step()
    print(f"tucker iteration {it} loss {np.mean(losses):.6f} lr {scheduler.get_last_lr()[0]:.6f}")

tucker.eval()
ranks = []
with torch.no_grad():
    batch = np.array(test)
    e2_idx = torch.tensor(batch[:, 2])
    predictions = tucker(torch.tensor(batch[:, 0]), torch.tensor(batch[:, 1]))
    for j in range(batch.shape[0]):
        filt = er_vocab[(batch[j][0], batch[j][1])]
        target_value = predictions[j, e2_idx[j]].item()
        predictions[j, filt] = 0.0
        predictions[j, e2_idx[j]] = target_value
    sort_values, sort_idxs = torch.sort(predictions, dim=1, descending=True)
    sort_idxs = sort_idxs.cpu().numpy()
    for j in range(batch.shape[0]):
        ranks.append(np.where(sort_idxs[j] == e2_idx[j].item())[0][0] + 1)
print(f"tucker mean rank {np.mean(ranks):.4f} mrr {np.mean(1.0 / np.array(ranks)):.6f} "
      f"top score {sort_values[:, 0].sum().item():.6f}")

# ---------------------------------------------------------------- RotatE with self-adversarial negative sampling
HIDDEN, GAMMA, EPS = 6, 6.0, 2.0
embedding_range = (GAMMA + EPS) / HIDDEN
entity_embedding = nn.Parameter(torch.zeros(N_ENT, HIDDEN * 2))
nn.init.uniform_(entity_embedding, a=-embedding_range, b=embedding_range)
relation_embedding = nn.Parameter(torch.zeros(2 * N_REL, HIDDEN))
nn.init.uniform_(relation_embedding, a=-embedding_range, b=embedding_range)
kge = nn.ParameterList([entity_embedding, relation_embedding])
same_weights(kge)
count = defaultdict(lambda: 4)
for h, k, t in train:
    count[(h, k)] += 1
    count[(t, -k - 1)] += 1


def rotate(head, relation, tail):
    re_head, im_head = torch.chunk(head, 2, dim=2)
    re_tail, im_tail = torch.chunk(tail, 2, dim=2)
    phase_relation = relation / (embedding_range / math.pi)
    re_relation, im_relation = torch.cos(phase_relation), torch.sin(phase_relation)
    re_score = re_head * re_relation - im_head * im_relation - re_tail
    im_score = re_head * im_relation + im_head * re_relation - im_tail
    score = torch.stack([re_score, im_score], dim=0).norm(dim=0)
    return GAMMA - score.sum(dim=2)


opt = torch.optim.Adam(kge.parameters(), lr=0.02)
for step in range(4):
    batch = np.array([train[i] for i in r.choice(len(train), 16, replace=False)])
    negatives = torch.from_numpy(r.integers(0, N_ENT, (16, 5)))
    weight = torch.cat([torch.sqrt(1 / torch.Tensor([count[(h, k)] + count[(t, -k - 1)]])) for h, k, t in batch])
    sample = torch.from_numpy(batch)
    head = torch.index_select(entity_embedding, dim=0, index=sample[:, 0]).unsqueeze(1)
    relation = torch.index_select(relation_embedding, dim=0, index=sample[:, 1]).unsqueeze(1)
    tail = torch.index_select(entity_embedding, dim=0, index=sample[:, 2]).unsqueeze(1)
    negative_tail = torch.index_select(entity_embedding, dim=0, index=negatives.view(-1)).view(16, 5, -1)
    negative_score = rotate(head, relation, negative_tail)
    negative_score = (F.softmax(negative_score * 1.0, dim=1).detach() * F.logsigmoid(-negative_score)).sum(dim=1)
    positive_score = F.logsigmoid(rotate(head, relation, tail)).squeeze(dim=1)
    positive_loss = -(weight * positive_score).sum() / weight.sum()
    negative_loss = -(weight * negative_score).sum() / weight.sum()
    loss = (positive_loss + negative_loss) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rotate step {step} positive {positive_loss.item():.6f} negative {negative_loss.item():.6f}")

# ---------------------------------------------------------------- RNN-T: restore dropped vowels
VOCAB = 28  # 0: blank, 1..26 letters, 27 space
DIM = 12


def encode(s):
    return [27 if c == " " else ord(c) - 96 for c in s]


class Transducer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_x = nn.Embedding(VOCAB, DIM)
        self.encoder = nn.GRU(DIM, DIM, num_layers=1, batch_first=True, bidirectional=True)
        self.enc_out = nn.Linear(2 * DIM, DIM)
        self.embed_y = nn.Embedding(VOCAB, DIM)
        self.predictor = nn.GRUCell(DIM, DIM)
        self.initial_state = nn.Parameter(torch.randn(DIM))
        self.joiner = nn.Linear(DIM, VOCAB)

    def encode(self, x):
        return self.enc_out(self.encoder(self.embed_x(x))[0])

    def predictor_step(self, y_prev, state):
        state = self.predictor(self.embed_y(y_prev), state)
        return state, state

    def predict(self, y):
        state = torch.stack([self.initial_state] * y.shape[0])
        outs = []
        for u in range(y.shape[1] + 1):
            y_prev = torch.zeros(y.shape[0], dtype=torch.long) if u == 0 else y[:, u - 1]
            out, state = self.predictor_step(y_prev, state)
            outs.append(out)
        return torch.stack(outs, dim=1)

    def join(self, f, g):
        return self.joiner(torch.tanh(f + g))

    def log_likelihood(self, x, y, T, U):
        joiner_out = self.join(self.encode(x).unsqueeze(2), self.predict(y).unsqueeze(1)).log_softmax(3)
        B, T_max, U_max = joiner_out.shape[0], joiner_out.shape[1], joiner_out.shape[2] - 1
        log_alpha = torch.zeros(B, T_max, U_max + 1)
        for t in range(T_max):
            for u in range(U_max + 1):
                if u == 0 and t > 0:
                    log_alpha[:, t, u] = log_alpha[:, t - 1, u] + joiner_out[:, t - 1, 0, 0]
                elif u > 0:
                    emit = log_alpha[:, t, u - 1] + torch.gather(joiner_out[:, t, u - 1], dim=1,
                                                                 index=y[:, u - 1].view(-1, 1)).reshape(-1)
                    log_alpha[:, t, u] = emit if t == 0 else torch.logsumexp(torch.stack([
                        log_alpha[:, t - 1, u] + joiner_out[:, t - 1, u, 0], emit]), dim=0)
        b = torch.arange(B)
        return log_alpha[b, T - 1, U] + joiner_out[b, T - 1, U, 0]

    def greedy(self, x, T):
        f = self.encode(x)
        t, out, state = 0, [], self.initial_state.unsqueeze(0)
        g, new_state = self.predictor_step(torch.tensor([0]), state)
        while t < T and len(out) < 12:
            argmax = self.join(f[0, t], g[0]).max(-1)[1].item()
            if argmax == 0:
                t += 1
            else:
                out.append(argmax)
                state = new_state
                g, new_state = self.predictor_step(torch.tensor([argmax]), state)
        return out


rnnt = Transducer()
same_weights(rnnt)
words = ["bat", "cat on", "ate", "in a", "toe", "sea"]
opt = torch.optim.Adam(rnnt.parameters(), lr=0.03)
for step in range(4):
    lines = [words[i] for i in r.choice(len(words), 3, replace=False)]
    xs = [encode("".join(c for c in s if c not in "aeiou")) for s in lines]
    ys = [encode(s) for s in lines]
    T, U = torch.tensor([len(v) for v in xs]), torch.tensor([len(v) for v in ys])
    x = torch.stack([torch.tensor(v + [0] * (int(T.max()) - len(v))) for v in xs])
    y = torch.stack([torch.tensor(v + [0] * (int(U.max()) - len(v))) for v in ys])
    loss = -rnnt.log_likelihood(x, y, T, U).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rnnt step {step} nll {loss.item():.6f}")
rnnt.eval()
with torch.no_grad():
    print("rnnt greedy", rnnt.greedy(torch.tensor([encode("ct n")]), 4))


# ---------------------------------------------------------------- I3D blocks with "same" padding
class MaxPool3dSamePadding(nn.MaxPool3d):
    def compute_pad(self, dim, s):
        if s % self.stride[dim] == 0:
            return max(self.kernel_size[dim] - self.stride[dim], 0)
        return max(self.kernel_size[dim] - (s % self.stride[dim]), 0)

    def forward(self, x):
        pads = [self.compute_pad(i, s) for i, s in enumerate(x.size()[2:])]
        pad = []
        for p in reversed(pads):
            pad += [p // 2, p - p // 2]
        return super().forward(F.pad(x, pad))


class Unit3D(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_shape=(1, 1, 1), stride=(1, 1, 1), use_bn=True):
        super().__init__()
        self._kernel_shape, self._stride = kernel_shape, stride
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_shape, stride=stride, padding=0, bias=not use_bn)
        self.bn = nn.BatchNorm3d(out_channels, eps=0.001, momentum=0.01) if use_bn else None

    def forward(self, x):
        (batch, channel, t, h, w) = x.size()
        out_t = np.ceil(float(t) / float(self._stride[0]))  # (unused, as in the original: TF's output size)
        pads = [max(k - st, 0) if s % st == 0 else max(k - (s % st), 0)
                for k, st, s in zip(self._kernel_shape, self._stride, (t, h, w))]
        assert out_t >= 1
        x = F.pad(x, (pads[2] // 2, pads[2] - pads[2] // 2, pads[1] // 2, pads[1] - pads[1] // 2,
                      pads[0] // 2, pads[0] - pads[0] // 2))
        x = self.conv3d(x)
        return F.relu(self.bn(x)) if self.bn is not None else x


class TinyI3D(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.stem = Unit3D(3, 6, (3, 5, 5), stride=(2, 2, 2))
        self.pool = MaxPool3dSamePadding(kernel_size=[1, 3, 3], stride=(1, 2, 2), padding=0)
        self.b0 = Unit3D(6, 4)
        self.b1 = nn.Sequential(Unit3D(6, 3), Unit3D(3, 4, (3, 3, 3)))
        self.b2 = nn.Sequential(MaxPool3dSamePadding(kernel_size=[3, 3, 3], stride=(1, 1, 1), padding=0), Unit3D(6, 2))
        self.avg_pool = nn.AvgPool3d(kernel_size=[2, 4, 4], stride=(1, 1, 1))
        self.dropout = nn.Dropout(0.5)
        self.logits = Unit3D(10, classes, use_bn=False)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = torch.cat([self.b0(x), self.b1(x), self.b2(x)], dim=1)
        return self.logits(self.dropout(self.avg_pool(x))).squeeze(3).squeeze(3)


i3d = TinyI3D(5)
same_weights(i3d)
optimizer = torch.optim.SGD(i3d.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-7)
lr_sched = torch.optim.lr_scheduler.MultiStepLR(optimizer, [2, 1000])
for step in range(3):
    optimizer.zero_grad()
    for _clip in range(2):
        inputs = torch.from_numpy(r.standard_normal((1, 3, 8, 16, 16)).astype(np.float32))
        labels = torch.zeros(1, 5, 8)
        labels[0, int(r.integers(5)), int(r.integers(4)):] = 1
        per_frame_logits = F.upsample(i3d(inputs), inputs.size(2), mode='linear')
        loc_loss = F.binary_cross_entropy_with_logits(per_frame_logits, labels)
        cls_loss = F.binary_cross_entropy_with_logits(torch.max(per_frame_logits, dim=2)[0],
                                                      torch.max(labels, dim=2)[0])
        loss = (0.5 * loc_loss + 0.5 * cls_loss) / 2
        loss.backward()
    optimizer.step()
    lr_sched.step()
    print(f"i3d step {step} loc {loc_loss.item():.6f} cls {cls_loss.item():.6f} lr {lr_sched.get_last_lr()[0]:.4f}")


# ---------------------------------------------------------------- matching-network episodes
class EpisodeSampler(torch.utils.data.Sampler):
    def __init__(self, labels, episodes, n, k, q):
        super().__init__()
        self.labels, self.episodes, self.n, self.k, self.q = labels, episodes, n, k, q
        self.gen = np.random.default_rng(5)

    def __len__(self):
        return self.episodes

    def __iter__(self):
        for _ in range(self.episodes):
            classes = self.gen.choice(np.unique(self.labels), self.k, replace=False)
            picks = [self.gen.choice(np.where(self.labels == c)[0], self.n + self.q, replace=False) for c in classes]
            yield [int(i) for p in picks for i in p[:self.n]] + [int(i) for p in picks for i in p[self.n:]]


protos = r.standard_normal((6, 10))
features = np.repeat(protos, 5, axis=0) + 0.4 * r.standard_normal((30, 10))
labels_np = np.repeat(np.arange(6), 5)
dataset = torch.utils.data.TensorDataset(torch.from_numpy(features).float(), torch.from_numpy(labels_np))
N_SHOT, K_WAY, Q = 1, 3, 2
loader = torch.utils.data.DataLoader(dataset, batch_sampler=EpisodeSampler(labels_np, 4, N_SHOT, K_WAY, Q))
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
same_weights(encoder)
optimiser = torch.optim.Adam(encoder.parameters(), lr=1e-2)
loss_fn = nn.NLLLoss()
for episode, (x, _) in enumerate(loader):
    y = torch.arange(0, K_WAY, 1 / Q).long()
    embeddings = encoder(x)
    support, queries = embeddings[:N_SHOT * K_WAY], embeddings[N_SHOT * K_WAY:]
    normalised_q = queries / (queries.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-8)
    normalised_s = support / (support.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-8)
    distances = 1 - normalised_q.mm(normalised_s.transpose(0, 1))
    attention = (-distances).softmax(dim=1)
    y_support = torch.arange(0, K_WAY, 1 / N_SHOT).long().unsqueeze(-1)
    y_onehot = torch.zeros(K_WAY * N_SHOT, K_WAY).scatter(1, y_support, 1)
    y_pred = torch.mm(attention, y_onehot)
    loss = loss_fn(y_pred.clamp(1e-8, 1 - 1e-8).log(), y)
    optimiser.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
    optimiser.step()
    accuracy = (y_pred.argmax(dim=1) == y).float().mean()
    print(f"matching episode {episode} loss {loss.item():.6f} acc {accuracy.item():.4f} grad norm {norm.item():.6f}")
