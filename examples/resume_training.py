"""Checkpoint a whole training run and resume it bit-identically, on one process or under DDP.

    python examples/resume_training.py --steps 12 --out final.pt                       # uninterrupted
    python examples/resume_training.py --steps 12 --stop-after 5 --ckpt-dir ckpts      # "crashes" after step 5
    python examples/resume_training.py --steps 12 --ckpt-dir ckpts --out resumed.pt    # resumes from step 5
    python -m ember.distributed.run --nproc-per-node 2 --max-restarts 3 examples/resume_training.py --ddp ...

The checkpoint holds everything the rest of the run depends on: model, optimizer
and scheduler state; the epoch and how many batches of it were consumed; the
shuffling generator's state at the start of that epoch (to rebuild the same
order, then skip the consumed batches); and the current state of every random
source the loop draws from (ember's global generator for dropout, NumPy's and
Python's for the noise added to the inputs). The loader shuffles with its own
generator, so its order does not depend on how many numbers dropout drew.

Under DDP every step is saved with ``ember.distributed.checkpoint`` (PyTorch's
``torch.distributed.checkpoint``) into its own directory, ``CKPT_DIR/step_NNNNNN``:
each rank writes its part, and rank 0 marks the step complete (``.metadata``)
only once every rank's part is on disk. The weights, optimizer and progress are
the same on every rank and stored once; each rank's random states differ and go
under its own key, ``rng.rank<R>``. A restart (``--max-restarts``, or starting
the job again) resumes every rank from ``latest_checkpoint(CKPT_DIR)``, the last
step that every rank completed, so no rank starts a step ahead of another. Only
PyTorch-named APIs are used, besides ``latest_checkpoint``; the one-file checkpoint
loads with ``weights_only=False`` (NumPy's state is an array), in ember as in PyTorch.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random

import numpy as np

import ember as torch
import ember.nn as nn
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_run(ddp: bool):
    """Model, optimizer, scheduler and data loader, freshly constructed (as after a restart)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
    data = np.random.default_rng(0)
    dataset = TensorDataset(torch.tensor(data.standard_normal((40, 6)).astype(np.float32)),
                            torch.tensor(data.standard_normal((40, 2)).astype(np.float32)))
    generator = torch.Generator()
    generator.manual_seed(1)
    if ddp:
        import ember.distributed as dist
        from ember.nn.parallel import DistributedDataParallel

        sampler = DistributedSampler(dataset, seed=2)  # its order depends only on seed + epoch
        loader = DataLoader(dataset, batch_size=4, sampler=sampler)
        net = DistributedDataParallel(model)
        rank = dist.get_rank()
    else:
        sampler = None
        loader = DataLoader(dataset, batch_size=4, shuffle=True, generator=generator)
        net, rank = model, 0
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
    return model, net, optimizer, scheduler, loader, sampler, generator, rank


def checkpoint_path(ckpt_dir: str) -> str:
    return os.path.join(ckpt_dir, "ckpt.pt")


def save_checkpoint(ckpt_dir: str, ddp: bool, rank: int, state: dict, rng: dict) -> None:
    """One process: one file, replaced atomically. DDP: one directory per step, complete once every rank's
    part is written; the RNG states, which differ per rank, under each rank's own key."""
    if not ddp:
        torch.save({**state, "rng": rng}, checkpoint_path(ckpt_dir))
        return
    import ember.distributed.checkpoint as dcp

    dcp.save({**state, f"rng.rank{rank}": rng}, checkpoint_id=os.path.join(ckpt_dir, f"step_{state['step']:06d}"))


def has_checkpoint(ckpt_dir: str, ddp: bool) -> bool:
    if not ddp:
        return os.path.exists(checkpoint_path(ckpt_dir))
    import ember.distributed.checkpoint as dcp

    return dcp.latest_checkpoint(ckpt_dir) is not None


def load_checkpoint(ckpt_dir: str, ddp: bool, rank: int, template: dict) -> dict:
    """The latest checkpoint, with this rank's RNG states under "rng"; ``template`` says what to load."""
    if not ddp:
        return torch.load(checkpoint_path(ckpt_dir), weights_only=False)  # our own file: it holds NumPy arrays
    import ember.distributed.checkpoint as dcp

    latest = dcp.latest_checkpoint(ckpt_dir)  # the last step every rank completed
    if latest is None:
        raise FileNotFoundError(f"no complete checkpoint in {ckpt_dir!r}")
    state = {**template, f"rng.rank{rank}": {"ember": torch.get_rng_state(), "numpy": None, "python": None}}
    dcp.load(state, checkpoint_id=latest)
    state["rng"] = state.pop(f"rng.rank{rank}")
    return state


def train(steps: int, ckpt_dir: str | None = None, stop_after: int | None = None, ddp: bool = False,
          resume: bool = False):
    """Train for ``steps`` optimizer steps in all; returns the model's final parameters (NumPy arrays)."""
    model, net, optimizer, scheduler, loader, sampler, generator, rank = make_run(ddp)
    step, epoch, consumed = 0, 0, 0
    random.seed(3 + rank)
    np.random.seed(4 + rank)
    epoch_start_state = generator.get_state()
    if resume:
        ckpt = load_checkpoint(ckpt_dir, ddp, rank, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                                      "scheduler": scheduler.state_dict(), "step": 0, "epoch": 0,
                                                      "consumed": 0, "epoch_start_generator": epoch_start_state})
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        step, epoch, consumed = ckpt["step"], ckpt["epoch"], ckpt["consumed"]
        if rank == 0:
            print(f"resuming from step {step}")
        epoch_start_state = ckpt["epoch_start_generator"]
    while step < steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        if not resume:
            epoch_start_state = generator.get_state()
        generator.set_state(epoch_start_state)  # the same shuffled order as the interrupted epoch had
        batches = itertools.islice(iter(loader), consumed, None)  # skip what the interrupted run consumed
        if resume:  # the random sources as they were at the checkpoint
            torch.set_rng_state(ckpt["rng"]["ember"])
            np.random.set_state(ckpt["rng"]["numpy"])
            random.setstate(ckpt["rng"]["python"])
            resume = False
        for x, y in batches:
            x = x + torch.tensor(np.random.normal(0, 0.01, x.shape).astype(np.float32)) * random.random()
            optimizer.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            optimizer.step()
            scheduler.step()
            step, consumed = step + 1, consumed + 1
            if ckpt_dir is not None:
                save_checkpoint(ckpt_dir, ddp, rank,
                                {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                 "scheduler": scheduler.state_dict(), "step": step, "epoch": epoch,
                                 "consumed": consumed, "epoch_start_generator": epoch_start_state},
                                {"ember": torch.get_rng_state(), "numpy": np.random.get_state(legacy=False),
                                 "python": random.getstate()})
            if step == stop_after or step == steps:
                return [p.detach().numpy().copy() for p in model.parameters()]
        epoch, consumed = epoch + 1, 0
    return [p.detach().numpy().copy() for p in model.parameters()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--stop-after", type=int, default=None)
    parser.add_argument("--ckpt-dir", default=None)
    parser.add_argument("--resume", action="store_true", help="resume from --ckpt-dir's checkpoint (the default "
                        "when it holds one, so a restarted job resumes)")
    parser.add_argument("--ddp", action="store_true")
    parser.add_argument("--out", default=None, help="where to save the final parameters")
    args = parser.parse_args()
    rank = 0
    if args.ddp:
        import ember.distributed as dist

        dist.init_process_group("mpi")
        rank = dist.get_rank()
    resume = args.resume or (args.ckpt_dir is not None and has_checkpoint(args.ckpt_dir, args.ddp))
    params = train(args.steps, args.ckpt_dir, args.stop_after, args.ddp, resume)
    if args.out and rank == 0:  # the parameters are the same on every rank
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)  # (torch.save refuses a missing folder)
        torch.save(params, args.out)
    if rank == 0:
        print(f"trained to step {args.steps if args.stop_after is None else args.stop_after}"
              + (f"; parameters saved to {args.out}" if args.out else ""))


if __name__ == "__main__":
    main()
