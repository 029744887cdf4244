"""A word-level LSTM language model over sentences of different lengths, batched with packed sequences.

    python lstm_lm.py [--steps N]
"""

import argparse

import torch
import torch.nn as nn
from _support import TEXT, rng, same_weights
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--clip", type=float, default=0.25)
args = parser.parse_args()

sentences = [s.strip().split() for s in TEXT.replace(",", " ,").split(" it ") if s.strip()]
vocab = ["<pad>", "<eos>"] + sorted({w for s in sentences for w in s})
word2idx = {w: i for i, w in enumerate(vocab)}
PAD = word2idx["<pad>"]


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp, padding_idx=PAD)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, tokens, lengths, hidden):
        emb = self.drop(self.encoder(tokens))
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        output, hidden = self.rnn(packed, hidden)
        output, _ = pad_packed_sequence(output, batch_first=True, padding_value=0.0)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


model = RNNModel(len(vocab), 16, 24, 2)
same_weights(model)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)
lr = 2.0
order = rng(0)
for step in range(args.steps):
    batch = [sentences[i] for i in order.choice(len(sentences), size=4, replace=False)]
    seqs = [torch.tensor([word2idx[w] for w in s] + [word2idx["<eos>"]]) for s in batch]
    lengths = torch.tensor([len(s) - 1 for s in seqs])
    inputs = pad_sequence([s[:-1] for s in seqs], batch_first=True, padding_value=PAD)
    targets = pad_sequence([s[1:] for s in seqs], batch_first=True, padding_value=PAD)
    model.train()
    model.zero_grad()
    output, hidden = model(inputs, lengths, model.init_hidden(len(batch)))
    loss = criterion(output.reshape(-1, len(vocab)), targets[:, :output.size(1)].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    print(f"step {step}: loss {loss.item():.8f} ppl {torch.exp(loss).item():.4f}")
