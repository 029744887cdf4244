"""torch._dynamo.config / torch._inductor.config / torch._functorch.config: PyTorch's flags with its defaults, settable, patchable, and
unknown names refused, against PyTorch."""

import pytest
import torch
import torch._dynamo.config
import torch._functorch.config
import torch._inductor.config

import ember
import ember._dynamo.config
import ember._functorch.config
import ember._inductor.config

MODULES = [(ember._dynamo.config, torch._dynamo.config), (ember._inductor.config, torch._inductor.config),
           (ember._functorch.config, torch._functorch.config)]


@pytest.mark.parametrize("e_config,t_config", MODULES, ids=["dynamo", "inductor", "functorch"])
def test_every_flag_has_pytorchs_default(e_config, t_config):
    names = [n for n in e_config._flags.names() if n != "triton"]
    assert len(names) >= 19
    for name in names:
        assert getattr(e_config, name) == getattr(t_config, name), name
    if e_config is ember._inductor.config:
        for name in ("cudagraphs", "cudagraph_trees", "unique_kernel_names"):
            assert getattr(e_config.triton, name) == getattr(t_config.triton, name), name


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_flags_set_read_back_and_patch_restores(m):
    dynamo, inductor = m._dynamo.config, m._inductor.config
    try:
        inductor.coordinate_descent_tuning = True
        assert inductor.coordinate_descent_tuning is True
        dynamo.cache_size_limit = 64  # the old name of recompile_limit
        assert dynamo.recompile_limit == 64
        with dynamo.patch(recompile_limit=5, suppress_errors=True):
            assert dynamo.recompile_limit == 5 and dynamo.suppress_errors is True
        assert dynamo.recompile_limit == 64 and dynamo.suppress_errors is False

        @inductor.patch("max_autotune", True)
        def read():
            return inductor.max_autotune

        assert read() is True and inductor.max_autotune is False
        inductor.triton.cudagraphs = True
        assert inductor.triton.cudagraphs is True
    finally:
        inductor.coordinate_descent_tuning = False
        dynamo.recompile_limit = 8
        inductor.triton.cudagraphs = False


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_unknown_flag_refused(m):
    with pytest.raises(AttributeError):
        m._inductor.config.coordinate_descent_tunning = True  # misspelt
    with pytest.raises(AttributeError):
        assert m._dynamo.config.no_such_flag is None
    with pytest.raises(AttributeError), m._dynamo.config.patch(no_such_flag=1):
        pass
    with pytest.raises(AttributeError):
        m._inductor.config.triton.no_such_flag = 1


def test_reachable_from_the_top_level_without_an_import():
    import subprocess
    import sys

    code = "import ember as t; t._inductor.config.max_autotune = True; print(t._dynamo.config.recompile_limit)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "8"


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_functorch_flags_programs_set(m):
    functorch = m._functorch.config
    try:
        functorch.enable_autograd_cache = True  # gpt-fast's
        functorch.activation_memory_budget = 0.5
        functorch.donated_buffer = False
        assert functorch.activation_memory_budget == 0.5 and functorch.donated_buffer is False
        with functorch.patch(activation_memory_budget=0.25):
            assert functorch.activation_memory_budget == 0.25
        assert functorch.activation_memory_budget == 0.5
        with pytest.raises(AttributeError):
            functorch.activation_memory_budgett = 0.5  # misspelt
    finally:
        functorch.activation_memory_budget = 1.0
        functorch.donated_buffer = True


def test_functorch_config_reachable_from_the_top_level_without_an_import():
    import subprocess
    import sys

    code = "import ember as t; t._functorch.config.enable_autograd_cache = True; print(t._functorch.config.cse)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
