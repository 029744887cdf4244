"""``ember.utils.model_zoo``: PyTorch's old name for ``hub.load_state_dict_from_url`` (and ``hub.tqdm``)."""

from .._missing import module_getattr
from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]


_missing_name = module_getattr(__name__)  # a missing name says which torch feature ember lacks


def __getattr__(name: str):
    if name == "tqdm":  # (torch.utils.model_zoo imports it from torch.hub; loaded on first use here)
        from .. import hub

        return hub.tqdm
    return _missing_name(name)
