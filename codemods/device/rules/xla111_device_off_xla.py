"""XLA111 device-off-xla."""

from __future__ import annotations

from codemods.device.rules.broken_proofs import broken_proof, reports_broken_proofs, stepped_model
from codemods.device.rules.device_count_cases import device_count_invalid
from codemods.device.rules.flag_helper_cases import flag_helper_invalid, flag_helper_valid
from codemods.device.rules.index_or_cpu_cases import index_or_cpu_invalid, index_or_cpu_valid
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

# A trainer class of the file handed a CPU flag default, built and run in one expression (2.9 spelling).
HANDED_CPU_FLAG = """
    import argparse
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm


    class Trainer:
        def __init__(self, device=torch_xla.device()):
            self.device = device

        def fit(self, data):
            model = torch.nn.Linear(4, 1).to(self.device)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in data:
                loss = model(x.to(self.device)).sum()
                loss.backward()
                xm.optimizer_step(opt)
                torch_xla.sync()

        def describe(self):
            return str(self.device)


    p = argparse.ArgumentParser()
    p.add_argument("-d", "--device", default="cpu", help="cpu or cuda")
    args = p.parse_args()
    Trainer(device=args.device).fit([torch.randn(2, 4)])
"""

# A device flag of a library's retrieval model that only infers (``model_kwargs={"device": ...}``),
# "cpu" by default; and a model the same file trains on that flag.
INFERENCE_FLAG = """
    import argparse

    import torch
    from langchain.embeddings import HuggingFaceBgeEmbeddings

    parser = argparse.ArgumentParser()
    parser.add_argument("--encode-device", default="cpu", choices=["cpu", "cuda:0"])
    args = parser.parse_args()
    embeddings = HuggingFaceBgeEmbeddings(model_kwargs={"device": args.encode_device})
"""
_TRAINED_THERE = """\
    model = torch.nn.Linear(4, 2).to(args.encode_device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
_XLA_IMPORT = 'import torch\n    import torch_xla  # noqa: F401  (registers the "xla" device)\n'


DEVICE_OFF_XLA = Rule(
    code="XLA111",
    name="device-off-xla",
    severity="error",
    summary="The model the optimizer steps goes to a device that can still be the CPU, CUDA or MPS after the port",
    fixable=False,
    why="Obligation (1) of every training step: the module whose parameters the optimizer steps is on the XLA "
    "device on the path that runs. The tool follows the device the model moves to through assignments, "
    "if/elif/else chains and conditional expressions (read as they are after the port on an XLA host, where "
    "`torch.cuda.is_available()` and the MPS checks are False), the file's functions and methods, `self.` "
    "attributes, argparse defaults, config dicts and known library helpers. Where the chain ends on a value "
    'that is not the XLA device, the finding points at that value (a `return "cpu"`, a kept `"cuda"`, '
    "`torch.get_default_device()`) and says what it is: left so, the script trains on the CPU, or fails to "
    "find CUDA, and nothing else says so. A choice left to the person who runs the script (a `--no-cuda` flag, a "
    "config value) is not reported where one of its branches is the XLA device; the default of a device flag "
    '(`--device`, default "cpu": karpathy/makemore) is reported at that default: it is where the model trains '
    "unless the run names another device, and the tool leaves the CPU default as the author chose it rather "
    "than port an explicit CPU choice (a flag of another name defaulting to \"cpu\", or `map_location='cpu'`, "
    "is not a device choice); nor is it where the file trains nothing (no optimizer, no training loop) and reads "
    "the flag only in the arguments of a library's calls (a retrieval model's `model_kwargs={\"device\": "
    'args.encode_model_device}`, "cpu" by default): that model only infers, on the device the author chose. '
    "To resolve it, make that value the "
    'XLA device (`torch_xla.device()`, or the string "xla"), or make the condition choose it on an XLA host. '
    "The same holds for a script's own switch handed to the project: `config.use_GPU = False` (every value the "
    "script gives it), then `Trainer(config, ...)`, where a module the script imports picks the device with "
    '`use_GPU` (`"cuda:0" if config.use_GPU else "cpu"`, ported to `"xla" if ...`): the run stays on the CPU, '
    "and the error is at the flag, in a project run (a script that names no torch is read for it). The port does "
    'not set the flag to True: a script that writes False may mean a CPU run, as a "cpu" default may; the '
    "finding makes the choice visible, and setting the flag to True resolves it. A device flag whose default is "
    '"cpu" while its choices name CUDA (`add_argument("--device", default="cpu", choices=["cpu", "cuda"])`, in an '
    "options module whose `args` other modules read: `self.device = args.device` in a trainer that only receives "
    'them) is reported at the default too: "cuda" becomes "xla" among the choices (XLA101), the CPU default stays. '
    'A CUDA index or the CPU chosen by comparing the index with a number (`args.device if args.device >= 0 else "cpu"`, '
    "an int flag defaulting to -1, in an options module the script imports: GraphMAE) is off the XLA device whichever "
    "way it goes, the CPU by default, cuda:N with `--device N`: reported at the choice, naming the flag's default. "
    "A model handed to a callable of the project that moves it to the device the caller hands in and builds its "
    "optimizer over it (`Trainer(model, device=device)`, whose `__init__` does `self.device = torch.device(device); "
    "self.model.to(self.device)`) is proven with the value the caller hands in, followed through the file's calls "
    '(`main(args.device)`): where it ends off the XLA device (a `--device` flag defaulting to "cpu": '
    "torch-rechub), the error is at that value in the caller; so is a device handed to a class whose methods "
    "train and move to it, whatever builds its optimizer (`optimizer_fn(self.model.parameters())`), and a "
    'literal "cpu" handed to such a trainer (as `model.to("cpu")` before a loop is XLA005). A CPU device '
    "handed for anything else (a "
    "`map_location`, data preparation, an evaluation helper that does not train), or to a trainer this file "
    "builds but never trains (built to export a model: no method that trains is called on it here), is not "
    "reported. The trainer may be a class of this file or of another module, trained through a name or in one "
    "expression (`Trainer(device=args.device).fit(data)`); a CUDA value the port leaves there is one it could not "
    'tell is a device where it is written (`add_argument("--gpu", default="cuda:0")`: the flag names no device). '
    "A flag that a class of the project sets to `torch.cuda.is_available()` and to nothing else (a config "
    'module\'s `self.train_on_gpu`), read where the device is picked (`"cuda" if cfg.train_on_gpu else "cpu"`), '
    "is False on an XLA host: the port makes the CUDA branch the XLA device, but the CPU branch runs; set the flag "
    "from the XLA device (or drop it) and the model trains there. A module-level device of a project module "
    "bound to None and set only by a function that no code of the project calls (rlkit: `device = None` in "
    "`pytorch_util.py`, set by `set_gpu_mode()`, whose only call the script has commented out) is the CPU: "
    "`model.to(ptu.device)` is `.to(None)`, which moves nothing; reported at the move of the stepped model, or "
    "at `algorithm.to(ptu.device)` where an instance the script trains moves its networks in its own `to`. "
    "Calling the setter (`ptu.set_gpu_mode(True)`, which the port makes choose the XLA device) resolves it. "
    'A device flag whose "cuda" the port makes "xla" (its default or a choice) handed to a function of the '
    'project that makes a device of it (mace\'s `init_device(args.device)`: `if "cuda" in s: return '
    'torch.device(s)`, `if s == "mps": ...`, else `return torch.device("cpu")`) is read with "xla": the '
    "port changed the value its conditions see, and where none names it and it returns the CPU, the run that "
    "names the XLA device trains on the CPU. The error is at that return, naming the call (a function of the "
    "file), or at the call, naming the function and its module (another module of the project); the finding "
    'at the flag\'s "cpu" default then says to fix the function first. Returning the XLA device for "xla" '
    "there resolves it; a function that passes the string on (`torch.device(s)`) is the XLA device.",
    examples=lambda: (
        invalid(
            """
            import torch

            def pick_device():
                if torch.backends.mps.is_available():
                    return "mps"
                return "cpu"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(
                Expected(6, 12, 'goes to `pick_device()`, which ends on `pick_device()` returns "cpu" (the CPU)'),
            ),
        ),
    ),
    valid=lambda: (
        *index_or_cpu_valid(),
        *flag_helper_valid(),
        *(
            valid(
                INFERENCE_FLAG,
                substituted(INFERENCE_FLAG, ("import torch\n", _XLA_IMPORT), ('"cuda:0"]', '"xla"]')),
                target=target,
                note=f"a-cpu-default-for-a-library-model-that-only-infers-{target}",
            )
            for target in ("2.9", "sagemaker")
        ),
        valid(
            """
            import argparse

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", type=str, default="cpu", choices=["cpu", "mps"])
            parser.add_argument("--device-ids", default="cpu", choices=["cpu", "cuda"])
            args = parser.parse_args()
            """,
            filename="options.py",
            note="a-cpu-default-whose-flag-lists-no-cuda-device",
        ),
        valid(
            substituted(
                HANDED_CPU_FLAG,
                (
                    "Trainer(device=args.device).fit([torch.randn(2, 4)])",
                    "print(Trainer(device=args.device).describe())",
                ),
            ),
            note="a-cpu-flag-handed-to-a-trainer-of-this-file-that-does-not-train-there",
        ),
        valid(
            """
            from types import SimpleNamespace

            import torch
            from trainer import Trainer

            config = SimpleNamespace()
            config.use_GPU = False
            Trainer(config).run()
            """,
            note="a-gpu-switch-handed-to-a-module-this-run-cannot-read-is-not-said-to-keep-the-cpu",
        ),
        valid(
            """
            from types import SimpleNamespace

            import torch as th
            from trainer import Trainer

            config = SimpleNamespace()
            config.use_cuda = False
            Trainer(config).run()
            """,
            target="sagemaker",
            note="a-gpu-switch-handed-to-a-module-this-run-cannot-read-sagemaker",
        ),
        valid(
            """
            import torch

            def pick_device():
                return "cuda" if torch.cuda.is_available() else "cpu"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def pick_device():
                return "xla"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-device-function-the-port-makes-xla",
        ),
        valid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            model = torch.nn.Linear(4, 2).to(accelerator.device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="accelerate-device-is-xla",
        ),
        valid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-cuda-mps-cpu-chain-folds",
        ),
        valid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla"
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="a-cuda-mps-cpu-chain-folds-sagemaker",
        ),
        valid(
            """
            import torch

            config = {"device": "cuda", "lr": 0.1}
            model = torch.nn.Linear(4, 2).to(config["device"])
            optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            config = {"device": "xla", "lr": 0.1}
            model = torch.nn.Linear(4, 2).to(config["device"])
            optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
            """,
            note="a-config-dict-the-port-makes-xla",
        ),
        valid(
            """
            import torch

            device = "cpu"
            device, rank = setup()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="rebound-to-what-the-tool-does-not-follow",
        ),
        valid(
            """
            import argparse
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--offload", type=str, default="cpu")
            args = parser.parse_args()
            model = torch.nn.Linear(4, 2).to(args.offload)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-cpu-default-of-a-flag-not-named-for-the-device",
        ),
    ),
    invalid=lambda: (
        *(
            invalid(
                INFERENCE_FLAG + _TRAINED_THERE,
                substituted(INFERENCE_FLAG + _TRAINED_THERE, ("import torch\n", _XLA_IMPORT), ('"cuda:0"]', '"xla"]')),
                target=target,
                note=f"a-cpu-default-where-the-file-also-trains-{target}",
                findings=(Expected(8, 48, "`model`, whose parameters `torch.optim.SGD` steps, goes to"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist

            NCCL = "nccl"


            def main(cfg, rank):
                backend = "gloo" if cfg.use_cpu else "nccl"
                dist.init_process_group(backend)
                if backend == NCCL:
                    device = torch.device("cuda", rank)
                else:
                    device = torch.device("cpu")
                model = torch.nn.Linear(2, 2).to(device)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            NCCL = "nccl"


            def main(cfg, rank):
                backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
                if backend == NCCL:
                    device = torch_xla.device()
                else:
                    device = torch.device("cpu")
                model = torch.nn.Linear(2, 2).to(device)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-condition-the-port-changed-drops-the-accelerator-branch",
            findings=(
                Expected(
                    14,
                    31,
                    '`model`, whose parameters `torch.optim.SGD` steps, goes to `device`, which ends on "cpu" (the CPU) '
                    '(the port made `backend == NCCL` False: it rewrote `backend` to "xla", so the branch written for '
                    "the accelerator no longer runs; the port changed this condition, not the author)",
                ),
            ),
        ),
        *index_or_cpu_invalid(),
        *flag_helper_invalid(),
        *device_count_invalid(),
        invalid(
            """
            import argparse

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", default="cpu", choices=["cpu", "xla"])
            """,
            filename="options.py",
            note="a-cpu-default-beside-an-xla-choice-once-ported-stays-reported",
            findings=(
                Expected(7, 41, 'the device flag `device` defaults to "cpu" while its choices name an accelerator'),
            ),
        ),
        invalid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", type=str, default="cpu", choices=["cpu", "cuda"])
            args = parser.parse_args()
            """,
            """
            import argparse

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", type=str, default="cpu", choices=["cpu", "xla"])
            args = parser.parse_args()
            """,
            filename="options.py",
            note="a-cpu-default-beside-a-cuda-choice",
            findings=(
                Expected(
                    7,
                    51,
                    'the device flag `device` defaults to "cpu" while its choices name an accelerator: on an XLA host the model '
                    'that goes to it trains on the CPU unless the run names the XLA device ("xla" among the choices once '
                    "ported) or code of the project sets it; the port leaves the author's CPU default as it "
                    'is: make it "xla" to train on the XLA device',
                ),
            ),
        ),
        invalid(
            """
            import argparse
            import torch as th

            parser = argparse.ArgumentParser()
            parser.add_argument("--train-device", default='cpu', choices=('cpu', 'cuda:0'))
            """,
            """
            import argparse
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            parser = argparse.ArgumentParser()
            parser.add_argument("--train-device", default='cpu', choices=('cpu', 'xla'))
            """,
            target="sagemaker",
            filename="options.py",
            note="a-cpu-default-beside-a-cuda-choice-sagemaker",
            alias=True,
            findings=(
                Expected(
                    6, 47, 'the device flag `train_device` defaults to "cpu" while its choices name an accelerator'
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            class Runner:
                def __init__(self):
                    self.device = th.get_default_device()
                    self.net = th.nn.Linear(4, 2).to(self.device)
                    self.opt = th.optim.Adam(self.net.parameters())
            """,
            alias=True,
            findings=(
                Expected(5, 23, "`th.get_default_device()` (the CPU unless the script set another default device"),
            ),
        ),
        invalid(
            """
            import torch

            def pick_device():
                if torch.backends.mps.is_available():
                    return "mps"
                return "cpu"

            model = torch.nn.Linear(4, 2).to(pick_device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(6, 12, '`pick_device()` returns "cpu" (the CPU)'),),
        ),
        invalid(
            """
            import argparse
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", type=str, default="cpu", help="cpu|cuda|mps")
            args = parser.parse_args()
            model = torch.nn.Linear(4, 2)
            model.to(args.device)
            optimizer = torch.optim.AdamW(model.parameters())
            """,
            note="the-cpu-default-of-a-device-flag",
            findings=(Expected(5, 51, 'goes to `args.device`, which ends on "cpu" (the CPU)'),),
        ),
        invalid(
            """
            import argparse
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--device", type=str, default="cpu", help="cpu|cuda|mps")
            args = parser.parse_args()
            model = torch.nn.Linear(4, 2)
            model.to(args.device)
            optimizer = torch.optim.AdamW(model.parameters())
            """,
            target="sagemaker",
            note="the-cpu-default-of-a-device-flag-sagemaker",
            findings=(Expected(5, 51, 'goes to `args.device`, which ends on "cpu" (the CPU)'),),
        ),
        invalid(
            HANDED_CPU_FLAG,
            note="a-cpu-flag-handed-to-a-trainer-of-this-file-run-in-one-expression",
            findings=(Expected(25, 42, "`Trainer` (this file) trains, and moves to the device it is handed"),),
        ),
        invalid(
            substituted(
                HANDED_CPU_FLAG,
                ("    import torch_xla\n", ""),
                ("torch_xla.device()", "xm.xla_device()"),
                ("torch_xla.sync()", "xm.mark_step()"),
            ),
            note="a-cpu-flag-handed-to-a-trainer-of-this-file-run-in-one-expression-sagemaker",
            target="sagemaker",
            findings=(Expected(24, 42, "`Trainer` (this file) trains, and moves to the device it is handed"),),
        ),
    ),
)

# What the device obligations (device/obligations.py) say where a proof breaks with this rule.


def cpu_default_flag(dest: str, helper: str | None = None) -> str:
    """A device flag whose default is "cpu" while its choices name an accelerator; ``helper``: a
    function of the file that makes the flag a device and returns one off XLA for "xla"."""
    advice = (
        f'make it "xla" to train on the XLA device once `{helper}` returns the XLA device for "xla" (it returns '
        "another now: see the finding at its return)"
        if helper is not None
        else 'make it "xla" to train on the XLA device'
    )
    return (
        f'the device flag `{dest}` defaults to "cpu" while its choices name an accelerator: on an XLA host the model '
        'that goes to it trains on the CPU unless the run names the XLA device ("xla" among the choices once '
        f"ported) or code of the project sets it; the port leaves the author's CPU default as it is: {advice}"
    )


def ported_flag_helper(function: str, returns: str, dest: str, call: str, path: str = "") -> str:
    """Why a device ends off XLA: a function of the file (or of the module at ``path``) makes a device
    of a flag the port rewrote to "xla" (device/flag_helpers.py) and returns another device for it."""
    where = f" ({path})" if path else ""
    return (
        f'`{function}()`{where} returns {returns} for "xla", the value the port wrote into the `--{dest}` flag that '
        f'`{call}` hands it: none of its conditions names "xla" (return the XLA device for "xla" there; '
        "the port changed the value its conditions see, not the author)"
    )


def cpu_switch_handed(name: str, root: str, callee: str, chooser: str, attr: str) -> str:
    """A script's own GPU switch set to False, handed to a project module that picks the device
    with it (device/cpu_flags.py)."""
    return (
        f"`{name} = False` keeps the run on the CPU: `{root}` goes to `{callee}()`, and {chooser}, which "
        f"this script imports, picks the device with `{attr}` (the XLA device after the port only when it is "
        f"True), so on an XLA host the model trains on the CPU; set `{name} = True` to train on the XLA "
        "device (the port leaves this choice of the script as it is)"
    )


def stepped_model_off_xla(model: str, optimizer: str, device: str, why: str) -> str:
    """The stepped model goes to ``device``, which ends off the XLA device (``why``: where)."""
    return _goes_off_xla(stepped_model(model, optimizer), device, why)


_PORT_CHANGED = "the port changed this condition, not the author"


def condition_changed_by_the_port(test: str, name: str, value: str) -> str:
    """Why a device ends off XLA, said after it: a condition the author wrote for the accelerator's
    branch compares a value the port rewrote (``backend == NCCL`` once ``backend`` is "xla")."""
    return (
        f'(the port made `{test}` False: it rewrote `{name}` to "{value}", so the branch written for the '
        f"accelerator no longer runs; {_PORT_CHANGED})"
    )


def handed_device_off_xla(model: str, callee: str, path: str, move: str, device: str, why: str) -> str:
    """The stepped model is handed to a callable of the project that moves it to the device the
    caller hands in (``Trainer(model, device=args.device)``), and that device ends off XLA."""
    return _goes_off_xla(
        f"`{model}`, which `{callee}` ({path}) moves (`{move}`) and builds its optimizer over,", device, why
    ) + _pass_it_there(why)


def trainer_device_off_xla(callee: str, path: str, move: str, device: str, why: str) -> str:
    """A callable of the project that trains moves tensors to the device the caller hands in
    (``CTRTrainer(model, device=device)``, ``self.model.to(self.device)``), and that device ends off XLA."""
    return _goes_off_xla(
        f"`{callee}` ({path}) trains, and moves to the device it is handed (`{move}`), which", device, why
    ) + _pass_it_there(why)


def _pass_it_there(why: str) -> str:
    """The advice that ends a finding on a device handed to project code: a CPU choice is the
    author's (the port keeps it); a CUDA one is a value the port could not tell is a device
    where it is written (``add_argument("--gpu", default="cuda:0")``); a condition the port changed
    is the port's, not the author's."""
    if _PORT_CHANGED in why:
        return ", or pass it there (`--device xla` for a device flag)"
    if "(the CPU)" in why:
        return (
            ", or pass it there (`--device xla` for a device flag): the port leaves a CPU choice as the author wrote it"
        )
    return (
        ", or pass it there (`--device xla` for a device flag): the port rewrites no value it cannot tell is a device"
    )


def moved_off_xla(name: str, device: str, why: str) -> str:
    """A module or tensor no optimizer of the file steps goes to a device chosen off XLA."""
    return _goes_off_xla(f"`{name}`", device, why)


def _goes_off_xla(what: str, device: str, why: str) -> str:
    return broken_proof(
        f"{what} goes to `{device}`",
        f"ends on {why} on an XLA host after the port",
        "make it the XLA device (torch_xla.device())",
    )


# Where a proof of the obligations broke with this rule (device/obligations.py), as the module is left.
reports_broken_proofs(DEVICE_OFF_XLA)
