"""``torch.distributed.checkpoint.hf_storage``: the names of PyTorch's safetensors storage for dcp.

Hugging Face transformers imports ``HuggingFaceStorageReader`` and ``HuggingFaceStorageWriter`` whenever
torch.distributed is available, and uses them only to save or load a sharded model in the safetensors layout.
ember's dcp writes its own format (``filesystem.py``), so both classes exist for that import and raise
NotImplementedError when constructed; save the gathered model with ``save_pretrained`` instead.
"""

from __future__ import annotations


class _Unsupported:
    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"torch.distributed.checkpoint.hf_storage.{type(self).__name__}: checkpoints in "
                                  "Hugging Face's safetensors layout are not supported by ember's distributed "
                                  "checkpoint; save the full model (model.save_pretrained) instead")


class HuggingFaceStorageReader(_Unsupported):
    """Reads a dcp checkpoint stored as safetensors files (not supported: raises NotImplementedError)."""


class HuggingFaceStorageWriter(_Unsupported):
    """Writes a dcp checkpoint as safetensors files (not supported: raises NotImplementedError)."""
