"""A tiny DDPM on a 2-D toy distribution (a mixture of eight Gaussians on a ring), written as public diffusion code
writes it: a cosine (or linear) beta schedule built in float64 with ``torch.cos``/``torch.linspace`` and
``torch.cumprod``, the derived quantities registered as float32 buffers, coefficients read at each sample's
timestep with ``gather`` (``extract``) or plain indexing, sinusoidal timestep embeddings, a residual MLP denoiser
with ``SiLU``/``GELU`` and ``LayerNorm``/``GroupNorm``, ``F.mse_loss`` on the predicted noise, AdamW with a
warmup-then-cosine ``LambdaLR``, gradient clipping, and two EMA copies of the model (one updated with
``mul_``/``add_``, one with ``torch.lerp``) beside diffusers' shadow-parameter ``EMAModel`` with its decay warmup and
``torch.optim.swa_utils.AveragedModel`` with ``get_ema_multi_avg_fn``;
the loss carries lucidrains' min-SNR weight and ``q_sample`` is checked against diffusers' ``add_noise``.
Sampling runs the ancestral DDPM chain under ``model.eval()`` and ``torch.inference_mode()``.
Timesteps and all noise come from NumPy, so PyTorch and ember see the same numbers.

    python diffusion_2d.py [--steps N] [--schedule cosine|linear]
"""

import argparse
import copy
import math

import numpy as np
import torch
import torch.nn.functional as F
from _support import rng, same_weights
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--schedule", default="cosine", choices=["cosine", "linear"])
args = parser.parse_args()

TIMESTEPS, BATCH, WARMUP = 50, 128, 8


def linear_beta_schedule(timesteps):
    scale = 1000 / timesteps
    return torch.linspace(scale * 0.0001, scale * 0.02, timesteps, dtype=torch.float64)


def cosine_beta_schedule(timesteps, s=0.008):
    """As proposed in https://openreview.net/forum?id=-NEAXOO5YSd (improved DDPM)."""
    steps = timesteps + 1
    t = torch.linspace(0, timesteps, steps, dtype=torch.float64) / timesteps
    alphas_cumprod = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)


def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim, theta=10000):
        super().__init__()
        self.dim, self.theta = dim, theta

    def forward(self, x):
        device = x.device
        half_dim = self.dim // 2
        emb = math.log(self.theta) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=device) * -emb)
        emb = x[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class ResidualBlock(nn.Module):
    def __init__(self, dim, time_dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.time_mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_dim, dim * 2))
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.GroupNorm(4, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x, time_emb):
        scale, shift = self.time_mlp(time_emb).chunk(2, dim=1)
        h = self.norm(x) * (scale + 1) + shift
        return x + self.block(h)


class Denoiser(nn.Module):
    def __init__(self, dim=2, hidden=64, time_dim=32, depth=2):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(time_dim), nn.Linear(time_dim, time_dim), nn.GELU(),
                                      nn.Linear(time_dim, time_dim))
        self.init = nn.Linear(dim, hidden)
        self.blocks = nn.ModuleList([ResidualBlock(hidden, time_dim) for _ in range(depth)])
        self.final = nn.Sequential(nn.LayerNorm(hidden), nn.SiLU(), nn.Linear(hidden, dim))

    def forward(self, x, time):
        t = self.time_mlp(time)
        x = self.init(x)
        for block in self.blocks:
            x = block(x, t)
        return self.final(x)


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps, beta_schedule="cosine"):
        super().__init__()
        self.model = model
        betas = cosine_beta_schedule(timesteps) if beta_schedule == "cosine" else linear_beta_schedule(timesteps)
        alphas = 1.0 - betas
        alphas_cumprod = torch.cumprod(alphas, dim=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
        self.num_timesteps = int(betas.shape[0])

        def register_buffer(name, val):
            return self.register_buffer(name, val.to(torch.float32))

        register_buffer("betas", betas)
        register_buffer("alphas_cumprod", alphas_cumprod)
        register_buffer("alphas_cumprod_prev", alphas_cumprod_prev)
        register_buffer("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod))
        register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1.0 - alphas_cumprod))
        register_buffer("sqrt_recip_alphas_cumprod", torch.sqrt(1.0 / alphas_cumprod))
        register_buffer("sqrt_recipm1_alphas_cumprod", torch.sqrt(1.0 / alphas_cumprod - 1))
        posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
        register_buffer("posterior_variance", posterior_variance)
        register_buffer("posterior_log_variance_clipped", torch.log(posterior_variance.clamp(min=1e-20)))
        register_buffer("posterior_mean_coef1", betas * torch.sqrt(alphas_cumprod_prev) / (1.0 - alphas_cumprod))
        register_buffer("posterior_mean_coef2",
                        (1.0 - alphas_cumprod_prev) * torch.sqrt(alphas) / (1.0 - alphas_cumprod))
        snr = alphas_cumprod / (1 - alphas_cumprod)
        maybe_clipped_snr = snr.clone().clamp_(max=5.0)
        register_buffer("loss_weight", maybe_clipped_snr / snr)  # min-SNR weighting for an epsilon target

    def q_sample(self, x_start, t, noise):
        return (extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
                + extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    def p_losses(self, x_start, t, noise):
        x = self.q_sample(x_start=x_start, t=t, noise=noise)
        model_out = self.model(x, t)
        loss = F.mse_loss(model_out, noise, reduction="none")
        loss = loss.mean(dim=list(range(1, len(loss.shape))))
        loss = loss * extract(self.loss_weight, t, loss.shape)
        return loss.mean()

    def forward(self, x_start, t, noise):
        return self.p_losses(x_start, t, noise)

    def predict_start_from_noise(self, x_t, t, noise):
        return (extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t
                - extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * noise)

    def q_posterior(self, x_start, x_t, t):
        posterior_mean = (extract(self.posterior_mean_coef1, t, x_t.shape) * x_start
                          + extract(self.posterior_mean_coef2, t, x_t.shape) * x_t)
        return posterior_mean, extract(self.posterior_log_variance_clipped, t, x_t.shape)

    @torch.no_grad()
    def p_sample(self, x, t: int, noise):
        batched_times = torch.full((x.shape[0],), t, dtype=torch.long)
        x_start = self.predict_start_from_noise(x, batched_times, self.model(x, batched_times))
        x_start = torch.clamp(x_start, -2.0, 2.0)
        model_mean, model_log_variance = self.q_posterior(x_start, x, batched_times)
        noise = noise if t > 0 else torch.zeros_like(x)
        return model_mean + (0.5 * model_log_variance).exp() * noise

    @torch.inference_mode()
    def sample(self, generator, n):
        img = torch.from_numpy(generator.standard_normal((n, 2)).astype(np.float32))
        for t in reversed(range(0, self.num_timesteps)):
            noise = torch.from_numpy(generator.standard_normal((n, 2)).astype(np.float32))
            img = self.p_sample(img, t, noise)
        return img


def add_noise(alphas_cumprod, original_samples, noise, timesteps):
    """DDPMScheduler.add_noise as diffusers writes it."""
    alphas_cumprod = alphas_cumprod.to(device=original_samples.device, dtype=original_samples.dtype)
    timesteps = timesteps.to(original_samples.device)
    sqrt_alpha_prod = alphas_cumprod[timesteps] ** 0.5
    sqrt_alpha_prod = sqrt_alpha_prod.flatten()
    while len(sqrt_alpha_prod.shape) < len(original_samples.shape):
        sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)
    sqrt_one_minus_alpha_prod = (1 - alphas_cumprod[timesteps]) ** 0.5
    sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.flatten()
    while len(sqrt_one_minus_alpha_prod.shape) < len(original_samples.shape):
        sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)
    return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise


class EMAModel:
    """The shadow-parameter EMA of diffusers' training scripts, with its decay warmup."""

    def __init__(self, parameters, decay=0.9999):
        self.shadow_params = [p.clone().detach() for p in parameters]
        self.decay, self.optimization_step = decay, 0

    def get_decay(self, optimization_step):
        return min(self.decay, (1 + optimization_step) / (10 + optimization_step))

    @torch.no_grad()
    def step(self, parameters):
        self.optimization_step += 1
        one_minus_decay = 1 - self.get_decay(self.optimization_step)
        for s_param, param in zip(self.shadow_params, parameters):
            if param.requires_grad:
                s_param.sub_(one_minus_decay * (s_param - param))
            else:
                s_param.copy_(param)

    def copy_to(self, parameters):
        for s_param, param in zip(self.shadow_params, parameters):
            param.data.copy_(s_param.to(param.device).data)


def mixture_of_gaussians(generator, n, modes=8, radius=1.5, std=0.1):
    component = generator.integers(0, modes, n)
    angle = 2 * math.pi * component / modes
    centers = np.stack([np.cos(angle), np.sin(angle)], -1) * radius
    return (centers + std * generator.standard_normal((n, 2))).astype(np.float32)


torch.manual_seed(0)
diffusion = GaussianDiffusion(Denoiser(), TIMESTEPS, beta_schedule=args.schedule)
same_weights(diffusion)
ema = copy.deepcopy(diffusion).requires_grad_(False)
ema_lerp = copy.deepcopy(diffusion).requires_grad_(False)
ema_decay = 0.9
ema_diffusers = EMAModel(diffusion.parameters(), decay=0.95)
ema_averaged = AveragedModel(diffusion, multi_avg_fn=get_ema_multi_avg_fn(ema_decay))

optimizer = torch.optim.AdamW(diffusion.parameters(), lr=3e-3, betas=(0.9, 0.99), weight_decay=1e-2)


def warmup_cosine(step):
    if step < WARMUP:
        return float(step + 1) / float(max(1, WARMUP))
    progress = float(step - WARMUP) / float(max(1, args.steps - WARMUP))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine)

# the diffusers scheduler spells the same product with numpy's keyword
schedule_check = torch.cumprod(1.0 - diffusion.betas, axis=0)
print(f"schedule {args.schedule}: T {diffusion.num_timesteps} alpha_bar[0] {diffusion.alphas_cumprod[0].item():.6f} "
      f"alpha_bar[-1] {diffusion.alphas_cumprod[-1].item():.6e} axis-cumprod matches "
      f"{torch.allclose(schedule_check, diffusion.alphas_cumprod, rtol=1e-5, atol=1e-6)}")
print(f"buffers {sorted(name for name, _ in diffusion.named_buffers())[:3]} float32 {diffusion.betas.dtype == torch.float32}")

data_gen, noise_gen = rng(4), rng(5)
diffusion.train()
for step in range(args.steps):
    clean_images = torch.from_numpy(mixture_of_gaussians(data_gen, BATCH))
    timesteps = torch.from_numpy(noise_gen.integers(0, TIMESTEPS, BATCH)).long()
    noise = torch.from_numpy(noise_gen.standard_normal((BATCH, 2)).astype(np.float32))
    loss = diffusion(clean_images, timesteps, noise)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(diffusion.parameters(), 1.0)
    optimizer.step()
    lr_scheduler.step()
    with torch.no_grad():
        for ema_p, p in zip(ema.parameters(), diffusion.parameters()):
            ema_p.mul_(ema_decay).add_(p, alpha=1 - ema_decay)
        for ema_p, p in zip(ema_lerp.parameters(), diffusion.parameters()):
            ema_p.copy_(torch.lerp(ema_p, p, 1 - ema_decay))
    ema_diffusers.step(diffusion.parameters())
    ema_averaged.update_parameters(diffusion)
    if step % 10 == 9 or step == 0:
        print(f"step {step + 1}: loss {loss.item():.6f} grad norm {grad_norm.item():.6f} "
              f"lr {lr_scheduler.get_last_lr()[0]:.6e}")

with torch.no_grad():
    test = torch.from_numpy(mixture_of_gaussians(rng(6), 256))
    t = torch.from_numpy(rng(7).integers(0, TIMESTEPS, 256)).long()
    noise = torch.from_numpy(rng(8).standard_normal((256, 2)).astype(np.float32))
    noisy = diffusion.q_sample(test, t, noise)
    by_index = diffusion.sqrt_alphas_cumprod[t][:, None] * test + diffusion.sqrt_one_minus_alphas_cumprod[t][:, None] * noise
    by_add_noise = add_noise(diffusion.alphas_cumprod, test, noise, t)
    print(f"q_sample gather vs index max gap {(noisy - by_index).abs().max().item():.6f} "
          f"add_noise agrees {torch.allclose(noisy, by_add_noise, atol=1e-5)}")
    print(f"loss weight first {diffusion.loss_weight[0].item():.6f} last {diffusion.loss_weight[-1].item():.6f}")
    shadow = copy.deepcopy(diffusion)
    ema_diffusers.copy_to(shadow.parameters())
    print(f"diffusers ema: decay now {ema_diffusers.get_decay(ema_diffusers.optimization_step):.6f} "
          f"test loss {shadow.eval()(test, t, noise).item():.6f}")
    for name, model in (("model", diffusion), ("ema", ema), ("ema lerp", ema_lerp), ("AveragedModel ema", ema_averaged)):
        model.eval()
        print(f"{name}: test loss {model(test, t, noise).item():.6f}")
    print(f"AveragedModel n_averaged {ema_averaged.n_averaged.item()}")
    gap = max((a - b).abs().max().item() for a, b in zip(ema.parameters(), ema_lerp.parameters()))
    print(f"ema mul_/add_ vs lerp close {gap < 1e-5}")
    samples = ema.sample(rng(9), 512)
    radius = samples.norm(dim=-1)
    print(f"samples mean {samples.mean(0).tolist()[0]:.5f} {samples.mean(0).tolist()[1]:.5f} "
          f"std {samples.std(0).tolist()[0]:.5f} {samples.std(0).tolist()[1]:.5f} "
          f"radius {radius.mean().item():.5f}")
    print("sample:", tuple(samples.shape))
