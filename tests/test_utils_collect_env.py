"""``torch.utils.collect_env`` against torch: ``run`` and its parsing helpers, the NVIDIA driver's version parsed
from ``nvidia-smi``'s output (a stand-in run), SystemEnv's fields, and the report's lines."""

import sys

import pytest
import torch.utils.collect_env as torch_env

import ember.utils.collect_env as ember_env

SMI = "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |"


@pytest.mark.parametrize("command", ["echo hi", [sys.executable, "-c", "import sys; sys.exit(3)"],
                                     [sys.executable, "-c", "import sys; print('x'); print('e ', file=sys.stderr)"]])
def test_run_as_torch(command):
    assert ember_env.run(command) == torch_env.run(command)


def test_helpers_as_torch():
    def answers(code, out):
        return lambda command: (code, out, "")

    for module in (ember_env, torch_env):
        assert module.run_and_read_all(answers(0, "a\nb"), "c") == "a\nb"
        assert module.run_and_read_all(answers(1, "a"), "c") is None
        assert module.run_and_return_first_line(answers(0, "a\nb"), "c") == "a"
        assert module.run_and_parse_first_match(answers(0, "v 1.2 x"), "c", r"v (\S+)") == "1.2"
        assert module.run_and_parse_first_match(answers(0, "none"), "c", r"v (\S+)") is None
    for code, out in [(0, SMI), (1, SMI), (0, "no driver")]:
        assert ember_env.get_nvidia_driver_version(answers(code, out)) == \
            torch_env.get_nvidia_driver_version(answers(code, out))


def test_env_info_fields_and_report():
    assert ember_env.SystemEnv._fields == torch_env.SystemEnv._fields
    env = ember_env.get_env_info()
    assert env.is_cuda_available is False and "numpy==" in env.pip_packages
    report = ember_env.get_pretty_env_info()
    ours = [line.split(":")[0] for line in report.splitlines() if ":" in line][:20]
    theirs = [line.split(":")[0] for line in torch_env.get_pretty_env_info().splitlines() if ":" in line][:20]
    assert ours == theirs  # (the same lines, in the same order, up to the CPU's)
