"""Linear regression on one device: the smallest complete PyTorch training loop.

An ordinary PyTorch program. Run it on ember with

    python -m ember.compat examples/single_device.py

(``import torch`` then resolves to ember), or with PyTorch as ``python examples/single_device.py``.
It fits ``nn.Linear(10, 1)`` to a fixed random batch with plain SGD for 20 steps and prints the loss
of the first and of the last step, which must be lower.
"""

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"  # ember runs on the CPU: this picks "cpu"
torch.manual_seed(0)

model = nn.Linear(10, 1).to(device)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(32, 10, device=device)
targets = torch.randn(32, 1, device=device)

losses = []
for _ in range(20):
    optimizer.zero_grad()                      # clear the gradients left by the previous step
    loss = criterion(model(inputs), targets)
    loss.backward()                            # fills model.weight.grad and model.bias.grad
    optimizer.step()                           # weight <- weight - lr * grad
    losses.append(loss.item())

print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} after {len(losses)} SGD steps")
assert losses[-1] < losses[0], "the loss did not fall"
