"""A spatial transformer network (the PyTorch STN tutorial's model): a localisation net regressing a 2x3 affine
theta initialised to the identity (weight zeroed, bias copied), F.affine_grid and F.grid_sample (bilinear, zeros
padding, align_corners=False), a classifier with Dropout2d turned off, F.max_pool2d, nll_loss, and the same
with nearest / border / reflection sampling at evaluation."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3)
        self.conv2 = nn.Conv2d(6, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d(p=0.0)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)
        self.localization = nn.Sequential(nn.Conv2d(1, 4, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                                          nn.Conv2d(4, 6, kernel_size=3), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(6 * 3 * 3, 16), nn.ReLU(True), nn.Linear(16, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x, mode="bilinear", padding_mode="zeros"):
        xs = self.localization(x)
        xs = xs.view(-1, 6 * 3 * 3)
        theta = self.fc_loc(xs).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=False), theta

    def forward(self, x, **kw):
        x, theta = self.stn(x, **kw)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 8 * 2 * 2)
        x = F.dropout(F.relu(self.fc1(x)), p=0.0, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1), theta


labels = torch.from_numpy(r.integers(0, 3, 16))
images = torch.from_numpy(r.standard_normal((16, 1, 14, 14)).astype("float32")) * 0.2
for i, c in enumerate(labels.tolist()):
    images[i, 0, 3 + c * 3: 6 + c * 3, 4:10] += 1.0
model = Net()
same_weights(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(6):
    out, theta = model(images)
    loss = F.nll_loss(out, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f} theta {theta[0].flatten().tolist()[:3]}")
model.eval()
with torch.no_grad():
    for mode, pad in (("bilinear", "zeros"), ("nearest", "border"), ("bilinear", "reflection")):
        out, _ = model(images, mode=mode, padding_mode=pad)
        print(mode, pad, f"{F.nll_loss(out, labels).item():.6f}", (out.argmax(1) == labels).sum().item())
