"""Node classification on a small citation-like graph: a GCN over a sparse normalised adjacency and a multi-head
graph attention network over its dense mask (the shapes of the GCN/GAT reference implementations).

    python graph_networks.py [--epochs N]

Idioms: a sparse COO adjacency (``sparse_coo_tensor`` with int64 values, the legacy
``torch.sparse.FloatTensor(indices, values, size)``), ``torch.eye(V) + sparse``, the renormalisation
``D^-1/2 A D^-1/2`` as sparse and dense products in both orders, ``torch.spmm`` / ``torch.mm`` with a sparse left
operand (sparse node features too), attention scores from ``matmul`` with slices of a parameter and ``.mT``,
masking with ``torch.where``, per-head softmax, heads concatenated or averaged, Adam with weight decay, NLLLoss on
index masks.
"""

import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=8)
args = parser.parse_args()
torch.manual_seed(0)

# ------------------------------------------------------------------ a graph with class-homophilous edges
V, FEATURES, CLASSES = 48, 10, 3
gen = rng(0)
labels_np = gen.integers(0, CLASSES, V)
bag = (gen.random((V, FEATURES)) < 0.25).astype(np.float32)
bag[np.arange(V), labels_np * 3] = 1.0  # one word each class uses
pairs = gen.integers(0, V, (400, 2))
same = labels_np[pairs[:, 0]] == labels_np[pairs[:, 1]]
edges = pairs[(pairs[:, 0] != pairs[:, 1]) & (same | (gen.random(400) < 0.1))][:120]
E = len(edges)

features = torch.FloatTensor(bag)
scale_vector = 1 / torch.sum(features, dim=1)
scale_vector[scale_vector == float("inf")] = 0
features = torch.diag(scale_vector).to_sparse() @ features  # row-normalised bag of words

adj = torch.sparse_coo_tensor(torch.from_numpy(edges.T.copy()), torch.ones(E), (V, V), dtype=torch.int64)
adj = torch.eye(V) + adj  # self-loops: dense float32 (repeated edges add up)
adj = ((adj + adj.t()) > 0).float()  # symmetric
degree = torch.sqrt(1 / torch.sum(adj, dim=1))
degree[degree == float("inf")] = 0
degree = torch.diag(degree).to_sparse()
norm_adj = degree @ adj @ degree  # sparse @ dense, then dense @ sparse
coo = norm_adj.to_sparse()
norm_adj = torch.sparse.FloatTensor(coo.indices(), coo.values(), torch.Size([V, V]))  # as older GCN code builds it
sparse_features = features.to_sparse()

labels = torch.LongTensor(labels_np)
idx = torch.from_numpy(gen.permutation(V))
idx_train, idx_val = idx[:30], idx[30:]


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features)) if bias else None
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        return output + self.bias if self.bias is not None else output


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat=False, dropout=0.0, leaky_relu_slope=0.2):
        super().__init__()
        self.n_heads, self.concat, self.dropout = n_heads, concat, dropout
        self.n_hidden = out_features // n_heads if concat else out_features
        self.out_features = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def forward(self, h, adj_mat):
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        e = self.leakyrelu(source_scores + target_scores.mT)  # (heads, nodes, nodes)
        e = torch.where(adj_mat > 0, e, -9e16 * torch.ones_like(e))
        attention = F.dropout(F.softmax(e, dim=-1), self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            return h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        return h_prime.mean(dim=0)


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes):
        super().__init__()
        self.gat1 = GraphAttentionLayer(in_features, n_hidden, n_heads, concat=True)
        self.gat2 = GraphAttentionLayer(n_hidden, num_classes, 1)

    def forward(self, x, adj_mat):
        return F.log_softmax(self.gat2(F.elu(self.gat1(x, adj_mat)), adj_mat), dim=1)


gcn = GCN(FEATURES, 16, CLASSES, dropout=0.0)
gat = GAT(FEATURES, 8, 2, CLASSES)
same_weights(gcn, gat)
criterion = nn.NLLLoss()


def evaluate(model, inputs, mask):
    model.eval()
    with torch.no_grad():
        output = model(*inputs)[mask]
        loss = criterion(output, labels[mask])
        acc = (output.argmax(dim=1) == labels[mask]).float().sum() / len(mask)
    return loss.item(), acc.item()


for name, model, inputs in (("gcn", gcn, (sparse_features, norm_adj)), ("gat", gat, (features, adj))):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        output = model(*inputs)
        loss = criterion(output[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        loss_val, acc_val = evaluate(model, inputs, idx_val)
        print(f"{name} epoch {epoch}: loss_train {loss.item():.6f} loss_val {loss_val:.6f} acc_val {acc_val:.4f}")
    weights = sum(p.abs().sum().item() for p in model.parameters())
    print(f"{name} weight checksum {weights:.5f}")
