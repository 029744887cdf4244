"""A character RNN classifier written the PyTorch 0.3 way, as many old tutorials and repositories (e.g.
spro/practical-pytorch's char-rnn-classification) still are: Variable(..., volatile=True) for evaluation and
.volatile read back, an RNN cell built from nn.Linear over torch.cat((input, hidden), 1), F.log_softmax and
F.softmax without dim (PyTorch's implicit-dim warning), nn.init.xavier_uniform (the deprecated un-suffixed
initializer), size_average=False losses, clip_grad_norm (deprecated name), F.sigmoid/F.tanh, .type(FloatTensor),
loss.data[0]-style reads written as .item(), and keyword calls with PyTorch's own argument names
(torch.gather(input=..., dim=..., index=...), torch.add(input=, other=, alpha=), torch.mm(input=, mat2=))."""

# ruff: noqa: UP008 (super(RNN, self), as the programs it imitates write it)
import string
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights
from torch.autograd import Variable

warnings.simplefilter("ignore", UserWarning)
warnings.simplefilter("ignore", FutureWarning)
warnings.simplefilter("ignore", DeprecationWarning)
r = rng(10)
all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
categories = ["vowelish", "consonantish", "mixed"]


def make_name(c):
    pool = {"vowelish": "aeiouy", "consonantish": "bcdfgklmnprst", "mixed": "abcdeiklmnoprstu"}[categories[c]]
    return "".join(r.choice(list(pool), r.integers(3, 8))).capitalize()


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.gate = nn.Parameter(torch.FloatTensor(hidden_size, hidden_size).normal_(0, 0.1))
        nn.init.xavier_uniform(self.i2h.weight)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = F.tanh(self.i2h(combined)) * F.sigmoid(torch.mm(input=hidden, mat2=self.gate))
        output = F.log_softmax(self.i2o(combined))
        return output, hidden

    def initHidden(self):
        return Variable(torch.zeros(1, self.hidden_size))


rnn = RNN(n_letters, 24, len(categories))
same_weights(rnn)
criterion = nn.NLLLoss(size_average=False)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05, momentum=0.5)
for it in range(30):
    c = int(r.integers(0, 3))
    line = make_name(c)
    category_tensor = Variable(torch.LongTensor([c]))
    line_tensor = Variable(lineToTensor(line))
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    picked = torch.gather(input=output, dim=1, index=category_tensor.view(1, 1))
    loss.backward()
    torch.nn.utils.clip_grad_norm(rnn.parameters(), 5.0)
    optimizer.step()
    if it % 5 == 4:
        print(f"{it} {line} loss {loss.data.item():.5f} picked {picked.item():.5f}")

correct = 0
for c in range(3):
    for _ in range(5):
        line = make_name(c)
        line_tensor = Variable(lineToTensor(line), volatile=True)
        assert line_tensor.volatile is False
        hidden = rnn.initHidden()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        probs = F.softmax(output.exp()).type(torch.FloatTensor)
        topv, topi = probs.data.topk(1, 1, True)
        correct += int(topi[0][0] == c)
        mixed = torch.add(input=probs, other=probs, alpha=0.5)
print(f"accuracy {correct / 15:.4f} last probs {' '.join(f'{p:.5f}' for p in mixed[0].tolist())}")
