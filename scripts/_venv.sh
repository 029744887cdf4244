# Sourced by the scripts: create (once) and activate a virtual environment holding ember and an extra.
# Usage: ensure_venv DIR EXTRAS   (EXTRAS: pyproject extras, comma-separated, e.g. "test" or "distributed,plot"; or "")
#
# ember is installed editable (this checkout's code is what runs). When an extra needs PyTorch, its CPU build
# is installed first from PyTorch's CPU wheel index if that answers within a few seconds, so that no CUDA
# libraries are downloaded; otherwise from the default index (pip's configuration decides which).
# Nothing is reinstalled until pyproject.toml changes.

TORCH_CPU_INDEX="${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"

_say() { printf '%s\n' "[$(basename "$0")] $*"; }

# The python that creates the environment: $PYTHON, else python3; it must be 3.10 or newer.
_base_python() {
    local py="${PYTHON:-python3}"
    if ! command -v "$py" >/dev/null 2>&1 || ! "$py" -c 'import sys' >/dev/null 2>&1; then
        _say "error: '$py' not found; install Python 3.10 or newer, or set PYTHON=/path/to/python3" >&2
        return 1
    fi
    if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
        _say "error: ember needs Python 3.10 or newer; '$py' is $("$py" -V 2>&1). Set PYTHON=/path/to/python3.1x" >&2
        return 1
    fi
    printf '%s\n' "$py"
}

# Exit status 0 when PyTorch's CPU wheel index answers within 5 seconds (never hangs).
_torch_cpu_index_reachable() {
    "$1" - "$TORCH_CPU_INDEX" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/torch/", timeout=5).close()
PY
}

ensure_venv() {
    local dir="$1" extras="$2" root py torch_pin start
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    local stamp="$dir/.ember-installed-${extras:-none}"
    if [ ! -x "$dir/bin/python" ]; then
        py="$(_base_python)" || return 1
        _say "creating a virtual environment in $dir with $("$py" -V 2>&1) (first run only)"
        if ! "$py" -m venv "$dir"; then
            _say "error: '$py -m venv' failed; on Debian/Ubuntu install the python3-venv package" >&2
            return 1
        fi
    fi
    if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
        start=$SECONDS
        torch_pin=""
        case ",$extras," in
            *,test,*) torch_pin="$(grep -o 'torch==[0-9][0-9.]*' "$root/pyproject.toml" | head -n 1)" ;;
        esac
        if [ -f "$stamp" ] || ls "$dir"/.ember-installed-* >/dev/null 2>&1; then
            _say "pyproject.toml changed since $dir was set up: updating it"
        fi
        if [ -n "$torch_pin" ]; then
            _say "installing ember[$extras] into $dir, with PyTorch ($torch_pin, CPU build) as the test oracle;" \
                 "first run only, about 2 GB: 5 to 15 minutes depending on the network and the machine"
        else
            _say "installing ember${extras:+[$extras]} into $dir; first run only, about a minute"
        fi
        "$dir/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 \
            || _say "(could not upgrade pip; going on with $("$dir/bin/python" -m pip --version | cut -d' ' -f1-2))"
        if [ -n "$torch_pin" ] && ! "$dir/bin/python" -c "import torch" >/dev/null 2>&1; then
            if _torch_cpu_index_reachable "$dir/bin/python"; then
                _say "PyTorch's CPU wheel index answers: installing $torch_pin from $TORCH_CPU_INDEX (no CUDA libraries)"
                "$dir/bin/python" -m pip install -q "$torch_pin" --extra-index-url "$TORCH_CPU_INDEX"
            else
                _say "PyTorch's CPU wheel index is not reachable: installing $torch_pin from the default index"
                "$dir/bin/python" -m pip install -q "$torch_pin"
            fi
        fi
        # setuptools tells every editable install, in a boxed warning that pip relays even with -q, to beware of
        # folders named like the package in the working directory: advice for other layouts, noise on a first run.
        PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}ignore:Editable installation" \
            "$dir/bin/python" -m pip install -q -e "$root${extras:+[$extras]}"
        rm -f "$dir"/.ember-installed-*
        touch "$stamp"
        _say "$dir is ready ($((SECONDS - start)) s)"
    fi
    # shellcheck disable=SC1091
    . "$dir/bin/activate"
}
