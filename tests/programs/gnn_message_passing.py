"""Message-passing GNNs written without PyG, over an edge list: a GCN layer normalised by degrees from
``scatter_add_`` and aggregated with ``index_add_``, GAT layers with a softmax over each node's incoming edges
(``scatter_reduce(..., "amax")`` for the maximum, ``index_add_`` for the sums), heads concatenated or averaged,
then a graph-level readout by scatter mean/max (``bincount`` counts, ``scatter_reduce`` with
``include_self=False``) and gradients through ``scatter_reduce`` amax and prod.

    python gnn_message_passing.py
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
gen = rng(3)
N, FEAT, CLASSES = 40, 8, 3
labels_np = gen.integers(0, CLASSES, N)
x_np = gen.standard_normal((N, FEAT)).astype(np.float32) + np.eye(CLASSES, FEAT, dtype=np.float32)[labels_np]
src, dst = gen.integers(0, N, 160), gen.integers(0, N, 160)
keep = (labels_np[src] == labels_np[dst]) | (gen.random(160) < 0.2)
edge_index = torch.from_numpy(np.stack([src[keep], dst[keep]]))
edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
loops = torch.arange(N).unsqueeze(0).repeat(2, 1)
edge_index = torch.cat([edge_index, loops], dim=1)
x, y = torch.from_numpy(x_np), torch.from_numpy(labels_np)
train_mask = torch.zeros(N, dtype=torch.bool)
train_mask[torch.from_numpy(gen.permutation(N)[:25])] = True


def scatter_softmax(scores, index, num_nodes):
    # scores: [E, H]
    smax = torch.full((num_nodes, scores.size(1)), float("-inf")).scatter_reduce(
        0, index.unsqueeze(-1).expand_as(scores), scores, reduce="amax", include_self=True)
    e = (scores - smax[index]).exp()
    denom = torch.zeros(num_nodes, scores.size(1)).index_add_(0, index, e)
    return e / (denom[index] + 1e-16)


class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, edge_index):
        row, col = edge_index
        deg = torch.zeros(x.size(0)).scatter_add_(0, col, torch.ones(col.size(0)))
        dinv = deg.pow(-0.5)
        dinv.masked_fill_(dinv == float("inf"), 0)
        norm = dinv[row] * dinv[col]
        h = self.lin(x)
        out = torch.zeros_like(h).index_add_(0, col, h[row] * norm.view(-1, 1))
        return out + self.bias


class GATConv(nn.Module):
    def __init__(self, cin, cout, heads, concat=True):
        super().__init__()
        self.heads, self.cout, self.concat = heads, cout, concat
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, cout))
        self.att_dst = nn.Parameter(torch.empty(1, heads, cout))
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.lin(x).view(-1, self.heads, self.cout)
        a_src = (h * self.att_src).sum(-1)
        a_dst = (h * self.att_dst).sum(-1)
        alpha = F.leaky_relu(a_src[src] + a_dst[dst], 0.2)
        alpha = scatter_softmax(alpha, dst, x.size(0))
        msg = h[src] * alpha.unsqueeze(-1)
        out = torch.zeros(x.size(0), self.heads, self.cout).index_add_(0, dst, msg)
        return out.flatten(1) if self.concat else out.mean(dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gcn = GCNConv(FEAT, 16)
        self.gat1 = GATConv(16, 8, heads=4)
        self.gat2 = GATConv(32, CLASSES, heads=2, concat=False)

    def forward(self, x, edge_index):
        x = F.relu(self.gcn(x, edge_index))
        x = F.elu(self.gat1(x, edge_index))
        return self.gat2(x, edge_index)


model = Net()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(10):
    model.train()
    opt.zero_grad()
    out = model(x, edge_index)
    loss = F.cross_entropy(out[train_mask], y[train_mask])
    loss.backward()
    opt.step()
    with torch.no_grad():
        pred = out.argmax(dim=1)
        acc = (pred[~train_mask] == y[~train_mask]).sum().item() / int((~train_mask).sum())
    print(f"epoch {epoch} loss {loss.item():.6f} val {acc:.4f}")

# graph classification: batch vector + scatter mean pooling
batch = torch.from_numpy(np.sort(gen.integers(0, 5, N)))
with torch.no_grad():
    h = model(x, edge_index)
counts = torch.bincount(batch, minlength=5).clamp(min=1)
pooled = torch.zeros(5, CLASSES).index_add_(0, batch, h) / counts.unsqueeze(1).float()
pooled_max = torch.zeros(5, CLASSES).scatter_reduce(0, batch.unsqueeze(1).expand_as(h), h, reduce="amax",
                                                    include_self=False)
pooled_mean = torch.zeros(5, CLASSES).scatter_reduce(0, batch.unsqueeze(1).expand_as(h), h, reduce="mean",
                                                     include_self=False)
print("pool", [f"{v:.5f}" for v in pooled.sum(1).tolist()], f"{pooled_max.sum().item():.5f}",
      f"{(pooled_mean - pooled).abs().max().item():.5f}")
# gradients through scatter_reduce amax / mean
w = torch.from_numpy(gen.random((N, CLASSES)).astype(np.float32)).requires_grad_()
r = torch.zeros(5, CLASSES).scatter_reduce(0, batch.unsqueeze(1).expand_as(w), w, reduce="amax", include_self=False)
r2 = torch.ones(5, CLASSES).scatter_reduce(0, batch.unsqueeze(1).expand_as(w), w, reduce="prod")
(r.sum() + r2.sum()).backward()
print(f"grad {w.grad.sum().item():.5f} {int((w.grad != 0).sum())}")
