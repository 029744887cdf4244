"""The ember files one training step runs, phase by phase (tests/test_architecture_doc.py checks
docs/ARCHITECTURE.md's walk-throughs against them).

``python step_files.py OUT.json`` traces one single-process step; under ``python -m ember.distributed.run`` the same
step of a DistributedDataParallel model (rank 0 writes). The step is the document's example: Sequential(Linear,
ReLU, Linear), CrossEntropyLoss, AdamW, clip_grad_norm_. Two steps run first, so first-use work (stores, buckets,
optimizer state) is not counted; then every Python function call inside ember during the third step is recorded
(sys.setprofile: ember's own frames on the calling thread; worker threads run only NumPy kernels at these sizes).
"""

import json
import os
import sys

import ember
from ember import nn

EMBER = os.path.dirname(ember.__file__)


def traced(files: dict, phase: str, fn):
    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(EMBER):
            rel = os.path.relpath(frame.f_code.co_filename, EMBER).replace(os.sep, "/")
            files.setdefault(rel, set()).add(phase)

    sys.setprofile(profile)
    try:
        return fn()
    finally:
        sys.setprofile(None)


def step_files(distributed: bool) -> dict:
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    if distributed:
        ember.distributed.init_process_group("gloo")
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = ember.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    x, y = ember.randn(5, 8), ember.tensor([0, 1, 2, 3, 0])
    files: dict = {}
    for i in range(3):
        record = files if i == 2 else {}
        traced(record, "zero_grad", optimizer.zero_grad)
        loss = traced(record, "forward", lambda: criterion(model(x), y))
        traced(record, "backward", loss.backward)
        traced(record, "clip", lambda: nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        traced(record, "step", optimizer.step)
    return {f: sorted(p) for f, p in files.items()}


if __name__ == "__main__":
    distributed = "WORLD_SIZE" in os.environ
    found = step_files(distributed)
    if not distributed or ember.distributed.get_rank() == 0:
        with open(sys.argv[1], "w") as f:
            json.dump(found, f, indent=1, sort_keys=True)
    if distributed:
        ember.distributed.destroy_process_group()
