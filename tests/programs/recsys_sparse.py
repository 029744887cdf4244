"""A recommender (DLRM / neural collaborative filtering idiom): user and item nn.Embedding(sparse=True), a
multi-hot feature bag via nn.EmbeddingBag(mode="sum", sparse=True) with offsets and per_sample_weights, pairwise
dot-product interactions (bmm + triu_indices), sparse gradients stepped by optim.SparseAdam and the dense ones by
Adam, BPR loss with negatives, and hit-rate@3 by topk."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(0)
U, ITEMS, TAGS, D = 10, 20, 12, 8


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(U, D, sparse=True)
        self.item = nn.Embedding(ITEMS, D, sparse=True)
        self.tags = nn.EmbeddingBag(TAGS, D, mode="sum", sparse=True)
        self.bottom = nn.Sequential(nn.Linear(3, D), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(D + 6, 16), nn.ReLU(), nn.Linear(16, 1))
        li, lj = torch.triu_indices(4, 4, offset=1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)

    def forward(self, users, items, dense, tag_ids, tag_offsets, tag_weights):
        feats = torch.stack([self.bottom(dense), self.user(users), self.item(items),
                             self.tags(tag_ids, tag_offsets, per_sample_weights=tag_weights)], dim=1)
        z = torch.bmm(feats, feats.transpose(1, 2))
        inter = z[:, self.li, self.lj]
        return self.top(torch.cat([feats[:, 0], inter], dim=1)).squeeze(1)


def batch(n):
    users = torch.from_numpy(r.integers(0, U, n))
    dense = torch.from_numpy(r.standard_normal((n, 3)).astype("float32"))
    counts = r.integers(1, 4, n)
    tag_ids = torch.from_numpy(r.integers(0, TAGS, counts.sum()))
    offsets = torch.from_numpy(counts.cumsum() - counts)
    weights = torch.from_numpy(r.random(counts.sum()).astype("float32"))
    pos = (users * 2 + 1) % ITEMS
    neg = torch.from_numpy(r.integers(0, ITEMS, n))
    return users, pos, neg, dense, tag_ids, offsets, weights


model = Recommender()
same_weights(model)
sparse_params = [model.user.weight, model.item.weight, model.tags.weight]
dense_params = [p for n, p in model.named_parameters() if not any(p is q for q in sparse_params)]
opt_sparse = torch.optim.SparseAdam(sparse_params, lr=0.05)
opt_dense = torch.optim.Adam(dense_params, lr=0.01)
for step in range(8):
    users, pos, neg, dense, tag_ids, offsets, weights = batch(16)
    s_pos = model(users, pos, dense, tag_ids, offsets, weights)
    s_neg = model(users, neg, dense, tag_ids, offsets, weights)
    loss = -F.logsigmoid(s_pos - s_neg).mean()
    opt_sparse.zero_grad()
    opt_dense.zero_grad()
    loss.backward()
    if step == 0:
        g = model.user.weight.grad
        print("sparse grad", g.is_sparse, g.layout, tuple(g.coalesce().indices().shape), model.tags.weight.grad.is_sparse)
    opt_sparse.step()
    opt_dense.step()
    print(f"step {step} bpr {loss.item():.6f}")
with torch.no_grad():
    users = torch.arange(U)
    scores = torch.stack([model(users, torch.full((U,), i), torch.zeros(U, 3), torch.zeros(U, dtype=torch.long),
                                torch.arange(U), torch.ones(U)) for i in range(ITEMS)], dim=1)
    top = scores.topk(3, dim=1).indices
    hits = (top == ((users * 2 + 1) % ITEMS).unsqueeze(1)).any(1).float().mean()
print(f"hit@3 {hits.item():.4f}", "state", sorted(opt_sparse.state_dict()["state"][0]))
