"""XLA104 cuda-available-device: an availability check that picks the device is dropped (an
``if`` folded, an ``x if torch.cuda.is_available() else y`` folded to ``x``, a flag's check
dropped: the device facts' ``ifs``, ``selections`` and ``flag_values``), an exit under a
function of the file that counts CUDA devices is removed (``gpu_requirements``), and the checks
that cannot go are reported (``blocked_ifs``, ``blocked_flags``, ``unset_fallbacks``,
``wrapped_checks``).  ``assert torch.cuda.is_available()`` goes whole from its line, with
XLA106's set-device statements (the line is rebuilt once)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.availability_cases import early_return_and_wrapper_cases, not_a_device_choice_cases
from codemods.device.rules.cleared_flag_cases import cleared_flag_cases, cleared_flag_valid_cases, item_flag_cases
from codemods.device.rules.count_check_cases import count_check_cases, count_check_valid_cases
from codemods.device.rules.cpu_fallback_cases import cpu_fallback_cases
from codemods.device.rules.cuda_kernel_guard_cases import cuda_kernel_guard_cases
from codemods.device.rules.device_string_chain_cases import device_string_chain_cases
from codemods.device.rules.dropped_check_cases import dropped_branch_and_flag_cases, dropped_check_cases
from codemods.device.rules.handed_flag_cases import handed_flag_cases, handed_flag_valid_cases
from codemods.device.rules.helper_guard_cases import (
    helper_guard_cases,
    helper_guard_chain_cases,
    helper_guard_valid_cases,
)
from codemods.device.rules.helper_return_cases import helper_return_invalid_cases, helper_return_valid_cases
from codemods.device.rules.host_move_cases import host_move_cases, host_move_valid_cases
from codemods.device.rules.location_guard_cases import location_guard_invalid_cases, location_guard_valid_cases
from codemods.device.rules.paired_check_cases import paired_check_invalid_cases, paired_check_valid_cases
from codemods.device.rules.probe_cases import cuda_tool_probe_cases, cuda_tool_probe_valid_cases
from codemods.device.rules.unread_holder_cases import (
    unread_holder_cases,
    unread_holder_dropped_cases,
    unread_holder_valid_cases,
)
from codemods.engine.hooks import of_types, on_facts, removes_statements
from codemods.engine.rule import Expected, Rule, invalid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CUDA_AVAILABLE_DEVICE = Rule(
    code="XLA104",
    name="cuda-available-device",
    severity="error",
    summary="`torch.cuda/accelerator.is_available()` that picks the device: the XLA device is always there",
    fixable=True,
    why="`torch.cuda.is_available()` is False on an XLA machine, so a device picked by it silently falls back "
    "to the CPU and the script trains there. Where the check picks the device it is dropped; a `--no-cuda` "
    "flag still selects the CPU. `assert torch.cuda.is_available()` is removed, and so is an exit under "
    "`if not verify_min_gpu_count(...):` when that function of the file checks for CUDA devices and counts "
    "them (pytorch/examples minGPT-DDP): both are always true on XLA, where the script would end there; so is "
    "a check whose `else:` only asserts a configuration without accelerators (`else: assert cfg.NUM_GPUS == "
    "0`, SlowFast's `build_model`: with the default configuration the assert fails on XLA): the check goes "
    "with that branch; the "
    "XLA launcher starts one process per XLA device, so a minimum number of devices is no longer enforced "
    "(the finding says so). A `return` in place of the exit goes too when the function's work follows it (the "
    "finding names the function, which always returned there on XLA), but not when the rest of the function only "
    "sets CUDA up (`if not use_gpu(spec): return`, then a CUDA index computed from `torch.cuda.device_count()`, "
    "SLM-Lab's `set_cuda_id`): it returns there on XLA as without CUDA, and there is no CUDA to set up. `torch.cuda.is_initialized()` (OLMo's `is_available() and is_initialized()`) "
    "is such a check too: it asks whether this process has set CUDA up, which on XLA it never has. An early "
    '`if not torch.cuda.is_available(): return torch.device("cpu")` picks the device as well, and goes; so does '
    '`if torch.cuda.is_available(): device_type = "cuda"` (then `elif ...: "mps"`, `else: "cpu"`) where the name '
    "reaches `torch.device(...)` or `.to(...)` (a later `assert device_type in ['cuda', ...]` lists 'xla' too, "
    "XLA114). So does a check around a call of a function of the file that moves to CUDA (`if "
    "torch.cuda.is_available(): x = to_gpu(x)`, where `to_gpu` returns `x.cuda()`: Palette's `set_device`): left, "
    "`to_gpu` would move to the XLA device but never run there; the function may move through another of the "
    "file (`set_device` -> `set_gpu` -> `args.cuda()`) or be one of another module of the project (`from "
    "core.util import set_device`, in a run that reads that module: its summary says it moves). A check whose "
    "moves the port cannot make run on XLA in this way (a device type compared with 'cuda', a check handed on "
    "as a flag) is an error, XLA119. A check around code that runs a third-party compiled CUDA op (`from "
    "basicsr.ops.fused_act import FusedLeakyReLU`, a GPU-only test under `if torch.cuda.is_available():`) stays: "
    "dropped, the code would run the op on the XLA device, which raises there; kept, it is skipped on XLA as on "
    "any host without CUDA (an error that names the op; XLA004 reports the op itself). So does one around a "
    "library layer built on such ops (BasicSR's StyleGAN2 layers: StyleGAN2Generator, ConvLayer, ResBlock, ...) "
    "or around a callable of another module of the project whose code runs one (GFPGAN's tests of its "
    "generator). A check "
    "whose code also runs a CUDA-only call (one that raises without CUDA) cannot be dropped: it stays, and "
    "its error says that the path without CUDA runs there, so the model and tensors stay on the CPU; but one whose "
    "only device code is a checkpoint's CUDA `map_location` (`torch.load(f, map_location=lambda s, loc: "
    "s.cuda(device_id))` after `device_id = torch.cuda.current_device()`), with an `else` that loads on the CPU, "
    "stays with no error (XLA105's warning): on XLA the `else` loads and `load_state_dict` copies the tensors "
    "into the model wherever it is (without that `else` nothing would load: the error stays). An accelerator's "
    "index stored under a check (`device_id = torch.cuda.current_device()`, `torch.xpu.current_device()`: torch's "
    "DataLoader pinning) picks no device by itself. A check "
    "asked through a function or method of the file (`if cuda.is_available():`, where that method returns "
    "`torch.cuda.is_available()` or `torch.cuda.device_count() > 0`: fairseq2's `CudaContext`; or `x and` "
    "one of them on some path: SLM-Lab's `use_gpu`), or through such a function of another module of the "
    "project (`if util.use_gpu(spec['gpu']):`, in a run that reads that module: its summary says what it "
    "returns), is left as is and is an error: on XLA the wrapper returns False, so the device it picks is "
    "the CPU; make the wrapper return True, or pick `torch_xla.device()` there. A CUDA device count tested "
    "for truth in a condition (`if torch.cuda.device_count():`, `> 0`, `>= 1`, `!= 0`) is an availability "
    "check too (0 on an XLA host), dropped where it picks the device; a count held in a name (`n_gpu = "
    "torch.cuda.device_count()`) is not, and a device it leaves on the CPU is XLA111's error. A flag "
    "that picks the device in another module of the project is dropped too: a flag named for CUDA or the GPU "
    "that a function returns on an object (`args.cuda = not args.no_cuda and torch.cuda.is_available(); return "
    "args` in arguments.py, read by main.py), and a flag handed to a callable of a project module whose device "
    "choice reads it (`args.use_gpu = torch.cuda.is_available() and args.use_gpu`, then `Exp(args)`, whose base "
    "class picks `cuda` under `if self.args.use_gpu:`), or as a keyword or positional argument to a callable of the "
    "project or the file that picks the device with that parameter (`use_cuda = torch.cuda.is_available()`, then "
    "`lib.Net(use_cuda=use_cuda)`, whose `__init__` picks `torch.device('cuda' if use_cuda else 'cpu')`, or sets "
    "`self.use_cuda = use_cuda` for `if self.use_cuda:` around a move; also one handed on to such a parameter: "
    "GRU4REC-pytorch), where the port picks `'xla' if use_cuda`; such a check handed as it is (`Net(use_cuda="
    "torch.cuda.is_available())`) is an error, XLA119. A file that chooses the device with another module's "
    "flag follows it there (XLA111, XLA112). A check that guards only a move to the host (`x.cpu() if "
    "torch.cuda.is_available() else x`; `if torch.cuda.is_available(): return x.cpu()` then `return x`; "
    "`x = x.cpu()` under it) goes too: the device tensor it would hand back on XLA raises at `.numpy()`, and "
    "`.cpu()` of a CPU tensor is the tensor; where the path without the move does something else, the check "
    "stays (XLA105). A CPU fallback of a device attribute that the file does not otherwise set (`if not "
    'torch.cuda.is_available(): config.device = "cpu"` in a function that updates a config object whose default '
    '`config.device = "cuda"` is set in another module or a config file) stays and is an error: removing the check '
    "alone would leave that default to send the model to CUDA, a crash on an XLA host where the original at least "
    "ran on the CPU, and the port cannot tie the fallback to the default it guards. Where the file sets the "
    'attribute too (`config.device = "cuda"` before the check, or an argparse `--device` default), that value is '
    "ported with it and the check goes. A check whose code, dropped, would run and read a name that only the code "
    "of a check that stays binds (CUDA-event timing after a step, `end.record()`, whose events the check before "
    "the step made) stays with it: silently around a synchronize, else reported, to port both together. A probe "
    "for the CUDA driver's tool (`shutil.which('nvidia-smi') is not None`, spotlight's examples) fails on an XLA "
    "host as `torch.cuda.is_available()` does, and is treated as that check (a probe for another tool is not). "
    "A choice whose name the function reads only as map locations and that is the CPU without CUDA (`device = "
    'None if torch.cuda.is_available() else "cpu"`, then `torch.load(path, map_location=device)`) stays, as do its '
    "map locations (XLA403): on XLA it loads onto the CPU, where XLA must load. A check that clears a flag (`if "
    'config["use_cuda"] and not torch.cuda.is_available(): config["use_cuda"] = False`, a warning beside it: '
    "pymarl's `args_sanity_check`) where the file picks the device or moves to it with that flag (`args.device = "
    '"cuda" if args.use_cuda else "cpu"`, `if args.use_cuda: model.cuda()`, also as an attribute of another object '
    "built from the config) goes: the flag keeps the user's value and picks the XLA device. Where a condition on "
    "the flag also guards code that fails without CUDA, the check stays and is an error. A flag held as a config "
    'item (`cfg["cuda"] = cfg["cuda"] and torch.cuda.is_available()`, then `if cfg["cuda"]:`) picks the device as '
    "`args.cuda` does. A flag that also sets a CUDA mode word, one that is no device, on a name only a star "
    "import of a module the tool cannot read may bind (SEAL's `cmd_args.mode = 'gpu' if args.cuda else 'cpu'`, "
    "with `cmd_args` from `from main import *` of pytorch_DGCNN, cloned beside the project, whose code calls "
    "`.cuda()` when the mode is 'gpu') counts as guarding such code: switched on, it would make that code take the "
    "XLA host for a CUDA one, where `.cuda()` raises (the original ran on the CPU there); the check stays and is an "
    "error that names the import. So does a check that sets the word itself (`cmd_args.mode = 'gpu' if "
    "torch.cuda.is_available() else 'cpu'`, also where the file compares the mode: its own moves are ported). A "
    "device string set there (`cfg.device = 'cuda' if torch.cuda.is_available() else 'cpu'`, or `'cuda:0' if "
    "args.cuda`) is ported as any device choice, to 'xla': the code that receives it moves to the XLA device with "
    "it (`.to(cfg.device)`). Beside a name the file binds (by any binding: an assignment, a definition, `as`, "
    "`:=`), or a star import of a followed package, the flag goes as any other.",
    examples=lambda: (
        invalid(
            """
            import torch

            use_cuda = not args.no_cuda and torch.cuda.is_available()
            device = torch.device("cuda" if use_cuda else "cpu")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            use_cuda = not args.no_cuda
            device = torch.device("xla" if use_cuda else "cpu")
            """,
            findings=(Expected(4, 12, "`use_cuda` picks the device"),),
        ),
    ),
    valid=lambda: (
        *host_move_valid_cases(),
        *not_a_device_choice_cases(),
        *helper_guard_valid_cases(),
        *paired_check_valid_cases(),
        *cuda_tool_probe_valid_cases(),
        *count_check_valid_cases(),
        *helper_return_valid_cases(),
        *cleared_flag_valid_cases(),
        *handed_flag_valid_cases(),
        *unread_holder_valid_cases(),
        *location_guard_valid_cases(),
    ),
    invalid=lambda: (
        *paired_check_invalid_cases(),
        *dropped_check_cases(),
        *early_return_and_wrapper_cases(),
        *cpu_fallback_cases(),
        *device_string_chain_cases(),
        *host_move_cases(),
        *helper_guard_cases(),
        *helper_guard_chain_cases(),
        *dropped_branch_and_flag_cases(),
        *cuda_tool_probe_cases(),
        *count_check_cases(),
        *cuda_kernel_guard_cases(),
        *helper_return_invalid_cases(),
        *cleared_flag_cases(),
        *item_flag_cases(),
        *handed_flag_cases(),
        *unread_holder_cases(),
        *unread_holder_dropped_cases(),
        *location_guard_invalid_cases(),
    ),
)


def _kernel_guard(ctx: Context[Facts], original: cst.If) -> str:
    """A check around code that runs a third-party compiled CUDA op (device/third_party.py), here
    or in a callable of another module: it stays."""
    import libcst as cst

    blocker = ctx.facts.device.blocked_ifs[original]
    op, path = ctx.facts.device.kernel_calls[blocker]
    named = ctx.code(blocker.func if isinstance(blocker, cst.Call) else blocker)
    runs = f"`{named}` ({op})" if path is None else f"`{named}`, whose code in {path} runs `{op}`"
    return (
        f"`{ctx.code(original.test)}` guards code that runs {runs}, which calls compiled CUDA kernels with no XLA "
        "implementation: left as is, so on XLA (no CUDA) the code under it is skipped, as on any host without CUDA (dropped, it would run on the XLA device and raise there); to "
        "run it on XLA, replace those ops with torch operations"
    )


# What a device choice that stays as it is does on XLA, where the CUDA check is False.
_CPU_PATH = "the path without CUDA runs and the model and tensors stay on the CPU"


def _availability_ifs(facts: Facts) -> dict[cst.If, None]:
    """The ``if`` statements whose availability check picks the device (a guarded input move
    is XLA108's)."""
    device = facts.device
    found = [
        *device.gpu_requirements,
        *device.blocked_ifs,
        *device.unset_fallbacks,
        *of_types(device.wrapped_checks, "If"),
        *device.ifs,
    ]
    return dict.fromkeys(node for node in found if node not in facts.training.input_guards)  # type: ignore[misc]  # of_types keeps the If nodes of wrapped_checks


@on_facts(CUDA_AVAILABLE_DEVICE, nodes=_availability_ifs)
def _availability_if(
    ctx: Context[Facts], original: cst.If, updated: cst.If
) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
    import libcst as cst

    from codemods.device.rules.checks import devices_converted
    from codemods.device.rules.folded_ifs import fold_if
    from codemods.engine.nodes import fold_true

    device = ctx.facts.device
    if original in device.gpu_requirements:
        return _without_gpu_requirement(ctx, original, updated)
    if original in device.paired_ifs:
        ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{ctx.code(original.test)}` guards device code, and the code it guards reads "
            f"`{device.paired_ifs[original]}`, which only the code of another check that stays binds (it runs "
            f"`{ctx.code(device.blocked_ifs[original])}`, which fails without CUDA): left as is, so on XLA (no "
            f"CUDA) {_CPU_PATH}; port both checks together",
        )
        return updated
    if (
        original in device.blocked_ifs
        and original.orelse is None
        and device.blocked_ifs[original] in device.kernel_calls
    ):
        ctx.report(CUDA_AVAILABLE_DEVICE, original.test, _kernel_guard(ctx, original))
        return updated
    if original in device.blocked_ifs and original in device.cleared_flags:
        flag = device.cleared_flags[original]
        ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{ctx.code(original.test)}` switches `{flag}` off without CUDA, and `{flag}` picks the device, but a "
            f"condition on it also guards `{ctx.code(device.blocked_ifs[original])}`, which fails without CUDA: left "
            f"as is, so on XLA (no CUDA) `{flag}` is False and {_CPU_PATH}; move that code onto the XLA device by "
            "hand, then remove this check",
        )
        return updated
    if original in device.blocked_ifs:
        ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{ctx.code(original.test)}` picks the device, and the code it guards also runs "
            f"`{ctx.code(device.blocked_ifs[original])}`, which fails without CUDA: left as is, so on XLA (no CUDA) "
            f"{_CPU_PATH}; move that code onto the XLA device by hand",
        )
        return updated
    if original in device.unset_fallbacks:
        name = device.unset_fallbacks[original]
        ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{ctx.code(original.test)}` guards the CPU fallback of `{name}`, which this file does not "
            "otherwise set (its default comes from another module or a config file): left as is, so on XLA (no "
            f"CUDA) the fallback runs and the model and tensors that go to `{name}` stay on the CPU (removing the "
            'check alone would leave the default it guards, which may be "cuda", to fail on an XLA host); make '
            f'sure `{name}` is "xla" where its default is set, then remove this check',
        )
        return updated
    if original in device.wrapped_checks:
        _wrapped(ctx, original)
        return updated
    if not devices_converted(ctx):
        _not_folded(ctx, original.test)
        return updated
    folded = fold_true(updated.test, device.availability_within(original.test))
    parent = ctx.parent()
    is_elif = isinstance(parent, cst.If) and parent.orelse is original
    outcome = {
        True: "so the code under it always runs: check dropped",
        False: "so the code under it never runs: removed",
    }.get(folded, "dropped from the condition")  # type: ignore[arg-type]  # folded is True, False or an expression: dict.get returns the default for the expression
    kept = device.cleared_flags.get(original)
    holds = f" (`{kept}` keeps its value and picks the XLA device where it picked CUDA)" if kept else ""
    if original in device.wait_ifs and folded is True:
        from codemods.device.rules.xla122_cuda_wait_check import CUDA_WAIT_CHECK, WAIT_MESSAGE

        rule, message = (
            CUDA_WAIT_CHECK,
            (f"`{ctx.code(original.test)}` {WAIT_MESSAGE}: check dropped, so that the wait holds for the XLA device"),
        )
    else:
        rule = CUDA_AVAILABLE_DEVICE
        message = f"`{ctx.code(original.test)}`: the accelerator check holds for the XLA device{holds}, {outcome}"
    new = ctx.fix(rule, original.test, message, lambda: fold_if(updated, folded, is_elif, ctx.keep_lines_after))
    if new is None:
        return updated
    ctx.imports.discard(original.test)
    gone = original.orelse if folded is True else original.body if folded is False else None
    if gone is not None:
        ctx.forget_removed(gone, updated.orelse if folded is True else updated.body)  # type: ignore[arg-type]  # gone is not None, so the updated If's matching branch (orelse when folded is True) is not None either
    if isinstance(new, cst.RemovalSentinel) and not is_elif:
        ctx.drop_statement(updated)  # keeps the block valid (pass) and its comments
        return updated
    return new


def _without_gpu_requirement(ctx: Context[Facts], original: cst.If, updated: cst.If) -> cst.If:
    """``if not verify_min_gpu_count(): ...; sys.exit()``: the function checks for CUDA
    devices, which an XLA machine has none of, so the script would always end here (or the
    function return, before its work)."""
    import libcst as cst

    from codemods.device.rules.checks import devices_converted

    name = ctx.facts.device.gpu_requirements[original]
    if not devices_converted(ctx):
        return updated
    ctx.forget_removed(original, updated)
    last = original.body.body[-1] if original.body.body else None
    returned = isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)
    function = next((a.name.value for a in reversed(ctx.ancestors) if isinstance(a, cst.FunctionDef)), None)
    ended = f"`{function}` always returned here, before its work" if returned else "the script always ended here"
    done = ctx.fix(
        CUDA_AVAILABLE_DEVICE,
        original,
        f"removed `if {ctx.code(original.test)}:` and the {'return' if returned else 'exit'} under it: `{name}` "
        "checks for CUDA devices (an accelerator check, False on XLA, and a CUDA device count, 0 there), so "
        f"{ended}; on XLA the launcher starts one process per XLA device, however many there are (a minimum "
        "number of devices is no longer enforced)",
        lambda: original,
    )
    if done is not None:
        ctx.imports.discard(original)
        ctx.drop_statement(updated)
    return updated


@on_facts(
    CUDA_AVAILABLE_DEVICE,
    nodes=lambda facts: dict.fromkeys(
        [*of_types(facts.device.wrapped_checks, "IfExp"), *facts.device.selections, *facts.device.unread_choices]
    ),
)
def _selection(ctx: Context[Facts], original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
    """``x if torch.cuda.is_available() else y`` that picks the device -> ``x``."""
    import libcst as cst

    from codemods.device.rules.checks import devices_converted
    from codemods.engine.nodes import as_expression, fold_true, string_value

    device = ctx.facts.device
    if original in device.unread_choices:
        _unread_holder(ctx, original.test, f"`{ctx.code(original.test)}`", device.unread_choices[original])
        return updated
    if original in device.wrapped_checks:
        _wrapped(ctx, original)
    if original not in device.selections:
        return updated
    folded = fold_true(updated, device.availability_within(original))
    if not devices_converted(ctx) or (not isinstance(folded, bool) and _still_cuda(folded)):
        _not_folded(ctx, original)
        return updated

    def build() -> cst.BaseExpression | None:
        if isinstance(folded, cst.Integer):
            return ctx.device()
        if not isinstance(folded, bool) and string_value(folded) is not None:
            return folded if ctx.imports.require_package("torch_xla") else None
        return as_expression(folded)

    rule, message = (
        CUDA_AVAILABLE_DEVICE,
        "a move to the host under an accelerator check, which is False on XLA: an XLA tensor needs it too "
        "(`.numpy()` raises on one), a CPU tensor is unchanged -> {new}"
        if original in device.host_moves
        else "device picked by an accelerator check, which is False on XLA: the XLA device is always present -> {new}",
    )
    if original in device.wait_ifs:  # ``torch.cuda.synchronize() if torch.cuda.is_available() else None``
        from codemods.device.rules.xla122_cuda_wait_check import CUDA_WAIT_CHECK, WAIT_MESSAGE

        rule, message = CUDA_WAIT_CHECK, f"`{ctx.code(original.test)}` {WAIT_MESSAGE}: check dropped -> {{new}}"
    new = ctx.fix(rule, original, message, build)
    if new is None:
        return updated
    ctx.forget_fixes_inside(original)
    ctx.imports.discard(original)
    return new


@on_facts(
    CUDA_AVAILABLE_DEVICE, nodes=lambda facts: dict.fromkeys([*facts.device.flag_values, *facts.device.blocked_flags])
)
def _flag_value(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    """``use_cuda = not args.no_cuda and torch.cuda.is_available()`` where the flag picks the
    device: the check goes from the assignment's value (a value unpacked from a tuple stays)."""
    from codemods.engine.nodes import as_expression, fold_true

    parent = ctx.parent()
    if type(parent).__name__ not in ("Assign", "AnnAssign") or parent.value is not original:  # type: ignore[union-attr]  # an Assign or an AnnAssign (checked by name: a rule module loads no LibCST)
        return updated
    device = ctx.facts.device
    if original not in device.flag_values:
        flag, blocker = device.blocked_flags[original]
        if blocker in device.unread_holders:
            _unread_holder(ctx, original, f"`{flag}` picks the device but also", blocker)
            return updated
        ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original,
            f"`{flag}` picks the device but also guards `{ctx.code(blocker)}`, which fails without "
            "CUDA: left as is, so the script runs on the CPU; move that code onto the XLA device by hand",
        )
        return updated
    flag, purpose = device.flag_values[original]
    if type(parent).__name__ == "Assign" and type(parent.targets[0].target).__name__ == "Subscript":  # type: ignore[union-attr]  # an Assign (checked by name)
        flag = ctx.code(parent.targets[0].target)  # type: ignore[union-attr]  # as above: `cfg["cuda"]`, not its chain
    folded = fold_true(updated, device.availability_within(original))
    if not isinstance(folded, bool) and _still_cuda(folded):
        return updated  # it would pick the CUDA device that stays (the choice's own finding says why)
    new = ctx.fix(
        CUDA_AVAILABLE_DEVICE,
        original,
        f"`{flag}` {purpose}: its accelerator check is dropped (False on XLA, where the XLA device is always present)",
        lambda: as_expression(fold_true(updated, device.availability_within(original))),
    )
    if new is None:
        return updated
    ctx.imports.discard(original)
    return new


def _unread_holder(ctx: Context[Facts], original: cst.BaseExpression, subject: str, blocker: cst.CSTNode) -> None:
    """A flag (``subject``: "`flag` picks the device but also") or a check itself (``subject``: the
    check, in backquotes) makes a CUDA choice that code the tool cannot see reads (device/unread_holders.py)."""
    stars = " or ".join(f"`{ctx.code(star)}`" for star in ctx.facts.device.unread_holders[blocker])  # type: ignore[index]  # an Assign (unread_holders' key)
    holder = ctx.code(blocker.targets[0].target)  # type: ignore[attr-defined]  # an Assign, as above
    unseen = (
        f"for code the tool cannot see (only {stars} may bind `{holder.split('.')[0]}`, and the tool cannot read it)"
    )
    if subject.endswith(" also"):
        message = (
            f"{subject} sets `{holder}` to a CUDA choice (`{ctx.code(blocker)}`) {unseen}: switched on, that code "
            "would take the XLA host for a CUDA one, and a .cuda() there raises without CUDA: left as is, so the "
            "script runs on the CPU"
        )
    else:
        message = (
            f"{subject} sets `{holder}` to a CUDA mode word, not a device (`{ctx.code(blocker)}`), {unseen}: "
            "dropped, the check would make that code take the XLA host for a CUDA one, and a .cuda() there raises "
            "without CUDA: left as is, so on XLA (no CUDA) that code runs on the CPU"
        )
    ctx.report(
        CUDA_AVAILABLE_DEVICE, original, message + "; port that code to the XLA device by hand, then drop the check"
    )


def _wrapped(ctx: Context[Facts], original: cst.If | cst.IfExp) -> None:
    call, wrapper, returned, where = ctx.facts.device.wrapped_checks[original]
    ctx.report(
        CUDA_AVAILABLE_DEVICE,
        original.test,
        f"`{ctx.code(call)}` picks the device, but `{wrapper}`{f' (in {where})' if where else ''} returns "
        f"`{returned}`, which is False on XLA (no CUDA): {_CPU_PATH}; make `{wrapper}` return True (the XLA "
        f"device is always present), or pick `{ctx.target.api('device').spelled}()` here",
    )


def _not_folded(ctx: Context[Facts], original: cst.CSTNode) -> None:
    ctx.report(
        CUDA_AVAILABLE_DEVICE,
        original,
        "the device is picked by an accelerator check, which is False on XLA; not changed "
        "because the CUDA device it picks stays (XLA101-XLA103 are off or suppressed here, or the tool does not "
        "see it used as a device in this file); make it the XLA device by hand",
    )


def _still_cuda(node: cst.CSTNode) -> bool:
    """A CUDA device string in ``node``, not a key (``cfg["cuda"]`` names a flag)."""
    from codemods.engine.nodes import is_cuda_device_string, walk

    keys = {id(sub) for n in walk(node) if type(n).__name__ == "SubscriptElement" for sub in walk(n)}
    return any(is_cuda_device_string(n) and id(n) not in keys for n in walk(node))


@removes_statements(CUDA_AVAILABLE_DEVICE)
def _cuda_assert(ctx: Context[Facts], statement: cst.BaseSmallStatement) -> str | None:
    from codemods.device.rules.off_xla import kept_off_xla

    if statement not in ctx.facts.device.cuda_asserts or kept_off_xla(ctx):
        return None
    return f"removed `{ctx.code(statement)}`: the accelerator check is False on XLA, where the XLA device is always present"
