"""XLA120 uncalled-device: a CUDA device literal in a function or method that no code of the
project calls (the device facts' ``uncalled``, found by device/uncalled.py): XLA101's rewrite,
reported as info, since that code never runs."""

from __future__ import annotations

from codemods.engine.rule import Rule, invalid, run

_VALIDATOR = """
import argparse

import torch


def runner_validator():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=str, choices=["cpu", "cuda"])
    return parser


class Config:
    def __init__(self, options):
        self.options = options
        # self._validate(options)

    def _validate(self, options):
        return runner_validator().parse_args(options)


model = torch.nn.Linear(4, 2)
"""

UNCALLED_DEVICE = Rule(
    code="XLA120",
    name="uncalled-device",
    severity="info",
    summary="A CUDA device in a function that no code of the project calls becomes the XLA device too: it never runs",
    fixable=True,
    why="XLA101's error says that a CUDA device fails on an XLA host where it runs. A function or method that no "
    "code of the project calls never runs: a config validator whose only call is commented out "
    '(`# self._validate_runner_config(cfg)`), with `choices=["cpu", "cuda"]` in a helper only it calls. Its device '
    "literal is rewritten as XLA101 rewrites it (so the code is ready if it is called again), and reported as "
    "info, not as an error: it cannot crash or leave the XLA device. A function is taken as uncalled only when a "
    "run knows the project's files (a run on the project folder, or on a file of it), its name appears in no other "
    "file of the project (its code, notebooks, YAML and JSON configs, shell scripts, packaging: a call, an import, "
    "a registry's string, a `_target_`, an entry point all name it; full-line comments are left out), and the "
    "file names it only inside functions taken as uncalled themselves. A public function (no leading underscore) "
    "that nothing names at all may be the project's API, which its users call (a library's `local_device()`): it "
    "stays XLA101's error; one that only uncalled code of its module names is that code's helper. It is never "
    "taken as uncalled if it is decorated "
    "(a registry's `@register(...)`: but `@staticmethod`, `@classmethod`), a dunder method, a method of a class "
    "with a base (a framework may call an override by its name: `forward`, `training_step`), or nested in "
    "another function (it belongs to that one). Whatever the tool cannot tell stays XLA101's error.",
    examples=lambda: (
        invalid(
            _VALIDATOR,
            _VALIDATOR.replace('"cuda"]', '"xla"]').replace(
                "import torch\n", 'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            ),
        ),
    ),
    invalid=lambda: (
        run(("train.py", _VALIDATOR)),
        run(
            ("train.py", _VALIDATOR.replace("import torch\n", "import torch as th\n").replace("torch.nn", "th.nn")),
            alias=True,
        ),
    ),
    valid=lambda: (
        run(("train.py", _VALIDATOR.replace("# self._validate", "self._validate"))),
        run(("train.py", _VALIDATOR), ("check.py", "from train import Config\n\nConfig([])._validate([])\n")),
    ),
)
