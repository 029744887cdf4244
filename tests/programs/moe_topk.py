"""A sparse Mixture-of-Experts layer in the idioms of Mixtral's HF block, fairseq/Switch and davidmrau/mixture-of-experts:
router logits -> F.softmax(dtype=torch.float) -> torch.topk -> renormalise by sum; dispatch via
F.one_hot(selected, num_classes).permute(2, 1, 0) and torch.where per expert, index_add_ of weighted outputs;
a dense dispatch mask built with torch.zeros_like(...).scatter(1, topk_idx, topk_gates) and gathered back with
torch.gather; the Switch load-balancing loss (fraction of tokens per expert * mean router prob * E), router z-loss
(logsumexp ** 2), expert capacity counted with cumsum; a tiny token classifier trained for a few steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(8)


class Expert(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.w1, self.w2, self.w3 = nn.Linear(d, h, bias=False), nn.Linear(h, d, bias=False), nn.Linear(d, h, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, d=16, h=24, num_experts=4, top_k=2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d, h) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final = torch.zeros((batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[expert_idx])
            if top_x.shape[0] == 0:
                continue
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current = self.experts[expert_idx](current_state) * routing_weights[top_x, idx, None]
            final.index_add_(0, top_x, current.to(hidden_states.dtype))
        return final.reshape(batch_size, sequence_length, hidden_dim), router_logits


def dense_dispatch(block, x):
    """The same layer computed densely: every expert on every token, combined by a scattered gate matrix."""
    x = x.reshape(-1, x.shape[-1])
    logits = block.gate(x)
    probs = logits.softmax(-1)
    top_vals, top_idx = probs.topk(block.top_k, dim=-1)
    gates = torch.zeros_like(probs).scatter(1, top_idx, top_vals / top_vals.sum(-1, keepdim=True))
    outs = torch.stack([e(x) for e in block.experts], dim=1)
    picked = torch.gather(gates, 1, top_idx)
    return torch.einsum("te,ted->td", gates, outs), picked


def load_balancing_loss(router_logits, num_experts, top_k):
    probs = F.softmax(router_logits, dim=-1)
    _, selected = torch.topk(probs, top_k, dim=-1)
    mask = F.one_hot(selected, num_experts)
    tokens_per_expert = torch.mean(mask.float(), dim=0)
    router_prob_per_expert = torch.mean(probs, dim=0)
    return torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0)) * num_experts


def capacity_kept(router_logits, capacity):
    top1 = router_logits.argmax(-1)
    mask = F.one_hot(top1, router_logits.shape[-1])
    position = torch.cumsum(mask, dim=0) * mask
    return (position <= capacity).all(-1).float().mean()


class Model(nn.Module):
    def __init__(self, vocab=20, d=16, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.moe = SparseMoeBlock(d)
        self.norm = nn.RMSNorm(d)
        self.out = nn.Linear(d, classes)

    def forward(self, tokens):
        h = self.emb(tokens)
        m, logits = self.moe(self.norm(h))
        return self.out(h + m), logits


model = Model()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(10):
    tokens = torch.from_numpy(r.integers(0, 20, (4, 8)))
    target = tokens % 4
    logits, router_logits = model(tokens)
    ce = F.cross_entropy(logits.view(-1, 4), target.view(-1))
    aux = load_balancing_loss(router_logits, 4, 2)
    z = torch.logsumexp(router_logits, dim=-1).pow(2).mean()
    loss = ce + 0.01 * aux + 1e-3 * z
    opt.zero_grad()
    loss.backward()
    opt.step()
    counts = torch.bincount(router_logits.argmax(-1), minlength=4).tolist()
    print(f"step {step} ce {ce.item():.5f} aux {aux.item():.5f} z {z.item():.5f} top1-counts {counts} "
          f"kept@cap8 {capacity_kept(router_logits, 8).item():.4f}")
with torch.no_grad():
    x = model.norm(model.emb(torch.from_numpy(r.integers(0, 20, (2, 5)))))
    sparse, _ = model.moe(x)
    dense, picked = dense_dispatch(model.moe, x)
    print(f"sparse==dense {torch.allclose(sparse.reshape(-1, 16), dense, atol=1e-6)} "
          f"picked-sum {picked.sum().item():.4f} out-norm {dense.norm().item():.5f}")
