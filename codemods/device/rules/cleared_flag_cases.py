"""XLA104's cases of a flag that a CUDA check clears (``if cfg["use_cuda"] and not
torch.cuda.is_available(): cfg["use_cuda"] = False``, pymarl's ``args_sanity_check``), read where
the file picks the device (device/cuda_defaults.py)."""

from __future__ import annotations

from textwrap import dedent

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_CLEARED = dedent(
    """
    from types import SimpleNamespace

    import torch


    def sanity(cfg, log):
        if cfg["use_cuda"] and not torch.cuda.is_available():
            cfg["use_cuda"] = False
            log.warning("CUDA flag use_cuda was switched OFF")
        return cfg


    def run(cfg, log, data):
        args = SimpleNamespace(**sanity(cfg, log))
        args.device = "cuda" if args.use_cuda else "cpu"
        model = torch.nn.Linear(4, 1)
        if args.use_cuda:
            model.cuda()
        for x in data:
            print(model(x.to(args.device)))
    """
)

_PORTED = dedent(
    """
    from types import SimpleNamespace

    import torch
    import torch_xla


    def sanity(cfg, log):
        return cfg


    def run(cfg, log, data):
        args = SimpleNamespace(**sanity(cfg, log))
        args.device = "xla" if args.use_cuda else "cpu"
        model = torch.nn.Linear(4, 1)
        if args.use_cuda:
            model.to(torch_xla.device())
        for x in data:
            print(model(x.to(args.device)))
    """
)


def cleared_flag_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _CLEARED,
            _PORTED,
            note="a-check-that-clears-a-flag-picking-the-device-goes",
            findings=(
                Expected(
                    8,
                    8,
                    '`cfg["use_cuda"] and not torch.cuda.is_available()`: the accelerator check holds for the XLA '
                    "device (`use_cuda` keeps its value and picks the XLA device where it picked CUDA), so the code "
                    "under it never runs: removed",
                ),
            ),
        ),
        invalid(
            substituted(
                _CLEARED,
                ("import torch\n", "import torch as th\n"),
                ('cfg["use_cuda"] and not torch.cuda.is_available()', "not th.cuda.is_available()"),
                ('cfg["use_cuda"] = False', "cfg.cuda = False"),
                ("args.use_cuda", "args.cuda"),
                ("torch.nn", "th.nn"),
            ),
            substituted(
                _PORTED,
                ("import torch\n", "import torch as th\n"),
                ("args.use_cuda", "args.cuda"),
                ("torch.nn", "th.nn"),
            ),
            note="a-check-that-clears-an-attribute-flag-goes",
            alias=True,
            findings=(Expected(8, 8, "(`cuda` keeps its value and picks the XLA device where it picked CUDA)"),),
        ),
        invalid(
            substituted(
                _CLEARED,
                ("        model.cuda()\n", "        model.cuda()\n        print(torch.cuda.get_device_name(0))\n"),
            ),
            substituted(
                _PORTED.replace(
                    "    return cfg\n",
                    '    if cfg["use_cuda"] and not torch.cuda.is_available():\n'
                    '        cfg["use_cuda"] = False\n'
                    '        log.warning("CUDA flag use_cuda was switched OFF")\n'
                    "    return cfg\n",
                ),
                ('"xla" if', '"xla" if'),
                (
                    "        model.to(torch_xla.device())\n",
                    "        model.to(torch_xla.device())\n        print(torch.cuda.get_device_name(0))\n",
                ),
            ),
            note="a-check-that-clears-a-flag-that-also-guards-cuda-only-code-stays",
            findings=(
                Expected(
                    8,
                    8,
                    '`cfg["use_cuda"] and not torch.cuda.is_available()` switches `use_cuda` off without CUDA, and '
                    "`use_cuda` picks the device, but a condition on it also guards `torch.cuda.get_device_name`, which fails "
                    "without CUDA: left as is, so on XLA (no CUDA) `use_cuda` is False and the path without CUDA runs",
                ),
            ),
        ),
    )


def item_flag_cases() -> tuple[Invalid, ...]:
    """A flag held as a config item, its check in the assignment."""
    return (
        invalid(
            """
            import torch


            def main(cfg, data):
                cfg["cuda"] = cfg["cuda"] and torch.cuda.is_available()
                device = "cuda" if cfg["cuda"] else "cpu"
                model = torch.nn.Linear(4, 1)
                if cfg["cuda"]:
                    model.cuda()
                for x in data:
                    print(model(x.to(device)))
            """,
            """
            import torch
            import torch_xla


            def main(cfg, data):
                cfg["cuda"] = cfg["cuda"]
                device = "xla" if cfg["cuda"] else "cpu"
                model = torch.nn.Linear(4, 1)
                if cfg["cuda"]:
                    model.to(torch_xla.device())
                for x in data:
                    print(model(x.to(device)))
            """,
            note="a-config-item-flag-picking-the-device-loses-its-check",
            findings=(
                Expected(
                    6,
                    19,
                    '`cfg["cuda"]` picks the device: its accelerator check is dropped (False on XLA, where the XLA '
                    "device is always present)",
                ),
            ),
        ),
    )


def cleared_flag_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch


            def sanity(cfg):
                if cfg["use_cuda"] and not torch.cuda.is_available():
                    cfg["use_cuda"] = False
                return cfg


            def report(cfg):
                if cfg["use_cuda"]:
                    print("GPU run")
            """,
            note="a-cleared-flag-that-picks-no-device-is-xla105s",
        ),
    )
