"""What type checkers see of ember: read by mypy and pyright in tests/test_typing.py, never run.

A short PyTorch-style training script. Each ``reveal_type`` line must be revealed as ``Tensor``; the three
lines marked ``# error`` must be the only errors (a misspelt method on a Tensor, a Module and an Optimizer).
"""

from typing import reveal_type

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
from ember.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.fc2(F.relu(self.bn(self.fc1(x))))


ember.manual_seed(0)
x = ember.randn(4, 3)
y = ember.zeros(4, 3)
reveal_type(x + y)
reveal_type(2.0 * x - 1)
reveal_type(x.sum())
reveal_type(x.mean(dim=0))
reveal_type(x.exp().log().view(-1))
reveal_type(x[0])
reveal_type(x @ x.T)
reveal_type(ember.cat([x, y], dim=1))
reveal_type(x.real + x.mH.imag)
reveal_type(x.inverse().lgamma().cfloat().conj())
reveal_type(x.new_zeros(size=(2,)).reshape(shape=(1, 2)).diag_embed())
model = Net()
reveal_type(model(x))
seq = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
reveal_type(seq(x))
loader = DataLoader(TensorDataset(x, ember.tensor([0, 1, 0, 1])), batch_size=2, shuffle=True)
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = optim.lr_scheduler.StepLR(opt, step_size=1)
for inputs, targets in loader:
    opt.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    reveal_type(loss)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    total: float = loss.item()
model.eval()
with ember.no_grad():
    predictions = model(x).argmax(dim=1)
running_mean = model.bn.running_mean
lstm = nn.LSTM(3, 5, batch_first=True)
out, (h, c) = lstm(x.unsqueeze(0))
n: int = x.shape[0]
ember.save(model.state_dict(), "/dev/null")


@ember.no_grad()
def evaluate(batch: ember.Tensor) -> ember.Tensor:
    return model(batch)


x.definitely_not_a_method()  # error
model.paramters()  # error
opt.stepp()  # error
