"""``torch.distributed._composable.fsdp``: the earlier home of FSDP2; the same objects as
:mod:`ember.distributed.fsdp`'s ``fully_shard`` family."""

from ...fsdp import (
                     CPUOffloadPolicy,
                     FSDPModule,
                     MixedPrecisionPolicy,
                     OffloadPolicy,
                     fully_shard,
                     register_fsdp_forward_method,
)

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard",
           "register_fsdp_forward_method"]
