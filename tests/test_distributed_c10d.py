"""``ember.distributed.distributed_c10d``, the module PyTorch defines the process-group API in, checked against
PyTorch's: an attribute of the package once it is imported, the same objects as the package's names,
``GroupMember.WORLD`` (None before ``init_process_group``, the default group after) and ``_get_default_group``."""

import os
import subprocess
import sys

import pytest
import torch.distributed

import ember.distributed
from ember.distributed import comm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_an_attribute_of_the_package_with_the_package_objects():
    for fw in (torch.distributed, ember.distributed):
        c10d = fw.distributed_c10d
        for name in ("GroupMember", "group", "ProcessGroup", "Backend", "ReduceOp", "all_reduce", "get_rank",
                     "init_process_group", "new_group", "is_initialized", "broadcast_object_list"):
            assert getattr(c10d, name) is getattr(fw, name), (fw.__name__, name)


def test_before_init_process_group():
    for fw in (torch.distributed, ember.distributed):
        assert not fw.is_initialized()
        assert fw.distributed_c10d.GroupMember.WORLD is None
    with pytest.raises(ValueError) as theirs:
        torch.distributed.distributed_c10d._get_default_group()
    with pytest.raises(ValueError) as ours:
        ember.distributed.distributed_c10d._get_default_group()
    assert str(ours.value) == str(theirs.value)


@pytest.mark.skipif(not comm.is_available(), reason="mpi4py not installed")
def test_after_init_process_group_the_default_group():
    code = ("import ember.distributed as d\n"
            "d.init_process_group('gloo')\n"
            "c = d.distributed_c10d\n"
            "print(c.GroupMember.WORLD is d.group.WORLD, c._get_default_group() is d.group.WORLD,\n"
            "      c._get_default_group().size())\n"
            "d.destroy_process_group()\n"
            "print(c.GroupMember.WORLD)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "PYTHONPATH": ROOT},
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "True", "1", "None"]
