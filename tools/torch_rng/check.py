"""Verify torch_rng.py against PyTorch, item by item.

Run from this folder: ../../.venv-test/bin/python check.py [filter]
"""

import math
import sys

import numpy as np
import torch
import torch_rng as TR
from torch_rng import TorchGenerator

SIZES = [1, 3, 15, 16, 17, 33, 100, 1000, 100003]
RESULTS = []
FILTER = sys.argv[1] if len(sys.argv) > 1 else ""


def ulps(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind != "f":
        return int(np.sum(a != b))
    it = np.int64 if a.dtype == np.float64 else np.int32
    ia = a.view(it).astype(np.int64)
    ib = b.astype(a.dtype).view(it).astype(np.int64)
    # map sign-magnitude to ordered ints
    ia = np.where(ia < 0, np.iinfo(it).min - ia, ia)
    ib = np.where(ib < 0, np.iinfo(it).min - ib, ib)
    return int(np.max(np.abs(ia - ib))) if a.size else 0


def compare(name, t, e, same_state=None):
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    e = np.asarray(e).reshape(t.shape).astype(t.dtype)
    if t.dtype.kind == "f":
        eq = np.array_equal(t, e, equal_nan=True)
    else:
        eq = np.array_equal(t, e)
    if eq:
        status = "exact"
    elif t.dtype.kind == "f":
        bad = int(np.sum(~((t == e) | (np.isnan(t) & np.isnan(e)))))
        status = f"{ulps(t, e)} ulps max, {bad}/{t.size} differ"
    else:
        status = f"MISMATCH {int(np.sum(t != e))}/{t.size}"
    if same_state is False:
        status += " (STATE DIVERGED)"
    RESULTS.append((name, status))
    print(f"{name:60s} {status}", flush=True)


def state_eq(g):
    return bytes(torch.get_rng_state().numpy().tobytes()) == g.get_state()


def run(name):
    def deco(fn):
        if FILTER in name:
            fn()
        return fn

    return deco


# ---------------------------------------------------------------- 1. basic draws
@run("rand")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for n in SIZES:
            torch.manual_seed(n)
            g = TorchGenerator(n)
            compare(f"rand {tdt} n={n}", torch.rand(n, dtype=tdt), g.rand(n, dtype=dt), state_eq(g))


@run("uniform")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for a, b in ((-0.1, 0.1), (-1 / 3, 2 / 7), (2.5, 1e3), (-math.sqrt(6 / 7), math.sqrt(6 / 7))):
            for n in (5, 1000):
                torch.manual_seed(11)
                g = TorchGenerator(11)
                compare(
                    f"uniform_({a:.4g},{b:.4g}) {tdt} n={n}",
                    torch.empty(n, dtype=tdt).uniform_(a, b),
                    g.uniform_(n, a, b, dt),
                    state_eq(g),
                )


@run("randint")
def _():
    for lo, hi in ((0, 10), (-5, 7), (0, 2**28 - 1), (0, 2**28), (-(2**40), 2**40), (0, 2**62)):
        for n in (7, 1000):
            torch.manual_seed(5)
            g = TorchGenerator(5)
            compare(f"randint({lo},{hi}) n={n}", torch.randint(lo, hi, (n,)), g.randint(n, lo, hi), state_eq(g))
    for tdt, dt in (
        (torch.int32, np.int32),
        (torch.uint8, np.uint8),
        (torch.float32, np.float32),
        (torch.float64, np.float64),
    ):
        torch.manual_seed(6)
        g = TorchGenerator(6)
        compare(
            f"random_(0,100) {tdt}",
            torch.empty(50, dtype=tdt).random_(0, 100),
            g.random_from_to(50, 0, 100, dt),
            state_eq(g),
        )


@run("random_")
def _():
    for tdt, dt in (
        (torch.int64, np.int64),
        (torch.int32, np.int32),
        (torch.int16, np.int16),
        (torch.uint8, np.uint8),
        (torch.bool, np.bool_),
        (torch.float32, np.float32),
        (torch.float64, np.float64),
    ):
        torch.manual_seed(8)
        g = TorchGenerator(8)
        compare(f"random_() {tdt}", torch.empty(40, dtype=tdt).random_(), g.random_(40, dt), state_eq(g))


@run("randperm")
def _():
    for n in (0, 1, 2, 10, 1000, 100000):
        torch.manual_seed(n + 1)
        g = TorchGenerator(n + 1)
        compare(f"randperm({n})", torch.randperm(n), g.randperm(n), state_eq(g))


@run("randn")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for n in SIZES:
            torch.manual_seed(n)
            g = TorchGenerator(n)
            compare(f"randn {tdt} n={n}", torch.randn(n, dtype=tdt), g.randn(n, dtype=dt), state_eq(g))
        for m, s in ((0.0, 0.02), (1.5, 3.0)):
            for n in (5, 40):
                torch.manual_seed(3)
                g = TorchGenerator(3)
                compare(
                    f"normal_({m},{s}) {tdt} n={n}",
                    torch.empty(n, dtype=tdt).normal_(m, s),
                    g.normal_(n, m, s, dt),
                    state_eq(g),
                )
    # cached second sample carried across calls (odd sizes on the scalar path)
    torch.manual_seed(9)
    g = TorchGenerator(9)
    t = torch.cat([torch.randn(3), torch.randn(5), torch.randn(1)])
    e = np.concatenate([g.randn(3), g.randn(5), g.randn(1)])
    compare("randn 3,5,1 chained (cached normal)", t, e, state_eq(g))
    # non-contiguous, large
    torch.manual_seed(4)
    g = TorchGenerator(4)
    x = torch.empty(20, 6).t()
    x.normal_()
    # TensorIterator walks a nullary op in memory order: the storage gets the plain sequence
    compare(
        "normal_ non-contiguous (.t() of 20x6), storage order",
        x.t().contiguous().reshape(-1),
        g.normal_(120, contiguous=False),
        state_eq(g),
    )
    torch.manual_seed(5)
    g = TorchGenerator(5)
    base = torch.zeros(40)
    base[::2].normal_()
    compare("normal_ on x[::2] (20 elems, strided)", base[::2], g.normal_(20, contiguous=False), state_eq(g))
    # randn of 2-D tensor is contiguous, same as 1-D
    torch.manual_seed(12)
    g = TorchGenerator(12)
    compare("randn (7,9)", torch.randn(7, 9), g.randn(63), state_eq(g))


# ---------------------------------------------------------------- 2. other distributions
@run("bernoulli")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for n in (3, 100, 5000):
            torch.manual_seed(21)
            g = TorchGenerator(21)
            compare(
                f"bernoulli_(0.3) {tdt} n={n}",
                torch.empty(n, dtype=tdt).bernoulli_(0.3),
                g.bernoulli_scalar(n, 0.3, dt),
                state_eq(g),
            )
        torch.manual_seed(22)
        g = TorchGenerator(22)
        p = np.linspace(0, 1, 101).astype(dt)
        compare(
            f"bernoulli_(p tensor {tdt})",
            torch.empty(101).bernoulli_(torch.from_numpy(p)),
            g.bernoulli_tensor(p, np.float32),
            state_eq(g),
        )
        torch.manual_seed(23)
        g = TorchGenerator(23)
        compare(
            f"torch.bernoulli(probs {tdt})", torch.bernoulli(torch.from_numpy(p)), g.bernoulli_tensor(p), state_eq(g)
        )


@run("dropout")
def _():
    for n in (10, 1000):
        for p in (0.1, 0.5):
            torch.manual_seed(31)
            g = TorchGenerator(31)
            x = torch.ones(n)
            compare(
                f"F.dropout p={p} n={n}",
                torch.nn.functional.dropout(x, p, True),
                g.dropout_mask(n, p, np.float32),
                state_eq(g),
            )
    torch.manual_seed(32)
    g = TorchGenerator(32)
    compare(
        "nn.Dropout(0.2) module on (4,8) float64",
        torch.nn.Dropout(0.2)(torch.ones(4, 8, dtype=torch.float64)).reshape(-1),
        g.dropout_mask(32, 0.2, np.float64),
        state_eq(g),
    )


@run("exponential")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for n in (5, 1000):
            torch.manual_seed(41)
            g = TorchGenerator(41)
            compare(
                f"exponential_(1.5) {tdt} n={n}",
                torch.empty(n, dtype=tdt).exponential_(1.5),
                g.exponential_(n, 1.5, dt),
                state_eq(g),
            )


@run("geometric")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        torch.manual_seed(42)
        g = TorchGenerator(42)
        compare(
            f"geometric_(0.3) {tdt}",
            torch.empty(500, dtype=tdt).geometric_(0.3),
            g.geometric_(500, 0.3, dt),
            state_eq(g),
        )


@run("cauchy")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        torch.manual_seed(43)
        g = TorchGenerator(43)
        compare(
            f"cauchy_(0.5,2) {tdt}",
            torch.empty(500, dtype=tdt).cauchy_(0.5, 2.0),
            g.cauchy_(500, 0.5, 2.0, dt),
            state_eq(g),
        )


@run("log_normal")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for n in (5, 500):
            torch.manual_seed(44)
            g = TorchGenerator(44)
            compare(
                f"log_normal_(0.1,0.5) {tdt} n={n}",
                torch.empty(n, dtype=tdt).log_normal_(0.1, 0.5),
                g.log_normal_(n, 0.1, 0.5, dt),
                state_eq(g),
            )


@run("multinomial")
def _():
    for dt in (np.float32, np.float64):
        p = (np.arange(1, 11) ** 1.5).astype(dt)
        torch.manual_seed(51)
        g = TorchGenerator(51)
        compare(
            f"multinomial replacement {dt.__name__}",
            torch.multinomial(torch.from_numpy(p), 200, True),
            g.multinomial(p, 200, True)[0],
            state_eq(g),
        )
        torch.manual_seed(52)
        g = TorchGenerator(52)
        compare(
            f"multinomial no-replacement k=4 {dt.__name__}",
            torch.multinomial(torch.from_numpy(p), 4, False),
            g.multinomial(p, 4, False)[0],
            state_eq(g),
        )
        torch.manual_seed(53)
        g = TorchGenerator(53)
        P = np.random.default_rng(0).random((3, 7)).astype(dt)
        compare(
            f"multinomial 2-D no-repl k=1 {dt.__name__}",
            torch.multinomial(torch.from_numpy(P), 1),
            g.multinomial(P, 1),
            state_eq(g),
        )


@run("normal_tensor")
def _():
    for dt, tdt in ((np.float32, torch.float32), (np.float64, torch.float64)):
        for n in (5, 40):
            m = np.linspace(-1, 1, n).astype(dt)
            s = np.linspace(0.1, 2, n).astype(dt)
            torch.manual_seed(61)
            g = TorchGenerator(61)
            compare(
                f"normal(mean_t, std_t) {tdt} n={n}",
                torch.normal(torch.from_numpy(m), torch.from_numpy(s)),
                g.normal_tensor(m, s, dt),
                state_eq(g),
            )


# ---------------------------------------------------------------- 5. state layout
@run("state")
def _():
    for seed in (0, 1, 2**32 + 7, -1, 2**63 + 5):
        torch.manual_seed(seed)
        g = TorchGenerator(seed)
        ok = state_eq(g)
        torch.rand(700)
        g.rand(700)
        ok2 = state_eq(g)
        torch.randn(3)
        g.randn(3)  # leaves a cached double normal
        ok3 = state_eq(g)
        RESULTS.append((f"get_rng_state seed={seed}", f"fresh={ok} after700={ok2} cached={ok3}"))
        print(RESULTS[-1])
    # set_state from a torch-saved state, continue both
    torch.manual_seed(77)
    torch.rand(1234)
    torch.randn(5)
    s = torch.get_rng_state()
    g = TorchGenerator(0)
    g.set_state(s.numpy().tobytes())
    compare(
        "set_state(torch state) then randn(7)+rand(5)",
        torch.cat([torch.randn(7), torch.rand(5)]),
        np.concatenate([g.randn(7), g.rand(5)]),
        state_eq(g),
    )
    # torch loads a state ember wrote
    g = TorchGenerator(99)
    g.rand(10)
    g.randn(1)
    torch.set_rng_state(torch.frombuffer(bytearray(g.get_state()), dtype=torch.uint8))
    compare("torch.set_rng_state(ember state) then randn(3)", torch.randn(3), g.randn(3), state_eq(g))


# ---------------------------------------------------------------- 3. layers / init
@run("layers")
def _():
    import torch.nn as nn

    for i, o in ((4, 3), (17, 33), (300, 7)):
        torch.manual_seed(i)
        g = TorchGenerator(i)
        lin = nn.Linear(i, o)
        w, b = TR.linear_init(g, i, o)
        compare(f"nn.Linear({i},{o}) weight", lin.weight, w)
        compare(f"nn.Linear({i},{o}) bias", lin.bias, b, state_eq(g))
    torch.manual_seed(3)
    g = TorchGenerator(3)
    c = nn.Conv2d(3, 16, 3)
    w, b = TR.conv_init(g, 3, 16, (3, 3))
    compare("nn.Conv2d(3,16,3) weight", c.weight, w)
    compare("nn.Conv2d(3,16,3) bias", c.bias, b, state_eq(g))
    torch.manual_seed(4)
    g = TorchGenerator(4)
    c = nn.Conv2d(8, 16, (3, 5), groups=4, bias=False)
    w, _ = TR.conv_init(g, 8, 16, (3, 5), groups=4, bias=False)
    compare("nn.Conv2d(8,16,(3,5),groups=4,no bias)", c.weight, w, state_eq(g))
    torch.manual_seed(5)
    g = TorchGenerator(5)
    c = nn.ConvTranspose2d(6, 4, 2)
    w, b = TR.conv_init(g, 6, 4, (2, 2), transposed=True)
    compare("nn.ConvTranspose2d(6,4,2) weight", c.weight, w)
    compare("nn.ConvTranspose2d bias", c.bias, b, state_eq(g))
    for num, dim, pad in ((10, 3, None), (100, 16, 0), (7, 2, None)):
        torch.manual_seed(6)
        g = TorchGenerator(6)
        compare(
            f"nn.Embedding({num},{dim},padding_idx={pad})",
            nn.Embedding(num, dim, padding_idx=pad).weight,
            TR.embedding_init(g, num, dim, pad),
            state_eq(g),
        )
    for mode, cls in (("LSTM", nn.LSTM), ("GRU", nn.GRU), ("RNN_TANH", nn.RNN)):
        torch.manual_seed(7)
        g = TorchGenerator(7)
        m = cls(5, 6, num_layers=2, bidirectional=True)
        ps = TR.rnn_init(g, mode, 5, 6, 2, True, True)
        names = [n for n, _ in m.named_parameters()]
        assert names == [n for n, _ in ps], (names, [n for n, _ in ps])
        t = torch.cat([p.detach().reshape(-1) for p in m.parameters()])
        compare(
            f"nn.{cls.__name__}(5,6,2 layers,bidir) all params",
            t,
            np.concatenate([e.reshape(-1) for _, e in ps]),
            state_eq(g),
        )
    torch.manual_seed(8)
    g = TorchGenerator(8)
    m = nn.LSTM(4, 8, proj_size=3)
    ps = TR.rnn_init(g, "LSTM", 4, 8, proj_size=3)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in ps], [n for n, _ in m.named_parameters()]
    compare(
        "nn.LSTM(4,8,proj_size=3)",
        torch.cat([p.detach().reshape(-1) for p in m.parameters()]),
        np.concatenate([e.reshape(-1) for _, e in ps]),
        state_eq(g),
    )


@run("init")
def _():
    import torch.nn.init as I

    for shape in ((5, 7), (64, 3, 3, 3)):
        torch.manual_seed(1)
        g = TorchGenerator(1)
        compare(
            f"xavier_uniform_{shape}", I.xavier_uniform_(torch.empty(shape)), TR.xavier_uniform_(g, shape), state_eq(g)
        )
        torch.manual_seed(1)
        g = TorchGenerator(1)
        compare(
            f"xavier_normal_{shape}", I.xavier_normal_(torch.empty(shape)), TR.xavier_normal_(g, shape), state_eq(g)
        )
        torch.manual_seed(2)
        g = TorchGenerator(2)
        compare(
            f"kaiming_normal_{shape} fan_out relu",
            I.kaiming_normal_(torch.empty(shape), mode="fan_out", nonlinearity="relu"),
            TR.kaiming_normal_(g, shape, mode="fan_out", nonlinearity="relu"),
            state_eq(g),
        )
        torch.manual_seed(2)
        g = TorchGenerator(2)
        compare(
            f"kaiming_uniform_{shape} relu",
            I.kaiming_uniform_(torch.empty(shape), nonlinearity="relu"),
            TR.kaiming_uniform_(g, shape, nonlinearity="relu"),
            state_eq(g),
        )
    for m, s, a, b in (
        (0.0, 1.0, -2.0, 2.0),
        (0.0, 0.02, -2.0, 2.0),
        (0.0, 1.0, -0.5, 0.5),
        (0.0, 1.0, 1.0, 3.0),
        (0.0, 1.0, -0.2, 0.2),
        (0.5, 1.0, 2.0, 4.0),
    ):
        for shape in ((10, 10), (300,)):
            torch.manual_seed(3)
            g = TorchGenerator(3)
            compare(
                f"trunc_normal_({m},{s},{a},{b}) {shape}",
                I.trunc_normal_(torch.empty(shape), m, s, a, b),
                TR.trunc_normal_(g, shape, m, s, a, b),
                state_eq(g),
            )
    for shape in ((6, 4), (4, 6), (8, 2, 3)):
        torch.manual_seed(4)
        g = TorchGenerator(4)
        compare(f"orthogonal_{shape}", I.orthogonal_(torch.empty(shape)), TR.orthogonal_(g, shape), state_eq(g))


# ---------------------------------------------------------------- 4. data
@run("data")
def _():
    from torch.utils.data import DataLoader, TensorDataset, random_split

    ds = TensorDataset(torch.arange(50))
    torch.manual_seed(10)
    g = TorchGenerator(10)
    dl = DataLoader(ds, batch_size=7, shuffle=True)
    for ep in range(3):
        order = torch.cat([b[0] for b in dl])
        _, _, e = TR.dataloader_epoch(g, 50)
        compare(f"DataLoader shuffle epoch {ep}", order, e, state_eq(g))
    torch.manual_seed(11)
    g = TorchGenerator(11)
    dl = DataLoader(ds, batch_size=8, sampler=torch.utils.data.RandomSampler(ds, replacement=True, num_samples=70))
    order = torch.cat([b[0] for b in dl])
    _, _, e = TR.dataloader_epoch(g, 50, replacement=True, num_samples=70)
    compare("DataLoader RandomSampler(replacement, 70)", order, e, state_eq(g))
    torch.manual_seed(12)
    g = TorchGenerator(12)
    parts = random_split(range(23), [0.3, 0.3, 0.4])
    es = TR.random_split_indices(g, [0.3, 0.3, 0.4], 23)
    compare(
        "random_split(23, [.3,.3,.4])",
        np.concatenate([np.array(p.indices) for p in parts]),
        np.concatenate(es),
        state_eq(g),
    )
    torch.manual_seed(13)
    g = TorchGenerator(13)
    dl = DataLoader(ds, batch_size=10, shuffle=True, num_workers=2, persistent_workers=True)
    orders = [torch.cat([b[0] for b in dl]) for _ in range(2)]
    e0 = TR.dataloader_epoch(g, 50)[2]
    e1 = TR.dataloader_epoch(g, 50, persistent_first=False)[2]
    compare("DataLoader workers=2 persistent, 2 epochs", torch.cat(orders), np.concatenate([e0, e1]), state_eq(g))


if __name__ == "__main__" and FILTER != "NONE":  # noqa
    print("\nSUMMARY")
    for n, s in RESULTS:
        print(f"  {n:60s} {s}")
