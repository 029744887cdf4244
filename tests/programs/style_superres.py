"""Fast style transfer and sub-pixel super-resolution (the shapes of the fast-neural-style and super-resolution
examples), shrunk: an image transformation network trained against a frozen loss network, then an ESPCN.

    python style_superres.py [--steps N]

Idioms: reflection padding, InstanceNorm2d(affine=True), residual blocks, nearest upsampling by
``interpolate(scale_factor=2)``; a frozen loss network (``requires_grad = False``) returning a namedtuple of
feature maps; Gram matrices with ``bmm``; ``new_tensor(...).view(-1, 1, 1)`` and in-place ``div_`` to normalise
a batch; a style target ``repeat``-ed over the batch; ``PixelShuffle`` after ``orthogonal_`` initialisation with
``calculate_gain``; PSNR with ``math.log10``; the state_dict saved and loaded into a fresh network.
"""

import argparse
import io
import math
import re
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.init as init
from _support import rng, same_weights

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
args = parser.parse_args()
torch.manual_seed(0)
gen = rng(0)


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.relu(self.in1(self.conv1(x)))
        return self.in2(self.conv2(out)) + x


class UpsampleConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super().__init__()
        self.upsample = upsample
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = nn.functional.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.in1 = ConvLayer(3, 8, kernel_size=5, stride=1), nn.InstanceNorm2d(8, affine=True)
        self.conv2, self.in2 = ConvLayer(8, 16, kernel_size=3, stride=2), nn.InstanceNorm2d(16, affine=True)
        self.res1, self.res2 = ResidualBlock(16), ResidualBlock(16)
        self.deconv1 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
        self.in3 = nn.InstanceNorm2d(8, affine=True)
        self.deconv2 = ConvLayer(8, 3, kernel_size=5, stride=1)
        self.relu = nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res2(self.res1(y))
        y = self.relu(self.in3(self.deconv1(y)))
        return self.deconv2(y)


class LossNet(nn.Module):
    """A small stand-in for the pretrained VGG: slices of a conv stack, outputs as a namedtuple."""

    def __init__(self, requires_grad=False):
        super().__init__()
        features = [nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 8, 3, padding=1),
                    nn.ReLU(inplace=True), nn.MaxPool2d(2, 2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True)]
        self.slice1, self.slice2 = nn.Sequential(), nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), features[x])
        for x in range(4, 7):
            self.slice2.add_module(str(x), features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h_relu1 = self.slice1(X)
        h_relu2 = self.slice2(h_relu1)
        outputs = namedtuple("LossOutputs", ["relu1", "relu2"])
        return outputs(h_relu1, h_relu2)


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


class ESPCN(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))


# ------------------------------------------------------------------ style transfer
transformer, loss_net, espcn = TransformerNet(), LossNet(requires_grad=False), ESPCN(upscale_factor=2)
same_weights(transformer, loss_net, espcn)
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
mse_loss = nn.MSELoss()
style = torch.from_numpy(gen.uniform(0, 255, (1, 3, 16, 16)).astype("float32"))
features_style = loss_net(normalize_batch(style.repeat(2, 1, 1, 1)))
gram_style = [gram_matrix(y) for y in features_style]
content_weight, style_weight = 1.0, 5e3

for step in range(args.steps):
    x = torch.from_numpy(gen.uniform(0, 255, (2, 3, 16, 16)).astype("float32"))
    n_batch = len(x)
    optimizer.zero_grad()
    y = transformer(x)
    y = normalize_batch(y)
    x = normalize_batch(x)
    features_y, features_x = loss_net(y), loss_net(x)
    content_loss = content_weight * mse_loss(features_y.relu2, features_x.relu2)
    style_loss = 0.0
    for ft_y, gm_s in zip(features_y, gram_style):
        gm_y = gram_matrix(ft_y)
        style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
    style_loss *= style_weight
    total_loss = content_loss + style_loss
    total_loss.backward()
    optimizer.step()
    print(f"style step {step}: content {content_loss.item():.6f} style {style_loss.item():.6f}")

state_dict = transformer.state_dict()
buffer = io.BytesIO()
torch.save(state_dict, buffer)
buffer.seek(0)
restored = torch.load(buffer)
for k in list(restored.keys()):  # the example drops running stats older InstanceNorm checkpoints held
    if re.search(r"in\d+\.running_(mean|var)$", k):
        del restored[k]
style_model = TransformerNet()
style_model.load_state_dict(restored)
style_model.eval()
with torch.no_grad():
    content = torch.from_numpy(gen.uniform(0, 255, (1, 3, 12, 12)).astype("float32"))
    output = style_model(content).clamp(0, 255)
print(f"stylised {list(output.shape)} mean {output.mean().item():.5f}")

# ------------------------------------------------------------------ super-resolution
optimizer = torch.optim.Adam(espcn.parameters(), lr=0.01)
criterion = nn.MSELoss()
for step in range(args.steps):
    target = torch.from_numpy(gen.random((4, 1, 12, 12)).astype("float32"))
    input = nn.functional.avg_pool2d(target, 2)
    optimizer.zero_grad()
    loss = criterion(espcn(input), target)
    loss.backward()
    optimizer.step()
    print(f"superres step {step}: loss {loss.item():.6f}")
with torch.no_grad():
    mse = criterion(espcn(input), target)
print(f"psnr {10 * math.log10(1 / mse.item()):.4f} dB")
