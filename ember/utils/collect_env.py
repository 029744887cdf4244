"""``torch.utils.collect_env``: the environment report a bug report asks for (``python -m
ember.utils.collect_env``), and the helpers scripts call from it (``run``, ``get_nvidia_driver_version``).

The report lists what ember runs on: ember's version (in PyTorch's "PyTorch version" line, as tools read it), the
OS, C library, Python, the CPU (``lscpu``), NVIDIA's driver where ``nvidia-smi`` answers, and the versions of the
packages ember computes with (NumPy, ml_dtypes, numba). ember builds nothing with CUDA, ROCm or XPU: those lines
say "N/A" / False. ``SystemEnv`` has PyTorch's fields, in its order.
"""

from __future__ import annotations

import locale
import os
import platform
import re
import subprocess
import sys
from collections import namedtuple
from importlib import metadata

__all__ = ["SystemEnv", "get_env_info", "get_nvidia_driver_version", "get_pretty_env_info", "main", "run",
           "run_and_parse_first_match", "run_and_read_all", "run_and_return_first_line"]

SystemEnv = namedtuple("SystemEnv", [
    "torch_version", "is_debug_build", "cuda_compiled_version", "gcc_version", "clang_version", "cmake_version",
    "os", "libc_version", "python_version", "python_platform", "is_cuda_available", "cuda_runtime_version",
    "cuda_module_loading", "nvidia_driver_version", "nvidia_gpu_models", "cudnn_version", "is_xpu_available",
    "pip_version", "pip_packages", "conda_packages", "hip_compiled_version", "hip_runtime_version",
    "miopen_runtime_version", "caching_allocator_config", "is_xnnpack_available", "cpu_info"])

_PACKAGES = ("ember", "numpy", "ml_dtypes", "numba")  # (ember's own and its dependencies)


def run(command) -> tuple[int, str, str]:
    """(return code, stdout, stderr) of ``command`` (a str runs in the shell, a list without), both stripped."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, shell=isinstance(command, str))
    out, err = process.communicate()
    encoding = "oem" if sys.platform == "win32" else locale.getpreferredencoding()
    return process.returncode, out.decode(encoding).strip(), err.decode(encoding).strip()


def run_and_read_all(run_lambda, command) -> str | None:
    """``command``'s whole output through ``run_lambda``, None if it failed."""
    code, out, _ = run_lambda(command)
    return out if code == 0 else None


def run_and_parse_first_match(run_lambda, command, regex: str) -> str | None:
    """The first group of ``regex``'s first match in ``command``'s output, None if it failed or nothing matched."""
    code, out, _ = run_lambda(command)
    match = re.search(regex, out) if code == 0 else None
    return match.group(1) if match else None


def run_and_return_first_line(run_lambda, command) -> str | None:
    """``command``'s first output line, None if it failed."""
    code, out, _ = run_lambda(command)
    return out.split("\n")[0] if code == 0 else None


def _nvidia_smi() -> str:
    if sys.platform == "win32":  # (where NVIDIA's installer puts it when it is not on the PATH)
        for folder in (os.environ.get("SYSTEMROOT", "C:\\Windows") + "\\System32",
                       os.environ.get("PROGRAMFILES", "C:\\Program Files") + "\\NVIDIA Corporation\\NVSMI"):
            candidate = os.path.join(folder, "nvidia-smi")
            if os.path.exists(candidate + ".exe"):
                return f'"{candidate}"'
    return "nvidia-smi"


def get_nvidia_driver_version(run_lambda) -> str | None:
    """The NVIDIA driver's version that ``nvidia-smi`` (``kextstat`` on macOS) reports, None without one."""
    if sys.platform == "darwin":
        return run_and_parse_first_match(run_lambda, "kextstat | grep -i cuda", r"com[.]nvidia[.]CUDA [(](.*?)[)]")
    return run_and_parse_first_match(run_lambda, _nvidia_smi(), r"Driver Version: (.*?) ")


def _parsed(command: str, regex: str) -> str | None:
    try:
        return run_and_parse_first_match(run, command, regex)
    except OSError:
        return None


def _os_name() -> str:
    if sys.platform.startswith("linux"):
        try:
            with open("/etc/os-release") as release:
                fields = dict(line.rstrip().split("=", 1) for line in release if "=" in line)
            return f"{fields['PRETTY_NAME'].strip(chr(34))} ({platform.machine()})"
        except (OSError, KeyError):
            pass
    return f"{platform.system()} {platform.release()} ({platform.machine()})"


def _package_versions() -> str:
    lines = []
    for name in _PACKAGES:
        try:
            lines.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return "\n".join(lines)


def get_env_info() -> SystemEnv:
    """The environment, in PyTorch's fields."""
    import ember

    libc = "-".join(platform.libc_ver()) if sys.platform.startswith("linux") else "N/A"
    return SystemEnv(
        torch_version=ember.__version__, is_debug_build=False, cuda_compiled_version=None,
        gcc_version=_parsed("gcc --version", r"gcc (.*)"), clang_version=None,
        cmake_version=_parsed("cmake --version", r"cmake (.*)"),
        os=_os_name(), libc_version=libc,
        python_version=f"{sys.version.replace(chr(10), ' ')} ({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=platform.platform(), is_cuda_available=False, cuda_runtime_version=None,
        cuda_module_loading="N/A", nvidia_driver_version=_driver_version(), nvidia_gpu_models=None,
        cudnn_version=None, is_xpu_available=False, pip_version="pip3", pip_packages=_package_versions(),
        conda_packages=None, hip_compiled_version="N/A", hip_runtime_version="N/A", miopen_runtime_version="N/A",
        caching_allocator_config="N/A", is_xnnpack_available=False,
        cpu_info=(run_and_read_all(run, "lscpu") if sys.platform.startswith("linux") else None) or "Could not collect")


def _driver_version() -> str | None:
    try:
        return get_nvidia_driver_version(run)
    except OSError:
        return None


def get_pretty_env_info() -> str:
    """The report, as PyTorch's lays it out ("Could not collect" for what is unknown)."""
    env = get_env_info()

    def shown(value) -> str:
        return "Could not collect" if value is None else str(value)

    return "\n".join([
        f"PyTorch version: {env.torch_version} (ember)", f"Is debug build: {env.is_debug_build}",
        f"CUDA used to build PyTorch: {shown(env.cuda_compiled_version)}",
        f"ROCM used to build PyTorch: {env.hip_compiled_version}", "",
        f"OS: {env.os}", f"GCC version: {shown(env.gcc_version)}", f"Clang version: {shown(env.clang_version)}",
        f"CMake version: {shown(env.cmake_version)}", f"Libc version: {env.libc_version}", "",
        f"Python version: {env.python_version}", f"Python platform: {env.python_platform}",
        f"Is CUDA available: {env.is_cuda_available}",
        f"CUDA runtime version: {shown(env.cuda_runtime_version)}",
        f"CUDA_MODULE_LOADING set to: {env.cuda_module_loading}",
        f"GPU models and configuration: {shown(env.nvidia_gpu_models)}",
        f"Nvidia driver version: {shown(env.nvidia_driver_version)}", f"cuDNN version: {shown(env.cudnn_version)}",
        f"Is XPU available: {env.is_xpu_available}", f"HIP runtime version: {env.hip_runtime_version}",
        f"MIOpen runtime version: {env.miopen_runtime_version}",
        f"Is XNNPACK available: {env.is_xnnpack_available}",
        f"Caching allocator config: {env.caching_allocator_config}", "",
        "CPU:", env.cpu_info, "", "Versions of relevant libraries:",
        "\n".join(f"[{env.pip_version}] {line}" for line in env.pip_packages.split("\n") if line)
        or "No relevant packages",
    ])


def main() -> None:
    """Print the report (``python -m ember.utils.collect_env``)."""
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
