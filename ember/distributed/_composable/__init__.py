"""``torch.distributed._composable``: the earlier home of the composable APIs (``fully_shard``)."""
