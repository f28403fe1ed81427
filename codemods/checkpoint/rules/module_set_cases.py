"""XLA403's cases of a state dict whose tensors are set into a module as they are (transformers'
``from_pretrained(low_cpu_mem_usage=True)``: ``new_val = state_dict[k]``, ``torch.nn.Parameter(new_val)``,
``setattr(submodule, name, new_val)``): a state dict, not a pickled module; the port moves none of its
tensors to the XLA device (that would leave the model part on XLA, part on the CPU)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

LOW_MEMORY_LOAD = """
import torch

model = torch.nn.Linear(4, 2).cuda()


def load_low_memory(model, archive, keys):
    state_dict = torch.load(archive, map_location="cpu")
    for k in keys:
        submodule, name = find_submodule(model, k)
        new_val = state_dict[k]
        if isinstance(getattr(submodule, name), torch.nn.Parameter):
            new_val = torch.nn.Parameter(new_val)
        setattr(submodule, name, new_val)
"""


def _ported(program: str, target: str) -> str:
    imports, device = (
        ("import torch_xla\n", "torch_xla.device()")
        if target == "2.9"
        else ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()")
    )
    return substituted(program, ("import torch\n", f"import torch\n{imports}"), (".cuda()", f".to({device})"))


def module_set_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(
            LOW_MEMORY_LOAD,
            _ported(LOW_MEMORY_LOAD, target),
            target=target,
            note=f"a-state-dict-set-into-a-module-is-not-moved-{target}",
        )
        for target in ("2.9", "sagemaker")
    )


def module_set_invalid() -> tuple[Invalid, ...]:
    unlocated = substituted(LOW_MEMORY_LOAD, (', map_location="cpu"', ""))
    aliased = substituted(
        unlocated,
        ("import torch\n", "import torch as th\nfrom torch import nn\n"),
        ("torch.nn.Linear", "nn.Linear"),
        ("torch.load", "th.load"),
        ("torch.nn.Parameter(new_val)", "nn.Parameter(data=new_val)"),
        ("torch.nn.Parameter)", "nn.Parameter)"),
    )
    return tuple(
        invalid(
            program,
            substituted(
                _ported(program, target) if program is unlocated else _ported_alias(program, target),
                ("load(archive)", 'load(archive, map_location="cpu")'),
            ),
            target=target,
            alias=program is aliased,
            note=f"an-unlocated-state-dict-set-into-a-module{'-alias' if program is aliased else ''}-{target}",
            findings=(
                Expected(
                    line,
                    column,
                    'load(...) -> map_location="cpu": a checkpoint the CUDA runs of this script saved holds CUDA '
                    "storages, which load nowhere without CUDA; its tensors are set into a module as they are (a "
                    "state dict, not a pickled module), on the CPU, and go to the XLA device when that module is moved",
                ),
            ),
        )
        for target in ("2.9", "sagemaker")
        for program, line, column in ((unlocated, 8, 38), (aliased, 9, 35))
    )


def _ported_alias(program: str, target: str) -> str:
    imports, device = (
        ("import torch_xla\n", "torch_xla.device()")
        if target == "2.9"
        else ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()")
    )
    return substituted(
        program, ("from torch import nn\n", f"from torch import nn\n{imports}"), (".cuda()", f".to({device})")
    )
