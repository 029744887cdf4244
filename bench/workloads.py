"""The benchmarked training steps, written once against PyTorch's API (``fw`` is torch or ember).

Each ``build_*(fw, batch)`` returns ``step(i)``: one full training step on the i-th of eight
fixed random batches (zero_grad, forward, loss, backward, [clip], optimizer step), so the
frameworks run identical programs on identical data.
"""

from __future__ import annotations

import numpy as np


def _data(fw, batch: int, shape: tuple, seed: int):
    rng = np.random.default_rng(seed)
    xs = [fw.tensor(rng.standard_normal((batch, *shape)).astype(np.float32)) for _ in range(8)]
    ys = [fw.tensor(rng.integers(0, 10, batch)) for _ in range(8)]
    return xs, ys


def mlp_model(fw, seed: int = 0):
    """The MLP: 784-256-256-10 with BatchNorm, ReLU and Dropout(0.3)."""
    nn = fw.nn
    fw.manual_seed(seed)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.bn1 = nn.Linear(784, 256), nn.BatchNorm1d(256)
            self.fc2, self.bn2 = nn.Linear(256, 256), nn.BatchNorm1d(256)
            self.fc3 = nn.Linear(256, 10)
            self.relu, self.dropout = nn.ReLU(), nn.Dropout(0.3)

        def forward(self, x):
            x = self.dropout(self.relu(self.bn1(self.fc1(x))))
            x = self.dropout(self.relu(self.bn2(self.fc2(x))))
            return self.fc3(x)

    return MLP()


def build_mlp(fw, batch: int, seed: int = 0):
    """The MLP trained with CrossEntropy, Adam and clip_grad_norm_ (max_norm 5)."""
    nn = fw.nn
    model = mlp_model(fw, seed)
    criterion = nn.CrossEntropyLoss()
    optimizer = fw.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = _data(fw, batch, (784,), seed)

    def step(i: int) -> float:
        optimizer.zero_grad()
        loss = criterion(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        return loss

    return step


def build_cnn(fw, batch: int, seed: int = 0):
    """A small CNN on 28x28 inputs: conv(1->16, 3x3) ReLU maxpool, conv(16->32, 3x3) ReLU maxpool,
    linear(32*7*7 -> 10); CrossEntropy, SGD with momentum."""
    nn = fw.nn
    fw.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs, ys = _data(fw, batch, (1, 28, 28), seed)

    def step(i: int) -> float:
        optimizer.zero_grad()
        loss = criterion(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        optimizer.step()
        return loss

    return step


def build_lstm_lm(fw, batch: int, seed: int = 0):
    """PyTorch's word_language_model example with an LSTM: Embedding(10000, 256) -> Dropout(0.2) ->
    2-layer LSTM(256, 256, dropout=0.2) -> Dropout(0.2) -> Linear(256 -> 10000); sequences of 35 tokens,
    the hidden state carried (detached) from batch to batch, CrossEntropy, clip_grad_norm_(0.25), SGD(lr=20)."""
    nn = fw.nn
    fw.manual_seed(seed)
    vocab, size, bptt = 10000, 256, 35

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop, self.encoder = nn.Dropout(0.2), nn.Embedding(vocab, size)
            self.rnn = nn.LSTM(size, size, 2, dropout=0.2)
            self.decoder = nn.Linear(size, vocab)

        def forward(self, tokens, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
            return self.decoder(self.drop(output)).view(-1, vocab), hidden

    model = RNNModel()
    criterion = nn.CrossEntropyLoss()
    optimizer = fw.optim.SGD(model.parameters(), lr=20.0)
    rng = np.random.default_rng(seed)
    tokens = [fw.tensor(rng.integers(0, vocab, (bptt + 1, batch))) for _ in range(8)]
    hidden = [(fw.zeros(2, batch, size), fw.zeros(2, batch, size))]

    def step(i: int) -> float:
        seq = tokens[i % 8]
        state = tuple(h.detach() for h in hidden[0])  # truncated BPTT: no gradient into earlier batches
        optimizer.zero_grad()
        output, hidden[0] = model(seq[:-1], state)
        loss = criterion(output, seq[1:].reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        return loss

    return step


# name -> (builder, batch, label)
WORKLOADS = {
    "mlp32": (build_mlp, 32, "MLP step, batch 32"),
    "mlp256": (build_mlp, 256, "MLP step, batch 256"),
    "cnn64": (build_cnn, 64, "small CNN step, batch 64"),
    "lstm_lm20": (build_lstm_lm, 20, "LSTM LM step, 35 x batch 20"),
}
