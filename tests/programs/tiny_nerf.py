"""A tiny NeRF in the idiom of krrish94/nerf-pytorch's tiny_nerf.py: get_ray_bundle with torch.meshgrid (transposed,
indexing='ij' default), directions by torch.stack and broadcasting against the camera pose; depth values from
torch.linspace plus stratified noise; positional_encoding by a list of sin/cos of 2**i scaled inputs (torch.cat);
get_minibatches chunking; render_volume_density with cumprod_exclusive (torch.cumprod + torch.roll + first entry set
to 1), a 1e10 far distance concatenated with .expand, F.relu sigma, torch.sigmoid rgb; importance sampling with
torch.searchsorted(right=True) on the weights' CDF. A synthetic 'scene' (a coloured ball) is fitted from 2 views."""

# ruff: noqa: UP008 (super(VeryTinyNerfModel, self), as the program it imitates writes it)
import math

import numpy as np
import torch
from _support import rng, same_weights

torch.manual_seed(0)
r = rng(9)


def meshgrid_xy(tensor1, tensor2):
    ii, jj = torch.meshgrid(tensor1, tensor2)
    return ii.transpose(-1, -2), jj.transpose(-1, -2)


def cumprod_exclusive(tensor):
    cumprod = torch.cumprod(tensor, dim=-1)
    cumprod = torch.roll(cumprod, 1, -1)
    cumprod[..., 0] = 1.0
    return cumprod


def get_ray_bundle(height, width, focal_length, tform_cam2world):
    ii, jj = meshgrid_xy(torch.arange(width).to(tform_cam2world), torch.arange(height).to(tform_cam2world))
    directions = torch.stack([(ii - width * 0.5) / focal_length, -(jj - height * 0.5) / focal_length,
                              -torch.ones_like(ii)], dim=-1)
    ray_directions = torch.sum(directions[..., None, :] * tform_cam2world[:3, :3], dim=-1)
    ray_origins = tform_cam2world[:3, -1].expand(ray_directions.shape)
    return ray_origins, ray_directions


def positional_encoding(tensor, num_encoding_functions=4, include_input=True, log_sampling=True):
    encoding = [tensor] if include_input else []
    frequency_bands = 2.0 ** torch.linspace(0.0, num_encoding_functions - 1, num_encoding_functions)
    for freq in frequency_bands:
        for func in [torch.sin, torch.cos]:
            encoding.append(func(tensor * freq))
    return torch.cat(encoding, dim=-1)


def get_minibatches(inputs, chunksize=64):
    return [inputs[i:i + chunksize] for i in range(0, inputs.shape[0], chunksize)]


def render_volume_density(radiance_field, ray_origins, depth_values):
    sigma_a = torch.nn.functional.relu(radiance_field[..., 3])
    rgb = torch.sigmoid(radiance_field[..., :3])
    one_e_10 = torch.tensor([1e10], dtype=ray_origins.dtype, device=ray_origins.device)
    dists = torch.cat((depth_values[..., 1:] - depth_values[..., :-1], one_e_10.expand(depth_values[..., :1].shape)), dim=-1)
    alpha = 1.0 - torch.exp(-sigma_a * dists)
    weights = alpha * cumprod_exclusive(1.0 - alpha + 1e-10)
    rgb_map = (weights[..., None] * rgb).sum(dim=-2)
    depth_map = (weights * depth_values).sum(dim=-1)
    acc_map = weights.sum(-1)
    return rgb_map, depth_map, acc_map, weights


class VeryTinyNerfModel(torch.nn.Module):
    def __init__(self, filter_size=32, num_encoding_functions=4):
        super(VeryTinyNerfModel, self).__init__()
        self.layer1 = torch.nn.Linear(3 + 3 * 2 * num_encoding_functions, filter_size)
        self.layer2 = torch.nn.Linear(filter_size, filter_size)
        self.layer3 = torch.nn.Linear(filter_size, 4)
        self.relu = torch.nn.functional.relu

    def forward(self, x):
        x = self.relu(self.layer1(x))
        x = self.relu(self.layer2(x))
        return self.layer3(x)


def pose(theta):
    c, s = math.cos(theta), math.sin(theta)
    return torch.tensor([[c, 0, s, 3 * s], [0, 1, 0, 0], [-s, 0, c, 3 * c], [0, 0, 0, 1]], dtype=torch.float32)


H = W = 6
focal, near, far, N = 6.0, 2.0, 4.0, 12


def target_image(tform):
    o, d = get_ray_bundle(H, W, focal, tform)
    t = torch.linspace(near, far, 64)
    pts = o[..., None, :] + d[..., None, :] * t[:, None]
    inside = (pts.norm(dim=-1) < 1.0).float()
    hit = inside.max(-1).values
    return hit[..., None] * torch.tensor([0.9, 0.3, 0.2]) + (1 - hit[..., None]) * 0.05


def run_one_iter(model, tform, noise):
    ray_origins, ray_directions = get_ray_bundle(H, W, focal, tform)
    depth_values = torch.linspace(near, far, N).to(ray_origins)
    depth_values = depth_values + torch.from_numpy(noise) * (far - near) / N
    query_points = ray_origins[..., None, :] + ray_directions[..., None, :] * depth_values[..., :, None]
    flat = positional_encoding(query_points.reshape((-1, 3)))
    predictions = [model(batch) for batch in get_minibatches(flat, chunksize=100)]
    radiance_field = torch.cat(predictions, dim=0).reshape(list(query_points.shape[:-1]) + [4])
    return render_volume_density(radiance_field, ray_origins, depth_values)


model = VeryTinyNerfModel()
same_weights(model)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
poses = [pose(0.0), pose(1.2)]
targets = [target_image(p) for p in poses]
for i in range(12):
    k = i % 2
    noise = r.random((H, W, N)).astype(np.float32)
    rgb, depth, acc, weights = run_one_iter(model, poses[k], noise)
    loss = torch.nn.functional.mse_loss(rgb, targets[k])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    psnr = -10.0 * torch.log10(loss)
    print(f"iter {i} loss {loss.item():.6f} psnr {psnr.item():.4f} depth-mean {depth.mean().item():.5f} acc {acc.mean().item():.5f}")

with torch.no_grad():
    rgb, depth, acc, weights = run_one_iter(model, pose(0.6), np.full((H, W, N), 0.5, np.float32))
    z = torch.linspace(near, far, N).expand(H, W, N).contiguous()
    mids = 0.5 * (z[..., 1:] + z[..., :-1])
    w = weights[..., 1:-1] + 1e-5
    pdf = w / torch.sum(w, -1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[..., :1]), torch.cumsum(pdf, -1)], -1)
    # bin midpoints, not linspace(0, 1): u == 1.0 ties with the CDF's last entry, 1 +- an ulp of float noise
    u = ((torch.arange(8) + 0.5) / 8).expand(list(cdf.shape[:-1]) + [8]).contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below, above = torch.max(torch.zeros_like(inds - 1), inds - 1), torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    cdf_g = torch.gather(cdf, -1, torch.stack([below, above], -1).view(H, W, -1)).view(H, W, 8, 2)
    bins_g = torch.gather(mids, -1, torch.stack([below, above], -1).clamp(max=mids.shape[-1] - 1).view(H, W, -1)).view(H, W, 8, 2)
    denom = torch.where(cdf_g[..., 1] - cdf_g[..., 0] < 1e-5, torch.ones_like(cdf_g[..., 0]), cdf_g[..., 1] - cdf_g[..., 0])
    samples = bins_g[..., 0] + (u - cdf_g[..., 0]) / denom * (bins_g[..., 1] - bins_g[..., 0])
    print(f"novel view rgb {rgb.mean(dim=(0, 1)).tolist()[0]:.5f} inds-sum {inds.sum().item()} fine-mean {samples.mean().item():.5f}")
