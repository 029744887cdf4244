"""A variational autoencoder on binary-valued vectors (the shape of the classic MNIST VAE example).

    python vae.py [--epochs N]

The reparameterisation noise comes from NumPy so that PyTorch and ember draw the same values.
"""

import argparse

import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()
torch.manual_seed(1)
data_rng, noise_rng = rng(0), rng(1)
images = torch.from_numpy((data_rng.random((64, 36)) > 0.5).astype("float32"))
train_loader = DataLoader(TensorDataset(images, torch.zeros(64)), batch_size=16, shuffle=False)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(36, 20)
        self.fc21 = nn.Linear(20, 4)
        self.fc22 = nn.Linear(20, 4)
        self.fc3 = nn.Linear(4, 20)
        self.fc4 = nn.Linear(20, 36)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.from_numpy(noise_rng.standard_normal(std.shape).astype("float32"))
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 36))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 36), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = VAE()
same_weights(model)
optimizer = optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(1, args.epochs + 1):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        print(f"epoch {epoch} batch {batch_idx}: loss {loss.item() / len(data):.8f}")
    print(f"epoch {epoch}: average loss {train_loss / len(train_loader.dataset):.8f}")
