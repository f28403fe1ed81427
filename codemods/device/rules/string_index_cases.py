"""XLA103's cases of a name a CUDA device string is built from (``"cuda:" + str(args.device)``,
``f"cuda:{args.gpu}"``, ``"cuda:{}".format(gpu)``; device/string_indices.py): moved to as a device
(``.to(args.device)``: ``.to(0)``, cuda:0), it becomes the target's device; left alone where the
file binds the name to a device afterwards (``args.device = device``: a device, no index)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# deep_gcns_torch's ogbn_proteins main.py: `--device` is `type=int, default=0`.
CONCATENATED = """
import torch


def main(args):
    device = torch.device("cuda:" + str(args.device))
    table = torch.zeros(4).to(args.device)
    return table, device
"""

# The same index through an f-string, a tensor made on it by keyword.
FORMATTED = """
import torch


def main(args):
    device = torch.device(f"cuda:{args.gpu}")
    mask = torch.ones(4, device=args.gpu)
    return mask, device
"""

# A device string only shown (a log line), never used as a device: no index.
PRINTED = """
import logging

import torch


def main(args):
    print("cuda:" + str(args.device))
    logging.info("using %s", f"cuda:{args.device}")
    table = torch.zeros(4).to(args.device)
    return table
"""

# The string built in one function, the same name moved to in another (``run2(args)``, whose ``args``
# may be another namespace): an index only where the string is built.
SCOPED = """
import torch


def setup(args):
    device = torch.device(f"cuda:{args.device}")
    table = torch.zeros(4).to(args.device)
    return table, device


def run2(args):
    return torch.zeros(4).to(args.device)
"""

# The builder hands the namespace to a function of the file (``main`` -> ``evaluate(args, ...)``): an
# index there too, under the parameter's name.
HANDED = """
import torch


def evaluate(cfg, x):
    return x.to(cfg.gpu)


def main(args):
    model = torch.nn.Linear(2, 2).to(torch.device(f"cuda:{args.gpu}"))
    return evaluate(args, torch.ones(2)), model
"""

# A train(model, x, device) beside a local that is the CPU (``torch.device("cpu")``): no index.
CPU_LOCAL = """
import torch


def train(model, x, device):
    model.cuda(device)
    return model(x.to(device))


def empty_edges(edges):
    device = torch.device("cpu")
    return torch.zeros(0, 2, device=device)
"""

_DEVICES = {
    "2.9": ("import torch_xla\n", "torch_xla.device()"),
    "sagemaker": ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()"),
}
_WHY = "this file builds a CUDA device from it ("


def string_index_invalid() -> tuple[Invalid, ...]:
    aliased = substituted(CONCATENATED, ("import torch\n", "import torch as th\n"), ("torch.", "th."))
    cases: list[Invalid] = []
    for target, (imports, device) in _DEVICES.items():
        for program, header in ((CONCATENATED, "import torch\n"), (aliased, "import torch as th\n")):
            torch = "th" if program is aliased else "torch"
            cases.append(
                invalid(
                    program,
                    substituted(
                        program,
                        (header, f"{header}{imports}"),
                        (f'{torch}.device("cuda:" + str(args.device))', device),
                        (".to(args.device)", f".to({device})"),
                    ),
                    target=target,
                    alias=program is aliased,
                    note=f"an-index-built-into-a-cuda-string{'-alias' if program is aliased else ''}-{target}",
                    findings=(
                        Expected(
                            7,
                            len(f"    table = {torch}.zeros(4).to(") + 1,
                            f'args.device -> {device}: {_WHY}`"cuda:" + str(args.device)`): an integer device is '
                            "cuda:N, which fails without CUDA",
                        ),
                    ),
                )
            )
        cases.append(
            invalid(
                FORMATTED,
                substituted(
                    FORMATTED,
                    ("import torch\n", f"import torch\n{imports}"),
                    ('torch.device(f"cuda:{args.gpu}")', device),
                    ("device=args.gpu", f"device={device}"),
                ),
                target=target,
                note=f"an-index-built-into-an-f-string-{target}",
                findings=(Expected(7, 33, f'args.gpu -> {device}: {_WHY}`f"cuda:{{args.gpu}}"`)'),),
            )
        )
        cases.append(
            invalid(
                SCOPED,
                substituted(
                    SCOPED,
                    ("import torch\n", f"import torch\n{imports}"),
                    ('torch.device(f"cuda:{args.device}")', device),
                    ("    table = torch.zeros(4).to(args.device)", f"    table = torch.zeros(4).to({device})"),
                ),
                target=target,
                note=f"an-index-only-in-the-function-that-builds-its-string-{target}",
                findings=(
                    Expected(7, 31, f'args.device -> {device}: {_WHY}`f"cuda:{{args.device}}"`): an integer device'),
                ),
            )
        )
        handed_aliased = substituted(HANDED, ("import torch\n", "import torch as th\n"), ("torch.", "th."))
        for program, header in ((HANDED, "import torch\n"), (handed_aliased, "import torch as th\n")):
            torch = "th" if program is handed_aliased else "torch"
            cases.append(
                invalid(
                    program,
                    substituted(
                        program,
                        (header, f"{header}{imports}"),
                        (".to(cfg.gpu)", f".to({device})"),
                        (f'{torch}.device(f"cuda:{{args.gpu}}")', device),
                    ),
                    target=target,
                    alias=program is handed_aliased,
                    note=f"an-index-handed-to-a-function-of-the-file{'-alias' if program is handed_aliased else ''}-{target}",
                    findings=(
                        Expected(
                            6,
                            17,
                            f"cfg.gpu -> {device}: `evaluate(args, {torch}.ones(2))`, line 10 hands `evaluate` its "
                            f'`cfg`, whose `gpu` is a CUDA index there (`f"cuda:{{args.gpu}}"`)',
                        ),
                    ),
                )
            )
            cpu = substituted(CPU_LOCAL, ("import torch\n", header), ("torch.", f"{torch}."))
            cases.append(
                invalid(
                    cpu,
                    substituted(
                        cpu,
                        (header, f"{header}{imports}"),
                        ("model.cuda(device)", f"model.to({device})"),
                        ("x.to(device)", f"x.to({device})"),
                    ),
                    target=target,
                    alias=program is handed_aliased,
                    note=f"a-local-cpu-device-is-no-index{'-alias' if program is handed_aliased else ''}-{target}",
                    findings=(Expected(7, 23, "use the XLA device"),),
                )
            )
        # Also called with another namespace (``other(cfg)``): left, reported.
        unsure = HANDED + "\n\ndef other(opts):\n    return evaluate(opts, torch.ones(2))\n"
        cases.append(
            invalid(
                unsure,
                substituted(
                    unsure,
                    ("import torch\n", f"import torch\n{imports}"),
                    ('torch.device(f"cuda:{args.gpu}")', device),
                ),
                target=target,
                note=f"an-index-handed-by-one-caller-of-two-is-reported-{target}",
                findings=(Expected(6, 17, "hands it something else: left as it is"),),
            )
        )
    return tuple(cases)


def string_index_valid() -> tuple[Valid, ...]:
    cases: list[Valid] = []
    for target, (imports, device) in _DEVICES.items():
        # test.py of the same project: `args.device = device` makes the attribute the device itself.
        rebound = substituted(CONCATENATED, ("    table = ", "    args.device = device\n    table = "))
        cases.append(
            valid(
                rebound,
                substituted(
                    rebound,
                    ("import torch\n", f"import torch\n{imports}"),
                    ('torch.device("cuda:" + str(args.device))', device),
                ),
                target=target,
                note=f"an-index-rebound-to-the-device-stays-{target}",
            )
        )
        cases.append(valid(PRINTED, target=target, note=f"a-device-string-only-printed-makes-no-index-{target}"))
        # run2 alone, beside setup's string: its ``args`` is no namespace known to hold an index.
        split = substituted(
            SCOPED, ("    table = torch.zeros(4).to(args.device)\n", ""), ("return table, device", "return device")
        )
        cases.append(
            valid(
                split,
                substituted(
                    split,
                    ("import torch\n", f"import torch\n{imports}"),
                    ('torch.device(f"cuda:{args.device}")', device),
                ),
                target=target,
                note=f"a-name-moved-to-in-another-function-than-its-string-stays-{target}",
            )
        )
    return tuple(cases)
