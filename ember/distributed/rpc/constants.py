"""``torch.distributed.rpc.constants``: the defaults of RPC's options and calls."""

from datetime import timedelta

DEFAULT_RPC_TIMEOUT_SEC = 60.0  # PyTorch's default for every call
UNSET_RPC_TIMEOUT = -1.0  # a call's timeout argument when not given: use the agent's default
DEFAULT_SHUTDOWN_TIMEOUT = 0  # shutdown() waits for the other workers without a limit, as PyTorch's
DEFAULT_NUM_WORKER_THREADS = 16
DEFAULT_INIT_METHOD = "env://"
DEFAULT_PROCESS_GROUP_TIMEOUT = timedelta(milliseconds=2 ** 31 - 1)  # PyTorch's value; ember has no such group
