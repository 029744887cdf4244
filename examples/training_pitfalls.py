"""What ``backward()`` and ``step()`` really do, and the mistakes that follow: a list of checked claims.

An ordinary PyTorch program; every claim below holds under PyTorch. Run it on ember with

    python -m ember.compat examples/training_pitfalls.py

or with PyTorch as ``python examples/training_pitfalls.py``. Each claim is printed as it is checked;
the last line is ``training_pitfalls: N of N claims hold``. A false claim stops the program with
an AssertionError naming it.
"""

import torch
import torch.nn as nn

claims = []


def claim(text, holds):
    """Record one checked statement; stop at the first false one."""
    assert holds, f"false: {text}"
    claims.append(text)
    print(f"  ok  {text}")


def error_of(fn):
    """The RuntimeError that fn() raises, or None when it raises nothing."""
    try:
        fn()
    except RuntimeError as e:
        return e
    return None


def same(xs, ys, atol=1e-6):
    return all(torch.allclose(a, b, atol=atol) for a, b in zip(xs, ys))


torch.manual_seed(0)
mse = nn.MSELoss()

# 1. backward() adds into .grad; nothing clears it but you.
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
(3 * w).sum().backward()
claim("the first backward writes d(loss)/dw into w.grad", w.grad.tolist() == [3.0, 3.0, 3.0])
(3 * w).sum().backward()
claim("a second backward adds to it instead of replacing it", w.grad.tolist() == [6.0, 6.0, 6.0])

# 2. backward() frees the graph unless asked to keep it.
a = torch.randn(5, requires_grad=True)
loss = (a.sin() * a).sum()
loss.backward()
claim("backward twice through the same graph is an error", error_of(loss.backward) is not None)
loss = (a.sin() * a).sum()
loss.backward(retain_graph=True)
claim("retain_graph=True allows a second backward", error_of(loss.backward) is None)

# 3. Under no_grad nothing is recorded, so there is nothing to differentiate.
model = nn.Linear(4, 1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
with torch.no_grad():
    loss = mse(model(x), y)
claim("a loss computed under no_grad has no grad_fn", loss.grad_fn is None and not loss.requires_grad)
claim("calling backward on it is an error", error_of(loss.backward) is not None)

# 4. detach() cuts the graph: the parameters behind it get no gradient.
loss = mse(model(x).detach(), y)
claim("backward from a detached output is an error", error_of(loss.backward) is not None)
claim("and leaves every .grad at None", all(p.grad is None for p in model.parameters()))

# 5. The optimizer only reads .grad.
sgd = torch.optim.SGD(model.parameters(), lr=0.5)
before = [p.detach().clone() for p in model.parameters()]
sgd.zero_grad()
sgd.step()                 # a mistake on purpose: ember warns here (TrainingLoopWarning)
claim("step() without a backward leaves the parameters as they were",
      all(torch.equal(b, p) for b, p in zip(before, model.parameters())))
mse(model(x), y).backward()
expected = [(p - 0.5 * p.grad).detach() for p in model.parameters()]
sgd.step()
claim("plain SGD's step is p - lr * p.grad", same(expected, model.parameters()))

# 6. Clipping belongs between backward and step.
sgd.zero_grad()
(100 * mse(model(x), y)).backward()
returned = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
clipped = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
claim("clip_grad_norm_ returns the norm measured before clipping", returned.item() > 0.5)
claim("after it the gradients' total norm is max_norm", abs(clipped.item() - 0.5) < 1e-4)

# 7. Gradient accumulation: k backwards of loss/k equal one backward over the whole batch.
layer = nn.Linear(4, 3)
X, Y = torch.randn(12, 4), torch.randn(12, 3)
mse(layer(X), Y).backward()
whole = [p.grad.clone() for p in layer.parameters()]
layer.zero_grad()
for chunk_x, chunk_y in zip(X.chunk(3), Y.chunk(3)):
    (mse(layer(chunk_x), chunk_y) / 3).backward()
claim("three accumulated thirds give the whole batch's gradient", same(whole, [p.grad for p in layer.parameters()]))


# 8. Two losses, one backward: their gradients add (weighted as the losses are).
def grads_of(loss_fn):
    layer.zero_grad()
    loss_fn().backward()
    return [p.grad.clone() for p in layer.parameters()]


g_mse = grads_of(lambda: mse(layer(X), Y))
g_l1 = grads_of(lambda: layer(X).abs().mean())
g_both = grads_of(lambda: mse(layer(X), Y) + 0.1 * layer(X).abs().mean())
claim("backward of a weighted sum of losses gives the weighted sum of gradients",
      same(g_both, [a + 0.1 * b for a, b in zip(g_mse, g_l1)]))

# 9. .grad can be edited between backward and step, in place, under no_grad.
with torch.no_grad():
    for p in layer.parameters():
        p.grad.mul_(100).clamp_(-0.01, 0.01)
claim("in-place edits of .grad stick", all(p.grad.abs().max().item() <= 0.01 for p in layer.parameters()))

# 10. Momentum SGD keeps a velocity per parameter: v = momentum * v + g; p -= lr * v.
torch.manual_seed(1)
p = torch.randn(4, requires_grad=True)
q, v = p.detach().clone(), None
opt = torch.optim.SGD([p], lr=0.05, momentum=0.8)
for _ in range(4):
    opt.zero_grad()
    (p ** 2).sum().backward()
    opt.step()
    g = 2 * q
    v = g if v is None else 0.8 * v + g
    q = q - 0.05 * v
claim("momentum SGD matches the update written by hand over 4 steps", torch.allclose(p.detach(), q, atol=1e-6))

# 11. Changing in place a tensor that backward still needs is caught, not silently wrong.
h = torch.randn(3, requires_grad=True)
e = h.exp()                       # exp's backward reuses its own output
out = (e * 2).sum() + e.sum()
with torch.no_grad():
    e.mul_(2)
claim("backward after an in-place change of a saved tensor is an error", error_of(out.backward) is not None)

# 12. zero_grad() sets gradients to None by default.
opt.zero_grad()
claim("zero_grad() leaves .grad as None", p.grad is None)

print(f"training_pitfalls: {len(claims)} of {len(claims)} claims hold")
