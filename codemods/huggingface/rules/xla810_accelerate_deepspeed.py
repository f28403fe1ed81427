"""XLA810 accelerate-deepspeed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# finetune_moss.py's shape: the plugin's config written, the engine's checkpoint method.
_PLUGIN_AND_ENGINE = """
import torch
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="bf16")
accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = 4
model, optimizer, loader = accelerator.prepare(model, torch.optim.AdamW(model.parameters()), loader)
for x, y in loader:
    accelerator.backward(model(x, labels=y).loss)
    optimizer.step()
    optimizer.zero_grad()
model.save_checkpoint("out", 1)
"""

# The placeholders DeepSpeed replaces, and the plugin handed to the Accelerator.
_PLACEHOLDERS = """
from accelerate import Accelerator, DeepSpeedPlugin
from accelerate.utils import DummyOptim, DummyScheduler

plugin = DeepSpeedPlugin(hf_ds_config={"train_micro_batch_size_per_gpu": "auto"})
acc = Accelerator(deepspeed_plugin=plugin)
opt = DummyOptim(model.parameters(), lr=1e-5)
sched = DummyScheduler(opt)
model, opt, sched, dl = acc.prepare(model, opt, sched, dl)
for batch in dl:
    acc.backward(model(batch).mean())
    opt.step()
    sched.step()
"""

_SUBCLASSED = """
from accelerate.utils import DummyOptim


class BaseDummyOptim(DummyOptim):
    def __init__(self, model, lr=0.001):
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.lr = lr
"""

_GUARDED = """
import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType

accelerator = Accelerator()
if accelerator.distributed_type == DistributedType.DEEPSPEED:
    accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = 4
if accelerator.state.deepspeed_plugin is not None:
    accelerator.state.deepspeed_plugin.deepspeed_config["gradient_clipping"] = 1.0
model, optimizer = accelerator.prepare(model, torch.optim.AdamW(model.parameters()))
accelerator.save_state("out")
trainer.save_checkpoint("out")
"""

# A model's own checkpoint method (review 22, acc_ckpt.py): ``prepare`` hands the Net back and its
# method runs on XLA; the plugin read under a guard says the file knows DeepSpeed, still its own method.
_OWN_CHECKPOINT = """
import torch
from accelerate import Accelerator


class Net(torch.nn.Module):
    def forward(self, x):
        return x

    def save_checkpoint(self, path):
        return path


accelerator = Accelerator()
if accelerator.state.deepspeed_plugin is not None:
    accelerator.state.deepspeed_plugin.deepspeed_config["gradient_clipping"] = 1.0
model, optimizer = accelerator.prepare(Net(), torch.optim.AdamW(params))
model.save_checkpoint("out.pt")
"""

# No other use of the integration: a prepared object's ``load_checkpoint`` is not called DeepSpeed's.
_NO_DEEPSPEED = """
from accelerate import Accelerator

accelerator = Accelerator()
model, optimizer = accelerator.prepare(build_model(), optimizer)
model.load_checkpoint("out.pt")
"""

# Guards that are not an ``if`` around the read (review 22, acc_guard2.py).
_GUARD_SHAPES = """
from accelerate import Accelerator

accelerator = Accelerator()


def zero_stage():
    if accelerator.state.deepspeed_plugin is None:
        return 0
    return accelerator.state.deepspeed_plugin.zero_stage


def zero3():
    plugin = accelerator.state.deepspeed_plugin
    return plugin is not None and accelerator.state.deepspeed_plugin.zero_stage == 3


ok = accelerator.state.deepspeed_plugin and accelerator.state.deepspeed_plugin.zero_stage == 3
z = accelerator.state.deepspeed_plugin.zero_stage if accelerator.state.deepspeed_plugin else 0
"""

# An engine method and a placeholder under DeepSpeed guards (acc_guard_engine.py; accelerate's by_feature
# example: ``DummyScheduler`` in the else branch of ``if deepspeed_plugin is None or ...``).
_GUARDED_ENGINE = """
from accelerate import Accelerator
from accelerate.utils import DistributedType, DummyScheduler

accelerator = Accelerator()
if (
    accelerator.state.deepspeed_plugin is None
    or "scheduler" not in accelerator.state.deepspeed_plugin.deepspeed_config
):
    lr_scheduler = get_scheduler("linear", optimizer=optimizer)
else:
    lr_scheduler = DummyScheduler(optimizer, total_num_steps=10)
model, optimizer, lr_scheduler = accelerator.prepare(model, optimizer, lr_scheduler)
if accelerator.distributed_type == DistributedType.DEEPSPEED:
    model.save_checkpoint("out")
else:
    accelerator.save_state("out")
"""

# Outside the guards: after the ``if`` that returns only, and a third-party model's engine method.
_PAST_GUARDS = """
from accelerate import Accelerator

accelerator = Accelerator()
accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = 4


def zero_stage():
    if accelerator.state.deepspeed_plugin is None:
        print("no deepspeed")
    return accelerator.state.deepspeed_plugin.zero_stage


model, optimizer = accelerator.prepare(AutoModel.from_pretrained("gpt2"), optimizer)
if accelerator.is_main_process:
    model.save_checkpoint("out")
"""

ACCELERATE_DEEPSPEED = Rule(
    code="XLA810",
    name="accelerate-deepspeed",
    severity="error",
    summary="Accelerate's DeepSpeed integration (DeepSpeedPlugin, DummyOptim/DummyScheduler, "
    "`state.deepspeed_plugin`, a DeepSpeedEngine method of a prepared model), which XLA does not run",
    fixable=False,
    why="Accelerate trains through DeepSpeed only where its distributed type is DEEPSPEED; on XLA it is XLA "
    "(checked on accelerate 1.15): `accelerator.state.deepspeed_plugin` is None there, so reading an attribute "
    "of it (`.deepspeed_config[...] = ...`) raises AttributeError; `accelerator.prepare` wraps only torch "
    "optimizers and schedulers and hands `accelerate.utils.DummyOptim`/`DummyScheduler` (placeholders for what "
    "a DeepSpeed config builds, classes with no `step`) back unchanged, so their `step()` raises "
    "AttributeError and nothing steps the parameters (and `from accelerate.utils import DummyOptim` fails "
    "where deepspeed is not installed); it returns the model itself, not a DeepSpeedEngine, so an engine "
    "method (`model.save_checkpoint(...)`, `load_checkpoint`) raises AttributeError; and "
    "`Accelerator(deepspeed_plugin=DeepSpeedPlugin(...))` needs deepspeed installed (ImportError) while XLA "
    "never runs its engine, so the plugin's config (ZeRO, the optimizer and scheduler it builds, clipping) "
    "does not apply. Each use is reported at its line (a class deriving from a placeholder at its base). A "
    "read of the plugin, an engine method or a placeholder under a condition that names DeepSpeed (`if "
    "accelerator.distributed_type == DistributedType.DEEPSPEED:`, `if accelerator.state.deepspeed_plugin is not "
    "None:` and its else branch, the right of `plugin is not None and plugin.zero_stage`, what follows `if "
    "plugin is None: return 0`) is the script's own guard and is not reported. An engine method of a prepared "
    "object is reported only where the file otherwise uses the integration (a placeholder, the plugin, its "
    "`deepspeed_plugin`, `DistributedType.DEEPSPEED`) and the object's class may be DeepSpeed's: not where a "
    "class of the file defines a method of that name (a model's own `save_checkpoint` runs on XLA) or a class "
    "of another module of the project built the object. Port: a torch optimizer and LR scheduler with the DeepSpeed config's "
    "settings, `accelerator.save_state(dir)` for checkpoints, an XLA accelerate config (torch_xla's FSDP "
    "where ZeRO's sharding is needed).",
    examples=lambda: (
        Invalid(
            "from accelerate import Accelerator\nfrom accelerate.utils import DummyOptim\n\naccelerator = Accelerator()\n"
            "optimizer = DummyOptim(model.parameters(), lr=1e-5)\n"
            "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n",
            findings=(Expected(5, 13, "`DummyOptim` is Accelerate's placeholder"),),
        ),
    ),
    valid=lambda: (
        valid(_GUARDED, note="deepspeed-guarded-or-not-accelerates"),
        valid(_GUARDED, target="sagemaker", note="deepspeed-guarded-or-not-accelerates-sagemaker"),
        *(
            valid(code, target=target, note=f"{note}-{target}")
            for code, note in (
                (_OWN_CHECKPOINT, "a-models-own-save-checkpoint"),
                (_NO_DEEPSPEED, "an-engine-method-name-without-deepspeed-in-the-file"),
                (_GUARD_SHAPES, "early-return-and-or-and-plugin-alias-guards"),
                (_GUARDED_ENGINE, "engine-method-and-placeholder-under-deepspeed-guards"),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
    invalid=lambda: (
        *(
            invalid(
                _PLUGIN_AND_ENGINE,
                target=target,
                note=f"deepspeed-plugin-config-and-engine-checkpoint-{target}",
                findings=(
                    Expected(5, 1, "`accelerator.state.deepspeed_plugin` is None unless"),
                    Expected(11, 1, "`model.save_checkpoint(...)` is a DeepSpeedEngine method"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                _PLACEHOLDERS,
                target=target,
                note=f"deepspeed-placeholders-and-plugin-{target}",
                findings=(
                    Expected(4, 10, "`DeepSpeedPlugin(...)` asks Accelerate to train through DeepSpeed"),
                    Expected(6, 7, "`DummyOptim` is Accelerate's placeholder for the optimizer"),
                    Expected(7, 9, "`DummyScheduler` is Accelerate's placeholder for the LR scheduler"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                _SUBCLASSED,
                target=target,
                note=f"a-class-deriving-from-dummyoptim-{target}",
                findings=(Expected(4, 22, "`DummyOptim` is Accelerate's placeholder for the optimizer"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *(
            invalid(
                _PAST_GUARDS,
                target=target,
                note=f"reads-past-the-guards-and-a-third-party-models-engine-method-{target}",
                findings=(
                    Expected(4, 1, "deepspeed_plugin"),
                    Expected(10, 12, "deepspeed_plugin"),
                    Expected(15, 5, "`model.save_checkpoint(...)` is a DeepSpeedEngine method"),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import accelerate
            import accelerate.utils as au

            acc = accelerate.Accelerator(deepspeed_plugin=au.DeepSpeedPlugin(zero_stage=2))
            opt = au.DummyOptim(params)
            accelerate.AcceleratorState().deepspeed_plugin.deepspeed_config["gradient_clipping"] = 1.0
            """,
            alias=True,
            note="deepspeed-surface-through-module-aliases",
            findings=(
                Expected(4, 47, "`DeepSpeedPlugin(...)`"),
                Expected(5, 7, "`DummyOptim`"),
                Expected(6, 1, "deepspeed_plugin"),
            ),
        ),
    ),
)

_PORT = "XLA does not run DeepSpeed: Accelerate's distributed type there is XLA, never DEEPSPEED"


@reports_facts(ACCELERATE_DEEPSPEED, nodes=lambda facts: set(facts.huggingface.accelerate_deepspeed))
def _report(ctx: Context[Facts], original: cst.CSTNode) -> str:
    kind = ctx.facts.huggingface.accelerate_deepspeed[original]
    if kind == "DummyOptim":
        return (
            "`DummyOptim` is Accelerate's placeholder for the optimizer a DeepSpeed config builds: " + _PORT + ", so "
            "`accelerator.prepare` hands it back unchanged and its `step()` raises AttributeError (nothing steps the "
            "parameters; importing it fails where deepspeed is not installed): build a torch optimizer "
            "(torch.optim.AdamW) with the config's settings"
        )
    if kind == "DummyScheduler":
        return (
            "`DummyScheduler` is Accelerate's placeholder for the LR scheduler a DeepSpeed config builds: "
            + _PORT
            + ", "
            "so `accelerator.prepare` hands it back unchanged and its `step()` raises AttributeError: build a torch "
            "LR scheduler (transformers' get_scheduler, torch.optim.lr_scheduler) with the config's warmup"
        )
    if kind == "DeepSpeedPlugin":
        return (
            "`DeepSpeedPlugin(...)` asks Accelerate to train through DeepSpeed: " + _PORT + "; "
            "`Accelerator(deepspeed_plugin=...)` raises ImportError where deepspeed is not installed, and "
            "the plugin's config (ZeRO, the optimizer and scheduler it builds, clipping) never applies: build "
            "the Accelerator without it (an XLA accelerate config), with a torch optimizer and scheduler "
            "(torch_xla's FSDP where ZeRO's sharding is needed)"
        )
    if kind == "deepspeed_plugin":
        return (
            f"`{ctx.code(original)}`: `accelerator.state.deepspeed_plugin` is None unless Accelerate's distributed "
            "type is DEEPSPEED, which it never is on XLA, so this raises AttributeError: set what it configures "
            "(the micro-batch size, clipping) on the loader and the training step, or guard it with `if "
            "accelerator.state.deepspeed_plugin is not None:`"
        )
    call = ctx.code(getattr(original, "func", original))
    return (
        f"`{call}(...)` is a DeepSpeedEngine method: " + _PORT + ", and `accelerator.prepare` returns the model "
        "itself, which has no such method (AttributeError): save and load with `accelerator.save_state(dir)` / "
        "`accelerator.load_state(dir)`"
    )
