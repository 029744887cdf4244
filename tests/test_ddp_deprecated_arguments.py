"""DistributedDataParallel's arguments deprecated in PyTorch 2.13: ``broadcast_buffers`` given (True or False) warns
with PyTorch's FutureWarning naming the caller's line (and another one when ``forward_sync_buffers`` is given too);
the defaults and ``forward_sync_buffers`` alone warn nothing. One rank, a subprocess per framework (each with a
deadline), the warnings compared with PyTorch's."""

import os
import subprocess
import sys

from conftest import ROOT

SCRIPT = """
import os, sys, warnings
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[2], RANK="0", WORLD_SIZE="1")
fw = __import__(sys.argv[1])
fw.distributed.init_process_group("gloo")
model = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.BatchNorm1d(4))
CASES = [{}, {"broadcast_buffers": True}, {"broadcast_buffers": False}, {"forward_sync_buffers": False},
         {"broadcast_buffers": True, "forward_sync_buffers": True}]
for kwargs in CASES:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ddp = fw.nn.parallel.DistributedDataParallel(model, **kwargs)
        ddp(fw.ones(2, 3)).sum().backward()
    print(sorted(kwargs.items()), ddp.broadcast_buffers,
          [(w.category.__name__, str(w.message), os.path.basename(w.filename), w.lineno) for w in caught])
fw.distributed.destroy_process_group()
"""


def test_broadcast_buffers_deprecation_as_pytorchs(tmp_path):
    script = tmp_path / "ddp_deprecated.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    outs = [subprocess.run([sys.executable, str(script), fw, port], capture_output=True, text=True, env=env,
                           timeout=120, cwd=tmp_path) for fw, port in (("torch", "29593"), ("ember", "29594"))]
    for out in outs:
        assert out.returncode == 0, out.stderr
    assert outs[1].stdout == outs[0].stdout
    lines = outs[0].stdout.splitlines()
    assert len(lines) == 5
    assert lines[0].endswith("[]") and lines[3].endswith("[]")  # (the defaults, forward_sync_buffers alone)
    assert "`broadcast_buffers` is deprecated" in lines[1] and "FutureWarning" in lines[2]
    assert "Both `broadcast_buffers` and `forward_sync_buffers` were specified" in lines[4]
