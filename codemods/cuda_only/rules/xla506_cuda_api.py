"""XLA506 cuda-api: the CUDA-only APIs of runtime_apis.CUDA_ONLY, with their advice, and any
other torch.cuda API no other rule looks at; a CUDA query whose answer on an XLA host breaks the
script (the CUDA-only facts' ``cuda_answers``).  Under a guard that is never true on XLA they
are XLA508's, or nothing to say."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.cuda_only.rules.cuda_api_cases import (
    dot_cuda_argument_invalid,
    dot_cuda_argument_valid,
    other_guard_invalid,
    other_guard_valid,
)
from codemods.cuda_only.rules.off_xla_cases import off_xla_invalid, off_xla_valid
from codemods.cuda_only.rules.runtime_apis import CUDA_ONLY, handled_elsewhere
from codemods.cuda_only.rules.threshold_device_cases import threshold_device_invalid, threshold_device_valid
from codemods.engine.hooks import on_references
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.cuda_only.facts import Answer
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CUDA_API = Rule(
    code="XLA506",
    name="cuda-api",
    severity="error",
    summary="CUDA-only API with no XLA equivalent",
    fixable=False,
    why="Most torch.cuda APIs raise without CUDA (device names and properties, streams, events, graphs). "
    "`torch.cuda.device_count()` (0 there) and `torch.cuda.is_bf16_supported()` (False) return: they are "
    "errors only where the answer breaks the script (a division by the count, a batch size or a device list of "
    "0, a branch that stops the script, a failing assert, or a use the tool does not follow: another callable, a "
    'return, or a test that picks the device: `if torch.cuda.device_count() > 1: device = "cuda:0" else: '
    'device = "cpu"` is False on XLA as with one GPU, but the path it takes leaves the model and tensors on the '
    "CPU of a host whose XLA devices are what the GPUs were); where they only choose a branch they are reported as "
    "CUDA checks (XLA105), where they change nothing as notes (XLA511). torch.nn.SyncBatchNorm is reported "
    "too: it takes CUDA and XPU tensors only, and raises on XLA ones once a process group is started; named only "
    "to test a module's class (`isinstance(m, (nn.BatchNorm2d, nn.SyncBatchNorm))`, `type(m) is nn.SyncBatchNorm`, "
    "or a tuple of classes bound to a name that only such tests read) it builds nothing and is not reported. Each needs a person's decision: "
    "remove it, guard it, or use the XLA equivalent. A call in the device argument of a `.cuda()` that XLA102 "
    "rewrites (`x.cuda(torch.cuda.current_device())` -> `x.to(<XLA device>)`) goes with it and is not reported. Code under a test that is False on XLA as the port leaves it never runs "
    "there and is not reported: a kept availability check (`torch.cuda.is_available()`, or a library's that returns it: transformers' "
    "`is_torch_cuda_available()`, accelerate's `is_cuda_available()`, also as a project module re-exports it; the "
    "port leaves those as they are; an `if` over it, a conditional expression `n % count if "
    "torch.cuda.is_available() else None`, or an early `return` under `if not torch.cuda.is_available() or "
    "...:` before it), a CUDA check that XLA105 reports False (`device_type == "
    '"cuda"`), a count that 0 switches off (`with_cuda and torch.cuda.device_count() > 1`), or a name whose last store, '
    "made on every path before the test, is one of those (`log_timings = log_timings and torch.cuda.is_available()`); "
    "so is a test of a caught error's text for CUDA's out-of-memory message (`except RuntimeError as e: if 'CUDA "
    "out of memory' in str(e):`: XLA's is RESOURCE_EXHAUSTED), and an availability check whose only device code is "
    "a checkpoint's CUDA `map_location` and whose `else` loads on the CPU (XLA104 keeps it). "
    "A count or bfloat16 check in a function that this run never calls is a note (XLA511): a module-level function "
    "or a method of a class with no base (no framework calls its hooks), not decorated, that nothing in the file names, "
    "in a file that runs as a script (a top-level call or a `__main__` guard) and that no other file of the run "
    "imports. Anywhere else the use stays an error: in a module other files import, code outside the file may call "
    "it, and there it breaks as written; except in a module-level function that its own file never names again and "
    "that the run's files call only under a CUDA availability check (`if gpu_available and show_progress:` after "
    "`gpu_available = torch.cuda.is_available() and use_gpu`), directly or through a module-level function of "
    "the calling file that the file names only in calls under such a check (`if gpu_available: show_memory()`, "
    "whose body calls the helper): it never runs on XLA (the check is XLA105's). "
    "Converted alone, such a module keeps the error: its callers are not in sight.",
    examples=lambda: (
        invalid(
            """
            import torch

            print("training on", torch.cuda.get_device_name(0))
            """,
            findings=(
                Expected(
                    3, 22, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA; remove it or guard it"
                ),
            ),
        ),
    ),
    valid=lambda: (
        *threshold_device_valid(),
        *dot_cuda_argument_valid(),
        *other_guard_valid(),
        *off_xla_valid(),
        valid(
            """
            import torch.nn as nn

            bn_types = (nn.BatchNorm1d, nn.BatchNorm2d, nn.SyncBatchNorm)


            def split_bn(layer):
                return [m for m in layer.children() if isinstance(m, bn_types)]


            def is_sync(m):
                return type(m) is nn.SyncBatchNorm or issubclass(type(m), (nn.SyncBatchNorm,))
            """,
            note="SyncBatchNorm named only in class tests, directly or through a tuple bound to a name",
        ),
        valid(
            """
            from torch.nn import SyncBatchNorm as SBN

            def frozen(m):
                return isinstance(m, SBN)
            """,
            target="sagemaker",
            note="SyncBatchNorm through an alias, only in a class test (sagemaker)",
        ),
        valid(
            """
            import torch

            has_native_amp = False
            try:
                if getattr(torch.cuda.amp, "autocast") is not None:
                    has_native_amp = True
            except AttributeError:
                pass
            print(hasattr(torch.cuda, "amp"))
            """,
            note="an attribute probe runs on every build",
        ),
        valid(
            """
            import torch

            print(torch.__version__)
            """,
        ),
        valid(
            """
            import time
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model.to(device)
            if device.type == "cuda":
                start = torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
            else:
                start = time.time()
            """,
            """
            import time
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            model.to(device)
            if device.type == "cuda":
                start = torch.cuda.Event(enable_timing=True)
                xm.wait_device_ops()
                start.record()
            else:
                start = time.time()
            """,
            note="under a check of the picked device that stays (CUDA-event timing): never runs on XLA",
        ),
        valid(
            """
            import torch as th

            dev = th.device("cuda" if th.cuda.is_available() else "cpu")
            if dev.type == "cuda":
                th.cuda.synchronize()
                stream = th.cuda.Stream()
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            dev = xm.xla_device()
            if dev.type == "cuda":
                xm.wait_device_ops()
                stream = th.cuda.Stream()
            """,
            target="sagemaker",
            note="under a kept check of the picked device, through an alias (sagemaker)",
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available() and args.verbose:
                print(torch.cuda.get_device_name(0))
            """,
            target="sagemaker",
            note="under-cuda-check-sagemaker",
        ),
        valid(
            """
            import torch

            tf32 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


            def capability():
                if not torch.cuda.is_available():
                    return None
                return torch.cuda.get_device_capability()
            """,
            note="behind a short-circuit or an early return on a kept availability check: never runs on XLA",
        ),
        valid(
            """
            import torch

            num_gpus = torch.cuda.device_count()
            if num_gpus > 1:
                raise SystemExit("start the script with torchrun for several GPUs")
            if torch.cuda.is_bf16_supported():
                print("this GPU supports bfloat16: pass --bf16")
            """,
            note="a count and a bfloat16 check whose answers on XLA change nothing (XLA511)",
        ),
        valid(
            """
            import torch


            def main(tf32: bool = True):
                if tf32 and not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8):
                    print("TF32 needs an Ampere GPU")
                    tf32 = False
            """,
            note="a capability read under a negated availability check in an and: never runs on XLA",
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available():
                device_type = "cuda"
            else:
                device_type = "cpu"
            device = torch.device(device_type)
            if device_type == "cuda":
                print(torch.cuda.get_device_name(0))


            class Trainer:
                def __init__(self, model, with_cuda=True):
                    self.model = model.to(device)
                    if with_cuda and torch.cuda.device_count() > 1:
                        print("Using %d GPUs" % torch.cuda.device_count(), torch.cuda.get_device_name(1))
                        self.model = torch.nn.DataParallel(self.model)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device_type = "xla"
            device = torch.device(device_type)
            if device_type == "cuda":
                print(torch.cuda.get_device_name(0))


            class Trainer:
                def __init__(self, model, with_cuda=True):
                    self.model = model.to(device)
                    if with_cuda and torch.cuda.device_count() > 1:
                        print("Using %d GPUs" % torch.cuda.device_count(), torch.cuda.get_device_name(1))
                        self.model = torch.nn.DataParallel(self.model)
            """,
            note="under a test the tool knows is False on XLA: a CUDA check XLA105 reports False, a count over 1",
        ),
        valid(
            """
            import torch

            num_gpus = torch.cuda.device_count()
            if num_gpus > 1 and torch.distributed.is_available():
                print(torch.cuda.get_device_name(num_gpus - 1))
            """,
            target="sagemaker",
            note="under a count over 1 in an and, through a name (sagemaker)",
        ),
        valid(
            """
            import torch

            log_timings = torch.cuda.is_available()


            def timed(closure, log_timings=True):
                log_timings = log_timings and torch.cuda.is_available()
                if log_timings:
                    start = torch.cuda.Event(enable_timing=True)
                result = closure()
                if log_timings:
                    print(start.elapsed_time(torch.cuda.Event()))
                return result


            def later():
                if log_timings:
                    print(torch.cuda.get_device_name(0))
            """,
            note="under a name whose last store makes it False on XLA, in the function or at module level",
        ),
        valid(
            """
            import torch


            class Trainer:
                def __init__(self, model):
                    self.model = model

                def parallelize(self):
                    return list(range(torch.cuda.device_count()))


            Trainer(torch.nn.Linear(8, 2))
            """,
            note="a count in a method that nothing in a script no other file imports names: a note (XLA511)",
        ),
    ),
    invalid=lambda: (
        *threshold_device_invalid(),
        *(
            invalid(
                """
                import torch
                from transformers.utils import is_torch_cuda_available
                from accelerate.utils import is_cuda_available as cuda_ok


                def describe():
                    info = {}
                    if is_torch_cuda_available():
                        info["GPU type"] = torch.cuda.get_device_name()
                    if cuda_ok():
                        info["GPU memory"] = torch.cuda.mem_get_info()[1]
                    info["free"] = torch.cuda.mem_get_info()[0]
                    return info
                """,
                target=target,
                alias=True,
                note=f"behind-a-library-availability-check-{target}",
                findings=(Expected(12, 20, "`torch.cuda.mem_get_info` raises without CUDA"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        *dot_cuda_argument_invalid(),
        *other_guard_invalid(),
        *off_xla_invalid(),
        invalid(
            """
            import torch

            flag = torch.cuda.is_available()
            for flag in [True, False]:
                if flag:
                    print(torch.cuda.get_device_name(0))
            """,
            note="under a name a loop stores again after the store that made it False: runs on XLA",
            findings=(Expected(6, 15, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA"),),
        ),
        invalid(
            """
            import torch


            def gpus():
                return list(range(torch.cuda.device_count()))
            """,
            target="sagemaker",
            note="a count in a function of a module that does nothing when run (others import it): an error (sagemaker)",
            findings=(Expected(5, 23, "count the XLA devices with xm.xrt_world_size()"),),
        ),
        invalid(
            """
            import torch


            class Trainer(Base):
                def parallelize(self):
                    return list(range(torch.cuda.device_count()))


            class Helper:
                def gpus(self):
                    return list(range(torch.cuda.device_count()))


            def main():
                print(Helper().gpus())


            if __name__ == "__main__":
                main()
            """,
            note="a count in a method a base class may call, or in one the script calls: an error",
            findings=(
                Expected(6, 27, "`torch.cuda.device_count()` is 0 on an XLA host"),
                Expected(11, 27, "`torch.cuda.device_count()` is 0 on an XLA host"),
            ),
        ),
        invalid(
            """
            import torch

            tf32 = torch.cuda.get_device_capability()[0] >= 8 and torch.cuda.is_available()


            def name():
                if not torch.cuda.is_available():
                    print("no CUDA")
                return torch.cuda.get_device_name(0)
            """,
            note="before the availability check, or after an if that does not leave: runs on XLA",
            findings=(
                Expected(3, 8, "`torch.cuda.get_device_capability` is CUDA-only and raises without CUDA"),
                Expected(9, 12, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA"),
            ),
        ),
        invalid(
            """
            import torch


            def timed(closure, log_timings=True):
                if log_timings:
                    start = torch.cuda.Event(enable_timing=True)
                log_timings = log_timings and torch.cuda.is_available()
                if verbose:
                    log_timings = True
                if log_timings:
                    print(torch.cuda.get_device_name(0))
                return closure()
            """,
            note="under a flag stored after the test, or under a store that an if may replace: runs on XLA",
            findings=(
                Expected(6, 17, "`torch.cuda.Event` times CUDA streams and raises without CUDA"),
                Expected(11, 15, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA"),
            ),
        ),
        invalid(
            """
            import torch


            def describe(device, with_cuda):
                if device == "cuda":
                    print(torch.cuda.get_device_name(0))
                if with_cuda or torch.cuda.device_count() > 1:
                    print("Using %d GPUs" % torch.cuda.device_count())
            """,
            note="under a test XLA105 cannot say is False, or one an or keeps open: runs on XLA",
            findings=(
                Expected(6, 15, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA"),
                Expected(8, 33, "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device)"),
            ),
        ),
        invalid(
            """
            import torch


            def describe(device, with_cuda):
                if device == "cuda":
                    print(torch.cuda.get_device_name(0))
                if with_cuda or torch.cuda.device_count() > 1:
                    print("Using %d GPUs" % torch.cuda.device_count())
            """,
            target="sagemaker",
            note="under a test that may be True on XLA (sagemaker)",
            findings=(
                Expected(6, 15, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA"),
                Expected(8, 33, "count the XLA devices with xm.xrt_world_size()"),
            ),
        ),
        invalid(
            """
            import torch

            print(torch.cuda.get_device_name(0))
            """,
            findings=(
                Expected(
                    3, 7, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA; remove it or guard it"
                ),
            ),
        ),
        invalid(
            """
            import torch

            print(torch.cuda.memory_summary())
            """,
            note="memory-summary-raises",
            findings=(
                Expected(
                    3,
                    7,
                    "`torch.cuda.memory_summary` raises without CUDA (KeyError: its statistics are empty); use "
                    "xm.get_memory_info(device) for XLA memory",
                ),
            ),
        ),
        invalid(
            """
            import torch

            state = torch.cuda.get_rng_state()
            """,
            note="any-other-torch-cuda-api",
            findings=(Expected(3, 9, "`torch.cuda.get_rng_state` is CUDA-only; remove it or guard it"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import device_count

            ngpus = device_count()
            batch_size = 256 // ngpus
            """,
            alias=True,
            findings=(
                Expected(
                    4,
                    9,
                    "`device_count()` is 0 on an XLA host (no CUDA device): `256 // ngpus` raises ZeroDivisionError; "
                    "count the XLA devices with xr.world_size() (one device per process: 1)",
                ),
            ),
        ),
        invalid(
            """
            import torch


            def setup(args):
                args.n_gpu = torch.cuda.device_count()
                if args.n_gpu == 0:
                    raise SystemExit("no GPU found")
                args.train_batch_size = args.per_gpu_batch_size * args.n_gpu
                assert torch.cuda.is_bf16_supported(), "needs bfloat16"
            """,
            note="a count that stops the script or computes a batch size; a bfloat16 check in an assert",
            findings=(
                Expected(
                    5,
                    18,
                    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `args.n_gpu == 0` "
                    "is True there, and the branch it takes stops the script",
                ),
                Expected(
                    9,
                    12,
                    "`torch.cuda.is_bf16_supported()` is False on an XLA host (no CUDA device): `assert "
                    'torch.cuda.is_bf16_supported(), "needs bfloat16"` fails there (AssertionError); XLA devices '
                    "compute in bfloat16",
                ),
            ),
        ),
        invalid(
            """
            import torch

            gpus = list(range(torch.cuda.device_count()))
            """,
            target="sagemaker",
            note="a list of devices made from the count (sagemaker)",
            findings=(Expected(3, 19, "count the XLA devices with xm.xrt_world_size()"),),
        ),
        invalid(
            """
            import torch

            start = torch.cuda.Event(enable_timing=True)
            """,
            note="event-timing",
            findings=(Expected(3, 9, "xm.wait_device_ops() and time.perf_counter()"),),
        ),
        invalid(
            """
            import torch.nn as nn

            bn_types = (nn.BatchNorm2d, nn.SyncBatchNorm)
            norm = bn_types[1](64)
            """,
            note="a tuple of classes that builds one of them",
            findings=(Expected(3, 29, "`nn.SyncBatchNorm` is torch's SyncBatchNorm, which takes only CUDA and XPU"),),
        ),
        invalid(
            """
            from torch.nn import SyncBatchNorm as SBN

            layer = SBN(64)
            is_sync = isinstance(layer, SBN)
            """,
            target="sagemaker",
            alias=True,
            note="a built SyncBatchNorm through an alias (sagemaker), its class test left alone",
            findings=(Expected(3, 9, "`SBN` is torch's SyncBatchNorm"),),
        ),
    ),
)


@on_references(CUDA_API, names=frozenset(CUDA_ONLY))
def _cuda_only_api(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    from codemods.cuda_only.rules.null_streams import null_stream
    from codemods.cuda_only.rules.runtime_references import goes_with_device_call

    facts = ctx.facts.cuda_only
    if goes_with_device_call(ctx, original) or original in facts.guarded_cuda or original in facts.class_tests:
        return updated
    answer = ctx.facts.cuda_only.cuda_answers.get(original)  # type: ignore[call-overload]  # a reference is an expression
    if answer is None and null_stream(ctx, original, qualified) is None:  # torch.cuda.stream(None): XLA502's
        _report(ctx, original, f"`{ctx.code(original)}` {ctx.target.advice(CUDA_ONLY[qualified].advice)}")
    elif answer is not None and answer.effect == "breaks":
        _breaking_answer(ctx, original, qualified, answer)
    return updated


def _breaking_answer(ctx: Context[Facts], original: cst.CSTNode, qualified: str, answer: Answer) -> None:
    """``torch.cuda.device_count()`` (0 on an XLA host) or ``is_bf16_supported()`` (False)
    where the answer breaks the script (cuda_answers.py)."""
    head = answer.heading(ctx.code(original), qualified)
    if answer.advice:
        ctx.report(CUDA_API, original, f"{head}; {answer.advice}")
    elif qualified == "torch.cuda.device_count":
        ctx.report(
            CUDA_API,
            original,
            f"{head}; count the XLA devices with {ctx.target.api('world_size').spelled}() (one device per process: 1)",
        )
    else:
        ctx.report(
            CUDA_API,
            original,
            f"{head}; XLA devices compute in bfloat16 (TPU): choose the precision without asking CUDA",
        )


@on_references(CUDA_API, modules=("torch.cuda.",), unhooked=True)
def _other_cuda_api(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    """Any other torch.cuda API no rule looks at, so no CUDA call is left unmentioned."""
    from codemods.cuda_only.rules.runtime_references import goes_with_device_call

    if (
        handled_elsewhere(qualified)
        or original in ctx.facts.cuda_only.guarded_cuda
        or goes_with_device_call(ctx, original)
        or _probed(ctx)
    ):
        return updated
    _report(ctx, original, f"`{ctx.code(original)}` is CUDA-only; remove it or guard it")
    return updated


def _report(ctx: Context[Facts], original: cst.CSTNode, message: str) -> None:
    """The finding; held, in a module-level function of a file that other files of the run
    import and that its own file never names again, until the run's files show whether they
    call it only under a CUDA availability check (cuda_only/held_conditions.py)."""
    import libcst as cst

    from codemods.cuda_only.held_conditions import StandsUnlessCalledUnderCuda

    ancestors = ctx.ancestors
    function = ancestors[1] if len(ancestors) > 1 and type(ancestors[0]) is cst.Module else None
    if (
        type(function) is cst.FunctionDef
        and ctx.facts.project.context.imported_in_run()
        and function.name.value in ctx.facts.cuda_only.unnamed_functions
    ):
        ctx.report(CUDA_API, original, message, held=StandsUnlessCalledUnderCuda(function.name.value))
    else:
        ctx.report(CUDA_API, original, message)


def _probed(ctx: Context[Facts]) -> bool:
    """The reference being left is the object of ``getattr(x, name)`` or ``hasattr(x, name)``:
    reading a module's attribute works on every build of torch, with or without CUDA."""
    import libcst as cst

    ancestors = ctx.ancestors
    if len(ancestors) < 3 or type(ancestors[-2]) is not cst.Arg or type(ancestors[-3]) is not cst.Call:
        return False
    call = ancestors[-3]
    return (
        type(call.func) is cst.Name
        and call.func.value in ("getattr", "hasattr")
        and bool(call.args)
        and call.args[0] is ancestors[-2]
    )
