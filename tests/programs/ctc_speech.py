"""A CTC speech toy: a Conv1d + bidirectional GRU acoustic model on synthetic frames (each symbol a noisy
prototype held for 2-3 frames, utterances zero-padded to the longest), ``nn.CTCLoss(blank=0, zero_infinity=True)`` on
``log_softmax`` outputs transposed to (T, N, C) with per-utterance input and target lengths, ``clip_grad_norm_``,
``F.ctc_loss`` with ``reduction="none"`` and ``"sum"``, and greedy decoding (argmax, collapse repeats, drop blanks).

    python ctc_speech.py [--epochs N]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
args = parser.parse_args()
r = rng(4)
VOCAB, FEAT, B = 6, 8, 6  # blank = 0
protos = r.standard_normal((VOCAB, FEAT)).astype(np.float32)


def make_batch():
    targets, frames, in_lens, tgt_lens = [], [], [], []
    for _ in range(B):
        n = int(r.integers(2, 5))
        t = r.integers(1, VOCAB, n)
        seq = np.concatenate([np.repeat(protos[c][None], int(r.integers(2, 4)), 0) for c in t], 0)
        frames.append(seq + 0.3 * r.standard_normal(seq.shape).astype(np.float32))
        targets.append(t)
        in_lens.append(len(seq))
        tgt_lens.append(n)
    T = max(in_lens)
    x = np.zeros((B, T, FEAT), np.float32)
    for i, f in enumerate(frames):
        x[i, :len(f)] = f
    return (torch.from_numpy(x), torch.from_numpy(np.concatenate(targets)).long(), torch.tensor(in_lens),
            torch.tensor(tgt_lens))


class Acoustic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(FEAT, 16, 3, padding=1)
        self.rnn = nn.GRU(16, 16, batch_first=True, bidirectional=True)
        self.out = nn.Linear(32, VOCAB)

    def forward(self, x):
        h = F.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        h, _ = self.rnn(h)
        return self.out(h).log_softmax(-1)


def greedy(logp, lens):
    best = logp.argmax(-1)
    outs = []
    for b, n in zip(best, lens):
        seq, prev = [], 0
        for c in b[:n].tolist():
            if c != prev and c != 0:
                seq.append(c)
            prev = c
        outs.append(seq)
    return outs


torch.manual_seed(0)
model = Acoustic()
same_weights(model)
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
batches = [make_batch() for _ in range(4)]
for epoch in range(args.epochs):
    total = 0.0
    for x, y, il, tl in batches:
        logp = model(x)
        loss = ctc(logp.transpose(0, 1), y, il, tl)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} ctc {total / len(batches):.5f}")
x, y, il, tl = batches[0]
with torch.no_grad():
    logp = model(x)
    per = F.ctc_loss(logp.transpose(0, 1), y, il, tl, reduction="none")
    print("per-utterance", " ".join(f"{v:.5f}" for v in per.tolist()))
    s = F.ctc_loss(logp.transpose(0, 1), y, il, tl, reduction="sum")
    print("sum", f"{s.item():.5f}", "decoded", greedy(logp, il.tolist())[:2])
