"""The catalogue of rules: code, summary, and whether the tool fixes it or only reports.

Families follow the pipeline's concerns: XLA0 imports and cross-file notes, XLA1 device,
XLA2 optimizer and mixed precision, XLA3 step barriers and loaders, XLA4 checkpoints,
XLA5 CUDA runtime calls, XLA6 distributed, XLA9 torch_xla release names.  A rule with
``fixable=True`` may still report a case it cannot fix; then the finding says so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    fixable: bool


RULES: tuple[Rule, ...] = (
    Rule("XLA001", "add-import", "Add the torch_xla imports that rewritten code uses", True),
    Rule("XLA002", "remove-stale-import", "Remove an import that a rewrite left unused", True),
    Rule("XLA003", "cross-file", "Setup that comes from another file must be converted there", False),
    Rule("XLA101", "cuda-device", "CUDA device (torch.device('cuda'), 'cuda:N' strings) becomes the XLA device", True),
    Rule("XLA102", "dot-cuda", "`.cuda()` becomes `.to(<XLA device>)`", True),
    Rule("XLA103", "integer-device", "An integer CUDA device index used as a device becomes the XLA device", True),
    Rule("XLA104", "cuda-available-device", "`torch.cuda/accelerator.is_available()` that picks the device: the XLA device is always there", True),
    Rule("XLA105", "cuda-check", "A CUDA check that stays (`is_cuda`, `device == 'cuda'`, `torch.cuda.is_available()`) is False on XLA", False),
    Rule("XLA106", "set-device", "`torch.cuda.set_device()` is removed: one XLA device per process", True),
    Rule("XLA107", "cuda-tensor-type", "Legacy `torch.cuda.FloatTensor(...)` constructors create the tensor on the XLA device", True),
    Rule("XLA201", "optimizer-step", "`optimizer.step()` becomes `xm.optimizer_step(optimizer)`", True),
    Rule("XLA202", "amp", "CUDA mixed precision (autocast, GradScaler) is not ported by this version", False),
    Rule("XLA203", "optimizer-before-move", "An optimizer built before its model moves to the XLA device gets the moved parameters", True),
    Rule("XLA301", "training-loop-barrier", "A training loop ends every iteration with the step barrier", True),
    Rule("XLA302", "device-loader", "A loader that feeds the XLA device is wrapped in MpDeviceLoader", True),
    Rule("XLA303", "eval-loop-barrier", "An evaluation loop over the device ends every iteration with the step barrier", True),
    Rule("XLA304", "closure-barrier", "An optimizer closure (LBFGS) ends with the step barrier", True),
    Rule("XLA401", "xla-save", "`torch.save` becomes `xm.save` (moves tensors to the CPU first)", True),
    Rule("XLA402", "save-whole-module", "Saving a whole module pickles its device tensors: save its state_dict()", False),
    Rule("XLA403", "load-map-location", "`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead", True),
    Rule("XLA501", "cuda-synchronize", "`torch.cuda.synchronize()` becomes `xm.wait_device_ops()`", True),
    Rule("XLA502", "cuda-no-effect", "CUDA-only setting with no effect on XLA (empty_cache, cudnn flags, pin_memory)", False),
    Rule("XLA503", "cuda-memory-stats", "CUDA memory statistics read 0 on XLA: use xm.get_memory_info(device)", False),
    Rule("XLA504", "cuda-oom", "`torch.cuda.OutOfMemoryError` is never raised on XLA", False),
    Rule("XLA505", "cuda-seed", "CUDA RNG seeding does not seed the XLA device: use xm.set_rng_state(seed)", False),
    Rule("XLA506", "cuda-api", "CUDA-only API with no XLA equivalent", False),
    Rule("XLA601", "distributed", "Multi-GPU code (DataParallel, DDP, NCCL, mp.spawn) is not ported by this version", False),
    Rule("XLA901", "xla-release-names", "torch_xla names of another release become the target's names", True),
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def matches(code: str, patterns: tuple[str, ...]) -> bool:
    """True if ``code`` is selected by any pattern: a full code or a prefix (XLA1, ALL)."""
    return any(p == "ALL" or code.startswith(p) for p in patterns)


@dataclass(frozen=True)
class RuleSelection:
    """Which rules are on: ``select`` prefixes (default all), minus ``ignore`` prefixes."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()

    def enabled(self, code: str) -> bool:
        return matches(code, self.select) and not matches(code, self.ignore)

    def unknown_patterns(self) -> list[str]:
        return [
            p
            for p in self.select + self.ignore
            if p != "ALL" and not any(code.startswith(p) for code in RULES_BY_CODE)
        ]
