"""The torch.distributed names Hugging Face transformers imports, where no ranks are needed: the errors of the
functional collectives before any communication, and the name-only stand-ins (the collectives themselves are
checked against PyTorch on 2 and 3 ranks by tests/ranks/rank_funcol_vs_torch.py)."""

import pytest

import ember
import ember.distributed._functional_collectives as efc
from ember.distributed.checkpoint.hf_storage import HuggingFaceStorageReader, HuggingFaceStorageWriter
from ember.distributed.tensor.placement_types import Shard, _StridedShard


def test_functional_collectives_name_what_ember_does_not_take():
    x = ember.ones(4)
    with pytest.raises(NotImplementedError, match="ProcessGroup, a DeviceMesh"):
        efc.all_gather_single(x, 0, [0, 1])
    with pytest.raises(ValueError, match="unknown reduce op 'bxor'"):
        efc._op("bxor")
    assert efc._op("SUM") is ember.distributed.ReduceOp.SUM
    assert efc.wait_tensor(x) is x


def test_hf_storage_classes_refuse_to_be_built():
    for cls in (HuggingFaceStorageReader, HuggingFaceStorageWriter):
        with pytest.raises(NotImplementedError, match="save_pretrained"):
            cls("checkpoint_dir")


def test_strided_shard_is_its_own_placement():
    s = _StridedShard(0, split_factor=2)
    assert repr(s) == "_StridedShard(dim=0, sf=2)"          # PyTorch's repr
    assert s == _StridedShard(0, split_factor=2) and s != _StridedShard(0, split_factor=3)
    assert not isinstance(s, Shard) and s != Shard(0)       # as in PyTorch: transformers tells them apart
