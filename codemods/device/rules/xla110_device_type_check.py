"""XLA110 device-type-check: ``device.type == 'cuda'`` around device code, on the device the script
picked, asks "is this the accelerator?": on XLA ``== 'xla'`` (the device facts' ``type_checks``);
reported where the code it guards also fails without CUDA, or the CUDA devices stay."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

_TIMED_STEP = """
    import time
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    for x in loader:
        if device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
        else:
            start = time.time()
        step(x)
        if device.type == "cuda":
            end.record()
            torch.cuda.synchronize()
            took = start.elapsed_time(end) / 1000
        else:
            took = time.time() - start
    """

_TIMED_STEP_PORTED = substituted(
    _TIMED_STEP,
    ("import torch\n", "import torch\n    import torch_xla\n    import torch_xla.core.xla_model as xm\n"),
    ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
    ("torch.cuda.synchronize()", "xm.wait_device_ops()"),
)

_NAMED_ONCE = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        model.cuda()
        name = torch.cuda.get_device_name()
    if device.type == "cuda":
        model.cuda()
        print(name)
    """

_NAMED_ONCE_PORTED = substituted(
    _NAMED_ONCE,
    ("import torch\n", "import torch\n    import torch_xla\n"),
    ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
    ("model.cuda()", "model.to(torch_xla.device())"),
)

_NAMED_ONCE_FINDINGS = (
    Expected(5, 4, "not changed: the code it guards also runs `torch.cuda.get_device_name`"),
    Expected(
        8,
        4,
        "not changed: on XLA its branch would read `name`, which only the branch of the other "
        '`device.type == "cuda"` check binds, and that check stays',
    ),
)

DEVICE_TYPE_CHECK = Rule(
    code="XLA110",
    name="device-type-check",
    severity="error",
    summary="`device.type == 'cuda'` around device code, on the device the script picked, compares with 'xla'",
    fixable=True,
    why="Scripts that pick `device = torch.accelerator.current_accelerator()` (or 'cuda' when it is there) and "
    "the CPU otherwise then ask `if device.type == 'cuda':` before moving the model, wrapping it in "
    "DistributedDataParallel or moving batches. Once the device becomes the XLA device that check is False, "
    "so the model is neither moved nor wrapped and the script trains on the CPU, or not at all under the "
    "launcher (pytorch/examples imagenet). Where the check guards device code (a `.cuda()` move, a CUDA "
    "device) and the compared name is assigned a device that becomes XLA, 'cuda' becomes 'xla': the check "
    'keeps asking "is this the accelerator?", and a `--no-accel` CPU run still skips it. Where the guarded '
    "code also runs something that fails without CUDA it is reported instead. Checks around other code "
    "(cuDNN flags, DataParallel) stay, with XLA105, and so do checks around CUDA-event timing (a synchronize beside "
    "`torch.cuda.Event`): False on XLA skips that timing, and the `else` that times on any device runs. A check "
    "whose branch, once ported, would read a name that only the branch of another check of the device binds "
    "stays as that check does (ported alone it would raise UnboundLocalError on XLA); where the two guard device "
    "code it is reported, to port both together.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
            if device.type == "cuda":
                model.cuda(device)
            """,
            """
            import torch
            import torch_xla

            device = torch.device("xla") if use_accel else torch.device("cpu")
            if device.type == "xla":
                model.to(torch_xla.device())
            """,
            findings=(Expected(5, 4, '-> device.type == "xla"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch.backends.cudnn as cudnn

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model.to(device)
            if device.type == "cuda":
                cudnn.benchmark = True
            if batch.device.type == "cuda":
                x = x.cuda()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model.to(device)
            if device.type == "cuda":
                pass
            if batch.device.type == "xla":
                x = x.to(torch_xla.device())
            """,
            note="no-device-code-or-a-tensor-device",
        ),
        # CUDA-event timing with an `else` that times on any device: False on XLA is right there, and the
        # check after the step (a synchronize only) stays with it: ported alone, its branch would read `end`,
        # which only the first check's branch binds (an UnboundLocalError on XLA).
        valid(_TIMED_STEP, _TIMED_STEP_PORTED, note="cuda-event-timing-pair-stays"),
        valid(
            _TIMED_STEP,
            substituted(
                _TIMED_STEP_PORTED,
                ("import torch_xla\n    import torch_xla.core", "import torch_xla.core"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            note="cuda-event-timing-pair-stays-sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if use_accel:
                device = torch.accelerator.current_accelerator()
            else:
                device = torch.device("cpu")
            if args.distributed:
                if device.type == 'cuda':
                    model.cuda(device)
            elif device.type == "cuda":
                model = torch.nn.DataParallel(model).cuda()
            """,
            """
            import torch
            import torch_xla

            if use_accel:
                device = torch.device("xla")
            else:
                device = torch.device("cpu")
            if args.distributed:
                if device.type == 'xla':
                    model.to(torch_xla.device())
            elif device.type == "xla":
                model = model.to(torch_xla.device())
            """,
            note="imagenet-accelerator-branches",
            findings=(
                Expected(9, 8, "`device.type == 'cuda'` asks whether the device the script picked is the accelerator"),
                Expected(11, 6, '-> device.type == "xla"'),
            ),
        ),
        invalid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
            if device != "cuda":
                x = x.cuda()
            if "cuda" in str(device):
                model.cuda()
            """,
            """
            import torch
            import torch_xla

            device = "xla"
            if device != "xla":
                x = x.to(torch_xla.device())
            if "xla" in str(device):
                model.to(torch_xla.device())
            """,
            note="string-device-negated-and-membership",
            findings=(Expected(5, 4, '-> device != "xla"'), Expected(7, 4, '-> "xla" in str(device)')),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            if device.type == "cuda":
                model.cuda()
                print(torch.cuda.get_device_name())
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            if device.type == "cuda":
                model.to(torch_xla.device())
                print(torch.cuda.get_device_name())
            """,
            note="guards-code-that-fails-without-cuda-reported",
            findings=(Expected(5, 4, "not changed: the code it guards also runs `torch.cuda.get_device_name`"),),
        ),
        invalid(
            """
            import torch as th

            dev = th.accelerator.current_accelerator() if th.accelerator.is_available() else th.device("cpu")
            if dev.type == 'cuda':
                net = net.cuda()
            """,
            """
            import torch as th
            import torch_xla

            dev = th.device("xla")
            if dev.type == 'xla':
                net = net.to(torch_xla.device())
            """,
            alias=True,
            findings=(Expected(5, 4, "`dev.type == 'cuda'` asks whether the device the script"),),
        ),
        invalid(
            _NAMED_ONCE, _NAMED_ONCE_PORTED, note="paired-check-stays-with-its-partner", findings=_NAMED_ONCE_FINDINGS
        ),
        invalid(
            _NAMED_ONCE,
            substituted(
                _NAMED_ONCE_PORTED,
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            note="paired-check-stays-with-its-partner-sagemaker",
            findings=_NAMED_ONCE_FINDINGS,
        ),
        invalid(
            """
            import torch as th

            dev = th.device("cuda" if th.cuda.is_available() else "cpu")
            if dev.type == "cuda":
                model.cuda()
                name = th.cuda.get_device_name()
            if dev.type == "cuda":
                model.cuda()
                print(name)
            """,
            """
            import torch as th
            import torch_xla

            dev = torch_xla.device()
            if dev.type == "cuda":
                model.to(torch_xla.device())
                name = th.cuda.get_device_name()
            if dev.type == "cuda":
                model.to(torch_xla.device())
                print(name)
            """,
            alias=True,
            note="paired-check-stays-with-its-partner-alias",
            findings=(
                Expected(5, 4, "not changed: the code it guards also runs `th.cuda.get_device_name`"),
                Expected(8, 4, '`dev.type == "cuda"` check binds, and that check stays'),
            ),
        ),
    ),
)


@on_facts(DEVICE_TYPE_CHECK, nodes=lambda facts: facts.device.type_checks)
def _type_check(ctx: Context[Facts], original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
    from codemods.device.rules.checks import compared_with, kept_because

    blocker = ctx.facts.device.type_checks[original]
    check = ctx.code(original)
    stranded = ctx.facts.device.paired_checks.get(original)
    if stranded is not None and blocker is not None:
        ctx.report(
            DEVICE_TYPE_CHECK,
            original,
            f"`{check}` asks whether the device is the accelerator, and is False on the XLA device, so the device "
            f"code it guards never runs there; not changed: on XLA its branch would read `{stranded}`, which only "
            f"the branch of the other `{ctx.code(blocker)}` check binds, and that check stays; port both checks together",
        )
        return updated
    why = kept_because(ctx, blocker)
    if why is not None:
        ctx.report(
            DEVICE_TYPE_CHECK,
            original,
            f"`{check}` asks whether the device is the accelerator, and is False on the XLA device, so the device "
            f"code it guards never runs there; not changed: {why}; compare with 'xla' once that code runs on XLA",
        )
        return updated
    return ctx.fix_or_keep(
        updated,
        DEVICE_TYPE_CHECK,
        original,
        f"`{check}` asks whether the device the script picked is the accelerator, which is now the XLA "
        "device -> {new}",
        lambda: compared_with(updated, ctx.target.device_string),
    )
