"""torch.utils.data as people use it: a map-style Dataset with a collate_fn padding variable lengths, a custom
bucketing Sampler, WeightedRandomSampler for class imbalance, an IterableDataset with get_worker_info sharding,
random_split with a seeded Generator, ConcatDataset/Subset, default_collate of dicts, and a tiny model trained."""
import math

import torch
import torch.nn as nn
from _support import rng, same_weights
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Sampler,
    Subset,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
    random_split,
)
from torch.utils.data.dataloader import default_collate

torch.manual_seed(0)
r = rng(14)


class SeqDataset(Dataset):
    def __init__(self, n=40):
        self.items = [(torch.from_numpy(r.integers(1, 20, int(r.integers(2, 9)))), int(r.random() < 0.25)) for _ in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        seq, label = self.items[idx]
        return {"tokens": seq, "label": label, "length": len(seq)}


def collate(batch):
    tokens = pad_sequence([b["tokens"] for b in batch], batch_first=True)
    rest = default_collate([{"label": b["label"], "length": b["length"]} for b in batch])
    return tokens, rest["label"], rest["length"]


class BucketSampler(Sampler):
    def __init__(self, lengths, batch_size, generator=None):
        self.lengths, self.batch_size, self.generator = lengths, batch_size, generator

    def __iter__(self):
        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        order.sort(key=lambda i: self.lengths[i])
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        for j in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[j]

    def __len__(self):
        return math.ceil(len(self.lengths) / self.batch_size)


class Stream(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        for i in range(lo, hi):
            yield torch.tensor([float(i), float(i) ** 0.5])


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.gru = nn.GRU(8, 8, batch_first=True)
        self.fc = nn.Linear(8, 2)

    def forward(self, tokens, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return self.fc(h[-1])


ds = SeqDataset()
train, val = random_split(ds, [0.75, 0.25], generator=torch.Generator().manual_seed(42))
print("split", len(train), len(val), train.indices[:5])
labels = torch.tensor([ds[i]["label"] for i in train.indices])
class_count = torch.bincount(labels)
weights = 1.0 / class_count[labels].float()
sampler = WeightedRandomSampler(weights, num_samples=len(train), replacement=True, generator=torch.Generator().manual_seed(1))
model = Model()
same_weights(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
loader = DataLoader(train, batch_size=6, sampler=sampler, collate_fn=collate, drop_last=True)
bucket_loader = DataLoader(ds, batch_sampler=BucketSampler([len(s) for s, _ in ds.items], 8, torch.Generator().manual_seed(3)),
                           collate_fn=collate)
for epoch in range(3):
    seen = torch.zeros(2, dtype=torch.long)
    for tokens, y, lengths in loader:
        seen += torch.bincount(y, minlength=2)
        loss = nn.functional.cross_entropy(model(tokens, lengths), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    widths = [tokens.shape[1] for tokens, _, _ in bucket_loader]
    print(f"epoch {epoch} loss {loss.item():.5f} class-balance {seen.tolist()} bucket-widths {widths}")

stream = DataLoader(Stream(0, 10), batch_size=4)
print("stream", [b[:, 0].tolist() for b in stream], f"{sum(b[:, 1].sum() for b in stream).item():.5f}")
combined = ConcatDataset([TensorDataset(torch.arange(5.0)), TensorDataset(torch.arange(10.0, 13.0))])
sub = Subset(combined, [0, 6, 7, 2])
print("concat", len(combined), [x[0].item() for x in sub], combined.cumulative_sizes)
shuffled = DataLoader(combined, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(5))
print("shuffled", [b[0].tolist() for b in shuffled])
print("batchsampler", list(BatchSampler(range(7), 3, drop_last=False)))
