# Sourced by the scripts: create (once) and activate a virtual environment.
# Usage: ensure_venv DIR EXTRA   (EXTRA: the pyproject extra to install, or "")
ensure_venv() {
    local dir="$1" extra="$2" root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    local stamp="$dir/.ember-installed-$extra"
    if [ ! -x "$dir/bin/python" ]; then
        python3 -m venv "$dir"
    fi
    # Reinstall only when pyproject.toml changed since the last install.
    if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
        "$dir/bin/python" -m pip install -q --upgrade pip >/dev/null
        if [ -n "$extra" ]; then
            "$dir/bin/python" -m pip install -q -e "$root[$extra]"
        else
            "$dir/bin/python" -m pip install -q -e "$root"
        fi
        touch "$stamp"
    fi
    # shellcheck disable=SC1091
    . "$dir/bin/activate"
}
