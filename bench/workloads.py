"""The benchmarked training steps, written once against PyTorch's API (``fw`` is torch or ember).

Each ``build_*(fw, batch)`` returns ``step(i)``: one full training step on the i-th of eight
fixed random batches (zero_grad, forward, loss, backward, [clip], optimizer step), so the
frameworks run identical programs on identical data.
"""

from __future__ import annotations

import numpy as np
from llama import llama_model


def _data(fw, batch: int, shape: tuple, seed: int):
    rng = np.random.default_rng(seed)
    xs = [fw.tensor(rng.standard_normal((batch, *shape)).astype(np.float32)) for _ in range(8)]
    ys = [fw.tensor(rng.integers(0, 10, batch)) for _ in range(8)]
    return xs, ys


def _classifier_step(model, criterion, optimizer, xs, ys):
    """The plain step on the 8 batches ``xs``/``ys``: zero_grad, forward, loss, backward, step."""

    def step(i: int) -> float:
        optimizer.zero_grad()
        loss = criterion(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        optimizer.step()
        return loss

    return step


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


def _small_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )


def build_cnn(fw, batch: int, seed: int = 0):
    """A small CNN on 28x28 inputs: conv(1->16, 3x3) ReLU maxpool, conv(16->32, 3x3) ReLU maxpool,
    linear(32*7*7 -> 10); CrossEntropy, SGD with momentum."""
    nn = fw.nn
    fw.manual_seed(seed)
    model = _small_cnn(nn)
    criterion = nn.CrossEntropyLoss()
    optimizer = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs, ys = _data(fw, batch, (1, 28, 28), seed)

    return _classifier_step(model, criterion, optimizer, xs, ys)


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


def gpt_model(fw, seed: int = 0, vocab: int = 65, block: int = 64, width: int = 128, heads: int = 4,
              layers: int = 2):
    """A GPT-style character model: token + position embedding, ``layers`` pre-LN blocks of causal
    self-attention (F.scaled_dot_product_attention, is_causal=True) and a GELU MLP, final LayerNorm and a
    Linear to the vocabulary. Weights come from NumPy (GPT-2's N(0, 0.02), zero biases), so both frameworks
    start from the same ones."""
    nn, F = fw.nn, fw.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.qkv, self.proj = nn.LayerNorm(width), nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.ln2, self.fc, self.out = nn.LayerNorm(width), nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.gelu = nn.GELU()

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(C, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.out(self.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(fw.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln_f(x))

    model = GPT()
    rng = np.random.default_rng(seed)
    with fw.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.copy_(fw.tensor((0.02 * rng.standard_normal(tuple(p.shape))).astype(np.float32)))
            elif name.endswith("bias"):
                p.zero_()
    return model


def build_gpt(fw, batch: int, seed: int = 0, vocab: int = 65, block: int = 64, width: int = 128, heads: int = 4,
              layers: int = 2):
    """The GPT-style model on random characters: next-token cross-entropy, AdamW."""
    return _lm_step(fw, gpt_model(fw, seed, vocab, block, width, heads, layers), batch, seed, vocab, block)


def _lm_step(fw, model, batch: int, seed: int, vocab: int, block: int):
    """The language-model step on 8 batches of random tokens: next-token cross-entropy, AdamW(lr=3e-4)."""
    optimizer = fw.optim.AdamW(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(seed)
    tokens = [rng.integers(0, vocab, (batch, block + 1)) for _ in range(8)]
    data = [(fw.tensor(t[:, :-1]), fw.tensor(t[:, 1:].reshape(-1))) for t in tokens]

    def step(i: int) -> float:
        x, y = data[i % 8]
        optimizer.zero_grad()
        loss = fw.nn.functional.cross_entropy(model(x).view(-1, vocab), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def build_llama(fw, batch: int, seed: int = 0, vocab: int = 65, block: int = 64):
    """The LLaMA-style model of ``bench/llama.py`` (width 128, 4 heads, 4 layers, SwiGLU hidden 352)."""
    return _lm_step(fw, llama_model(fw, seed, vocab, block), batch, seed, vocab, block)


def build_gpt_large(fw, batch: int, seed: int = 0):
    """The GPT-style step at sequence 128, width 256, 8 heads, 4 layers."""
    return build_gpt(fw, batch, seed, block=128, width=256, heads=8, layers=4)


def build_gpt_infer(fw, batch: int, seed: int = 0, vocab: int = 65, block: int = 64):
    """The GPT-style model of ``build_gpt`` (width 128, 4 heads, 2 layers) in inference: forward under no_grad."""
    model = gpt_model(fw, seed, vocab, block)
    model.eval()
    rng = np.random.default_rng(seed)
    data = [fw.tensor(rng.integers(0, vocab, (batch, block))) for _ in range(8)]

    def step(i: int):
        with fw.no_grad():
            return model(data[i % 8])

    return step


def build_gpt_tiny(fw, batch: int, seed: int = 0):
    """The GPT-style step on tiny tensors: width 32, 2 heads, 2 layers, 16 tokens (per-op overhead dominates)."""
    return build_gpt(fw, batch, seed, block=16, width=32, heads=2)


def build_pqn(fw, batch: int, seed: int = 0, obs: int = 4, actions: int = 2):
    """A small Q-network as cleanrl's PQN builds it (Linear(4, 120), LayerNorm, ReLU, Linear(120, 84), LayerNorm,
    ReLU, Linear(84, 2)) on CartPole-sized observations: one step is an action chosen for one observation under
    no_grad (argmax of the Q-values) and a Q-learning update on ``batch`` transitions (the targets under no_grad,
    the chosen actions' values gathered, MSE loss, Adam(lr=2.5e-4)). Per-op cost is most of its time."""
    nn = fw.nn
    fw.manual_seed(seed)
    net = nn.Sequential(nn.Linear(obs, 120), nn.LayerNorm(120), nn.ReLU(), nn.Linear(120, 84), nn.LayerNorm(84),
                        nn.ReLU(), nn.Linear(84, actions))
    optimizer = fw.optim.Adam(net.parameters(), lr=2.5e-4)
    rng = np.random.default_rng(seed)
    states = [fw.tensor(rng.standard_normal((1, obs)).astype(np.float32)) for _ in range(8)]
    batches = [(fw.tensor(rng.standard_normal((batch, obs)).astype(np.float32)),
                fw.tensor(rng.integers(0, actions, (batch, 1))),
                fw.tensor(rng.standard_normal(batch).astype(np.float32)),
                fw.tensor(rng.standard_normal((batch, obs)).astype(np.float32))) for _ in range(8)]

    def step(i: int):
        with fw.no_grad():
            net(states[i % 8]).argmax(dim=1)
        x, a, r, x_next = batches[i % 8]
        with fw.no_grad():
            target = r + 0.99 * net(x_next).max(dim=1).values
        loss = fw.nn.functional.mse_loss(net(x).gather(1, a).squeeze(1), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step


def resnet_model(fw, seed: int = 0, widths: tuple = (16, 32, 64), blocks: int = 2, classes: int = 10):
    """A CIFAR-style ResNet: a 3x3 stem conv, then per width ``blocks`` basic blocks (two 3x3 conv +
    BatchNorm2d, ReLU, identity shortcut; the first block of a later stage halves the size with stride 2 and
    a 1x1 conv + BatchNorm2d shortcut), global average pooling and a Linear classifier."""
    nn = fw.nn
    fw.manual_seed(seed)

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1, self.relu = nn.BatchNorm2d(cout), nn.ReLU()
            self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(y)) + self.short(x))

    layers = [nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU()]
    cin = widths[0]
    for s, w in enumerate(widths):
        for b in range(blocks):
            layers.append(BasicBlock(cin, w, 2 if s > 0 and b == 0 else 1))
            cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def build_resnet(fw, batch: int, seed: int = 0):
    """The ResNet-style CNN on 32x32 RGB inputs: CrossEntropy, SGD(lr=0.01, momentum=0.9)."""
    model = resnet_model(fw, seed)
    criterion = fw.nn.CrossEntropyLoss()
    optimizer = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs, ys = _data(fw, batch, (3, 32, 32), seed)

    return _classifier_step(model, criterion, optimizer, xs, ys)


def build_embedding(fw, batch: int, seed: int = 0, optim: str = "SGD", vocab: int = 50000, dim: int = 128,
                    tokens: int = 32, sparse: bool = False):
    """A bag-of-embeddings classifier: Embedding(vocab, dim) -> mean over ``tokens`` -> Linear(dim, 10);
    CrossEntropy, SGD(lr=0.1) or Adam(lr=1e-3). Each step touches 8192 of the 50 000 rows.
    ``sparse``: Embedding(sparse=True); with "SparseAdam", SparseAdam for the table and Adam for the head."""
    nn = fw.nn
    fw.manual_seed(seed)
    emb, head = nn.Embedding(vocab, dim, sparse=sparse), nn.Linear(dim, 10)
    params = [*emb.parameters(), *head.parameters()]
    if optim == "SparseAdam":
        optimizers = [fw.optim.SparseAdam(emb.parameters(), lr=1e-3), fw.optim.Adam(head.parameters(), lr=1e-3)]
    else:
        optimizers = [fw.optim.SGD(params, lr=0.1) if optim == "SGD" else fw.optim.Adam(params, lr=1e-3)]
    criterion = nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)
    data = [(fw.tensor(rng.integers(0, vocab, (batch, tokens))), fw.tensor(rng.integers(0, 10, batch)))
            for _ in range(8)]

    def step(i: int) -> float:
        x, y = data[i % 8]
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss = criterion(head(emb(x).mean(dim=1)), y)
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
        return loss

    return step


def build_embedding_adam(fw, batch: int, seed: int = 0):
    return build_embedding(fw, batch, seed, optim="Adam")


def build_embedding_sparse(fw, batch: int, seed: int = 0):
    return build_embedding(fw, batch, seed, sparse=True)


def build_embedding_sparse_adam(fw, batch: int, seed: int = 0):
    return build_embedding(fw, batch, seed, optim="SparseAdam", sparse=True)


def build_mlp_plain(fw, batch: int, seed: int = 0):
    """784-256-256-10 with ReLU (no BatchNorm, which needs more than one sample in training),
    CrossEntropy, Adam(lr=1e-3): the step at batch 1 measures per-op and per-parameter overhead."""
    nn = fw.nn
    fw.manual_seed(seed)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    criterion = nn.CrossEntropyLoss()
    optimizer = fw.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = _data(fw, batch, (784,), seed)

    return _classifier_step(model, criterion, optimizer, xs, ys)


def _func_grad(fw):
    """``torch.func.grad``; for ember, until it has one, the same built on ember.autograd.grad through vmap's
    gradient helpers (a leaf per example, one backward for the batch)."""
    if hasattr(fw.func, "grad"):
        return fw.func.grad
    from ember.func._batched_grad import autograd_grad, grad_leaf
    from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten

    def grad(f):
        def g(params, *args):
            leaves, spec = tree_flatten(tree_map(grad_leaf, params))
            return tree_unflatten(list(autograd_grad(f(tree_unflatten(leaves, spec), *args), leaves)), spec)
        return g
    return grad


def build_per_sample_grads(fw, batch: int, seed: int = 0):
    """Per-sample gradients of the small CNN of ``build_cnn`` as PyTorch's tutorial computes them:
    ``vmap(grad(loss), in_dims=(None, None, 0, 0))`` over functional_call, cross-entropy of each sample."""
    nn = fw.nn
    fw.manual_seed(seed)
    model = _small_cnn(nn)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    xs, ys = _data(fw, batch, (1, 28, 28), seed)

    def compute_loss(params, buffers, sample, target):
        out = fw.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return nn.functional.cross_entropy(out, target.unsqueeze(0))

    per_sample = fw.func.vmap(_func_grad(fw)(compute_loss), in_dims=(None, None, 0, 0))

    def step(i: int):
        return per_sample(params, buffers, xs[i % 8], ys[i % 8])

    return step


OPS_PER_STEP = 100


def build_op_add(fw, size: int, seed: int = 0):
    """Per-op recording overhead: ``OPS_PER_STEP`` times ``x + y`` on ``size`` elements that require grad
    (each result is recorded in the graph, then dropped)."""
    rng = np.random.default_rng(seed)
    x, y = (fw.tensor(rng.standard_normal(size).astype(np.float32), requires_grad=True) for _ in range(2))

    def step(i: int):
        for _ in range(OPS_PER_STEP):
            z = x + y
        return z

    return step


def build_conv_transpose(fw, batch: int, seed: int = 0):
    """A DCGAN generator layer: ConvTranspose2d(128, 64, 4, stride 2, padding 1) from (batch, 128, 16, 16) to
    (batch, 64, 32, 32), forward and backward (input, weight and bias gradients) against a fixed upstream
    gradient; no optimizer step."""
    fw.manual_seed(seed)
    layer = fw.nn.ConvTranspose2d(128, 64, 4, 2, 1)
    rng = np.random.default_rng(seed)
    xs = [fw.tensor(rng.standard_normal((batch, 128, 16, 16)).astype(np.float32), requires_grad=True)
          for _ in range(2)]
    up = fw.tensor(rng.standard_normal((batch, 64, 32, 32)).astype(np.float32))

    def step(i: int):
        x = xs[i % 2]
        x.grad = None
        layer.zero_grad()
        out = layer(x)
        out.backward(up)
        return out

    return step


def build_upsample(fw, batch: int, seed: int = 0, mode: str = "bilinear"):
    """``F.interpolate`` of a (batch, 64, 32, 32) activation to 64 x 64, forward and backward (the gradient of the
    input, as under a decoder's or a GAN generator's upsampling layer)."""
    rng = np.random.default_rng(seed)
    x = fw.tensor(rng.standard_normal((batch, 64, 32, 32)).astype(np.float32), requires_grad=True)
    g = fw.tensor(rng.standard_normal((batch, 64, 64, 64)).astype(np.float32))

    def step(i: int):
        x.grad = None
        y = fw.nn.functional.interpolate(x, size=(64, 64), mode=mode)
        y.backward(g)
        return y

    return step


def build_upsample_nearest(fw, batch: int, seed: int = 0):
    return build_upsample(fw, batch, seed, mode="nearest")


def wgan_gp_parts(fw, batch: int, seed: int = 0):
    """The WGAN-GP critic step's critic, Adam and data (8 batches each of real and fake images and of mixing
    weights), for ``build_wgan_gp_critic`` and ``node_profile.py``."""
    nn = fw.nn
    fw.manual_seed(seed)
    critic = nn.Sequential(
        nn.Conv2d(3, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(32, 64, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(64, 128, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Flatten(), nn.Linear(128 * 4 * 4, 1),
    )
    optimizer = fw.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    rng = np.random.default_rng(seed)
    reals = [fw.tensor(rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)) for _ in range(8)]
    fakes = [fw.tensor(rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)) for _ in range(8)]
    alphas = [fw.tensor(rng.uniform(0, 1, (batch, 1, 1, 1)).astype(np.float32)) for _ in range(8)]
    return critic, optimizer, reals, fakes, alphas


def build_wgan_gp_critic(fw, batch: int, seed: int = 0):
    """One WGAN-GP critic step on 32x32 images: the Wasserstein loss plus the gradient penalty, whose input
    gradient is taken with create_graph=True and differentiated again into the critic's weights."""
    critic, optimizer, reals, fakes, alphas = wgan_gp_parts(fw, batch, seed)

    def step(i: int) -> float:
        real, fake, alpha = reals[i % 8], fakes[i % 8], alphas[i % 8]
        x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        scores = critic(x_hat)
        (grads,) = fw.autograd.grad(scores, x_hat, fw.ones_like(scores), create_graph=True)
        penalty = ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step


# name -> (builder, batch, label)
def build_gcn(fw, nodes: int, seed: int = 0, features: int = 1433, hidden: int = 16, classes: int = 7,
              edges: int = 5278):
    """A two-layer GCN step (Kipf and Welling) on a Cora-sized random graph: the symmetrically normalised
    adjacency with self-loops a coalesced sparse COO matrix, ``relu(A @ X @ W1)``, Dropout(0.5), ``A @ H @ W2``,
    log_softmax and NLL over 140 training nodes, Adam(lr=0.01, weight_decay=5e-4). The sparse products
    (``torch.sparse.mm``, ``torch.spmm``) and their gradients are most of its time."""
    nn = fw.nn
    fw.manual_seed(seed)
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, nodes, edges), rng.integers(0, nodes, edges)
    rows = np.concatenate([src, dst, np.arange(nodes)])
    cols = np.concatenate([dst, src, np.arange(nodes)])
    keys = np.unique(rows * nodes + cols)
    rows, cols = keys // nodes, keys % nodes
    degree = np.bincount(rows, minlength=nodes).astype(np.float32)
    values = (degree[rows] * degree[cols]) ** -0.5
    adj = fw.sparse_coo_tensor(fw.tensor(np.stack([rows, cols])), fw.tensor(values), (nodes, nodes)).coalesce()
    x = fw.tensor((rng.random((nodes, features)) < 0.0127).astype(np.float32))  # Cora's ~18 words per paper
    labels = fw.tensor(rng.integers(0, classes, nodes))
    train = fw.tensor(np.arange(140))
    w1, w2 = nn.Linear(features, hidden, bias=False), nn.Linear(hidden, classes, bias=False)
    dropout = nn.Dropout(0.5)
    optimizer = fw.optim.Adam([*w1.parameters(), *w2.parameters()], lr=0.01, weight_decay=5e-4)

    def step(i: int):
        optimizer.zero_grad()
        h = fw.relu(fw.sparse.mm(adj, w1(x)))
        out = fw.spmm(adj, w2(dropout(h)))
        loss = nn.functional.nll_loss(fw.log_softmax(out[train], dim=1), labels[train])
        loss.backward()
        optimizer.step()
        return loss

    return step


WORKLOADS = {
    "mlp32": (build_mlp, 32, "MLP step, batch 32"),
    "mlp256": (build_mlp, 256, "MLP step, batch 256"),
    "cnn64": (build_cnn, 64, "small CNN step, batch 64"),
    "lstm_lm20": (build_lstm_lm, 20, "LSTM LM step, 35 x batch 20"),
    "gpt16": (build_gpt, 16, "GPT-style step, batch 16x64"),
    "gpt8x128": (build_gpt_large, 8, "GPT step, 8x128, w256, 4 layers"),
    "gpt_infer64": (build_gpt_infer, 64, "GPT inference, batch 64x64"),
    "gpt_infer1": (build_gpt_infer, 1, "GPT inference, batch 1x64"),
    "gpt_tiny": (build_gpt_tiny, 4, "GPT step, 4x16, w32, 2 heads"),
    "pqn128": (build_pqn, 128, "PQN-style Q-net: act + update 128"),
    "resnet32": (build_resnet, 32, "ResNet-style step, batch 32"),
    "emb_sgd": (build_embedding, 256, "Embedding step, SGD, batch 256"),
    "emb_adam": (build_embedding_adam, 256, "Embedding step, Adam, bat. 256"),
    "emb_sgd_sparse": (build_embedding_sparse, 256, "Embedding sparse=True, SGD, 256"),
    "emb_sparseadam": (build_embedding_sparse_adam, 256, "Embedding sparse, SparseAdam 256"),
    "mlp1": (build_mlp_plain, 1, "MLP (no BN) step, batch 1"),
    "op_add": (build_op_add, 4, "x + y recorded, 4 elements"),
    "convt32": (build_conv_transpose, 32, "ConvTranspose2d fwd+bwd, batch 32"),
    "per_sample_grads64": (build_per_sample_grads, 64, "vmap(grad) per-sample CNN, 64"),
    "upsample_bilinear": (build_upsample, 16, "bilinear 32->64, (16,64), fwd+bwd"),
    "upsample_nearest": (build_upsample_nearest, 16, "nearest 32->64, (16,64), fwd+bwd"),
    "wgan_gp32": (build_wgan_gp_critic, 32, "WGAN-GP critic step (penalty), b32"),
    "llama16": (build_llama, 16, "LLaMA-style step, 16x64, 4 layers"),
    "gcn_cora": (build_gcn, 2708, "GCN step, Cora-sized graph (2708)"),
}
# per-step figures shown in another unit: name -> (unit, factor applied to ms per step)
UNITS = {"op_add": ("us/op", 1000 / OPS_PER_STEP)}
