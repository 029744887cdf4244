"""What each rank runs under ``ember.distributed.run``: PyTorch's rank variables, the script, failure reports.

    (rank supervisor, _agent.py) -> python -m ember.distributed._bootstrap [-m module | script.py] args...

It sets RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE (and torchrun's other variables)
from the MPI launcher's own variables where unset, runs the script as ``__main__``,
and on an exception or a non-zero exit reports the failure and aborts the MPI job
(``_errors.py``). A script that returns leaves a ``done`` record, so the launcher can
tell it from a rank that vanished (``os._exit``, a signal).
"""

from __future__ import annotations

import os
import runpy
import sys

from . import _env, _errors


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"), as the interpreter would
    return 1


def main(argv: list[str]) -> int:
    _env.export_torch_env()
    rank = int(os.environ.get("RANK", "0"))
    as_module = argv[0] == "-m"
    target, args = (argv[1], argv[2:]) if as_module else (argv[0], argv[1:])
    sys.argv = [target, *args]
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(target))  # as `python script.py` would
            runpy.run_path(target, run_name="__main__")
    except SystemExit as stop:
        code = _exit_code(stop.code)
        if code:
            _errors.report_exit(rank, code)
            return code
    except KeyboardInterrupt:
        _errors.report_interrupt(rank)
    except BaseException as exc:  # noqa: BLE001  (the job must stop either way)
        _errors.report_failure(rank, exc)
        return 1
    _errors.record_done(rank)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
