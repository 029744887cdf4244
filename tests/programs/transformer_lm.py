"""A Transformer language model (nn.TransformerEncoder with a causal mask) and a small nn.Transformer
sequence-to-sequence copy task, in the shape of the word-language-model example.

    python transformer_lm.py [--steps N]
"""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import TEXT, rng, same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()
torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Transformer):
    """An encoder-only language model built on nn.Transformer's encoder, as the example does."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.0):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                         dropout=dropout)
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        return F.log_softmax(self.decoder(output), dim=-1)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


words = TEXT.split()
vocab = sorted(set(words))
ids = torch.tensor([vocab.index(w) for w in words], dtype=torch.long)
train_data = batchify(ids, 4)
bptt = 8
model = TransformerModel(len(vocab), 16, 2, 32, 2)
same_weights(model)
criterion = nn.NLLLoss()
lr = 0.5
for step in range(args.steps):
    i = (step * bptt) % (train_data.size(0) - 1 - bptt)
    data, targets = train_data[i:i + bptt], train_data[i + 1:i + 1 + bptt].reshape(-1)
    model.train()
    model.zero_grad()
    output = model(data)
    loss = criterion(output.view(-1, len(vocab)), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        if p.grad is not None:
            p.data.add_(p.grad, alpha=-lr)
    print(f"lm step {step}: loss {loss.item():.8f}")

# Sequence to sequence with the whole nn.Transformer: learn to copy short digit sequences.
seq2seq = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32,
                         dropout=0.0, batch_first=True, norm_first=True)
embed, head = nn.Embedding(12, 16), nn.Linear(16, 12)
same_weights(seq2seq, embed, head)
params = list(seq2seq.parameters()) + list(embed.parameters()) + list(head.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
digits = rng(3)
for step in range(args.steps):
    src = torch.from_numpy(digits.integers(2, 12, size=(6, 7)))
    tgt_in = torch.cat([torch.ones(6, 1, dtype=torch.long), src[:, :-1]], dim=1)
    pad = src == 11
    tgt_mask = seq2seq.generate_square_subsequent_mask(tgt_in.size(1))
    out = seq2seq(embed(src), embed(tgt_in), tgt_mask=tgt_mask, src_key_padding_mask=pad,
                  memory_key_padding_mask=pad)
    loss = F.cross_entropy(head(out).reshape(-1, 12), src.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"copy step {step}: loss {loss.item():.8f}")
