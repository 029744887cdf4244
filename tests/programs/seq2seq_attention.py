"""Sequence reversal with a seq2seq model as the classic tutorials write it: a bidirectional GRU encoder over
``pack_padded_sequence`` (``pad_sequence`` batches sorted by length, ``pad_packed_sequence`` back), its last two
hidden states joined through ``tanh(fc(...))``, Bahdanau (additive) attention masked at padding with
``masked_fill(mask == 0, -1e10)``, a GRU decoder fed the attention-weighted context by ``bmm``, teacher forcing
decided by Python's ``random`` (seeded), ``CrossEntropyLoss(ignore_index=PAD)`` and greedy evaluation.

    python seq2seq_attention.py [--epochs N] [--teacher-forcing P]
"""

import argparse
import random

import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--teacher-forcing", type=float, default=0.5)
args = parser.parse_args()
random.seed(0)
r = rng(5)
PAD, SOS, EOS, V = 0, 1, 2, 10


def batch(n=8):
    seqs = [torch.from_numpy(r.integers(3, V, int(r.integers(3, 7)))) for _ in range(n)]
    seqs.sort(key=len, reverse=True)
    lens = torch.tensor([len(s) for s in seqs])
    src = pad_sequence(seqs, batch_first=True, padding_value=PAD)
    tgt = pad_sequence([torch.cat([s.flip(0), torch.tensor([EOS])]) for s in seqs], batch_first=True, padding_value=PAD)
    return src, lens, tgt


class Encoder(nn.Module):
    def __init__(self, h=16):
        super().__init__()
        self.emb = nn.Embedding(V, h, padding_idx=PAD)
        self.rnn = nn.GRU(h, h, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * h, h)

    def forward(self, src, lens):
        packed = pack_padded_sequence(self.emb(src), lens, batch_first=True)
        out, hidden = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        hidden = torch.tanh(self.fc(torch.cat([hidden[-2], hidden[-1]], dim=1)))
        return out, hidden


class Attention(nn.Module):
    def __init__(self, h=16):
        super().__init__()
        self.attn = nn.Linear(3 * h, h)
        self.v = nn.Linear(h, 1, bias=False)

    def forward(self, hidden, enc, mask):
        T = enc.shape[1]
        hid = hidden.unsqueeze(1).repeat(1, T, 1)
        energy = torch.tanh(self.attn(torch.cat((hid, enc), dim=2)))
        scores = self.v(energy).squeeze(2).masked_fill(mask == 0, -1e10)
        return F.softmax(scores, dim=1)


class Decoder(nn.Module):
    def __init__(self, h=16):
        super().__init__()
        self.emb = nn.Embedding(V, h)
        self.attention = Attention(h)
        self.rnn = nn.GRU(3 * h, h)
        self.out = nn.Linear(4 * h, V)

    def forward(self, tok, hidden, enc, mask):
        e = self.emb(tok).unsqueeze(0)
        a = self.attention(hidden, enc, mask).unsqueeze(1)
        weighted = torch.bmm(a, enc).permute(1, 0, 2)
        out, hidden = self.rnn(torch.cat((e, weighted), dim=2), hidden.unsqueeze(0))
        pred = self.out(torch.cat((out.squeeze(0), weighted.squeeze(0), e.squeeze(0)), dim=1))
        return pred, hidden.squeeze(0), a.squeeze(1)


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = Encoder(), Decoder()

    def forward(self, src, lens, tgt, tf_ratio):
        enc, hidden = self.encoder(src, lens)
        mask = (src != PAD)[:, :enc.shape[1]]
        tok = torch.full((src.shape[0],), SOS, dtype=torch.long)
        outs = []
        for t in range(tgt.shape[1]):
            pred, hidden, _ = self.decoder(tok, hidden, enc, mask)
            outs.append(pred)
            tok = tgt[:, t] if random.random() < tf_ratio else pred.argmax(1)
        return torch.stack(outs, 1)


torch.manual_seed(0)
model = Seq2Seq()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
crit = nn.CrossEntropyLoss(ignore_index=PAD)
data = [batch() for _ in range(5)]
for epoch in range(args.epochs):
    model.train()
    tot = 0.0
    for src, lens, tgt in data:
        out = model(src, lens, tgt, args.teacher_forcing)
        loss = crit(out.reshape(-1, V), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tot += loss.item()
    model.eval()
    with torch.no_grad():
        src, lens, tgt = data[0]
        out = model(src, lens, tgt, 0.0)
        acc = ((out.argmax(-1) == tgt) & (tgt != PAD)).sum().item() / (tgt != PAD).sum().item()
    print(f"epoch {epoch} loss {tot / len(data):.5f} eval_loss {crit(out.reshape(-1, V), tgt.reshape(-1)).item():.5f} acc {acc:.4f}")
