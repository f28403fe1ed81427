"""XLA104's cases of an availability check whose only device code is a checkpoint's CUDA
``map_location`` and which also runs a CUDA-only call (``torch.cuda.current_device()``): with an
``else`` that loads on the CPU it stays (False on XLA: the ``else`` loads, and ``load_state_dict``
copies into the model wherever it is; XLA105's warning); with no such ``else``, or with other
device code under it, it stays with an error (device/analysis.py, ``_loads_without_cuda``). And a
pinning flag whose code reads another accelerator's index (``torch.xpu.current_device()``, torch's
DataLoader): as CUDA's, a runtime answer stored picks no device."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_RESUME = """
    import torch


    def resume(model, filename):
        if torch.cuda.is_available():
            device_id = torch.cuda.current_device()
            checkpoint = torch.load(filename, map_location=lambda storage, loc: storage.cuda(device_id))
        else:
            checkpoint = torch.load(filename, map_location="cpu")
        model.load_state_dict(checkpoint["state_dict"])
    """

_OWN_LOADER = """
    import torch


    class Runner:
        def resume(self, filename):
            if torch.cuda.is_available():
                device_id = torch.cuda.current_device()
                checkpoint = self.load_checkpoint(filename, map_location=lambda storage, loc: storage.cuda(device_id))
            else:
                checkpoint = self.load_checkpoint(filename)
            return checkpoint
    """

# torch's DataLoader pinning thread: the accelerator's index, read under the pinning flag, picks no device.
_PINNING = """
    import threading

    import torch


    class WorkerIter:
        def __init__(self, loader):
            self._pin_memory = loader.pin_memory and torch.cuda.is_available()
            self._pin_memory_device = loader.pin_memory_device
            if self._pin_memory:
                if self._pin_memory_device == "xpu":
                    current_device = torch.xpu.current_device()
                else:
                    current_device = torch.cuda.current_device()
                self._thread = threading.Thread(target=print, args=(current_device,))
    """

_BLOCKED = "picks the device, and the code it guards also runs `torch.cuda.current_device`"


def location_guard_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(_RESUME, note="a CUDA load location under a kept check whose else loads on the CPU"),
        valid(
            substituted(
                _RESUME,
                ("map_location=lambda storage, loc: storage.cuda(device_id)", 'map_location=f"cuda:{device_id}"'),
            ),
            target="sagemaker",
            note="the same with a CUDA device string as the location (sagemaker)",
        ),
        valid(_OWN_LOADER, note="the project's own loader, called in the else without the location"),
        valid(_OWN_LOADER, target="sagemaker", note="the project's own loader (sagemaker)"),
        valid(_PINNING, note="a pinning flag whose code reads an accelerator's index (xpu or CUDA): picks no device"),
        valid(_PINNING, target="sagemaker", note="a pinning flag reading an accelerator's index (sagemaker)"),
    )


_NO_ELSE = """
    import torch


    def resume(model, filename):
        if torch.cuda.is_available():
            device_id = torch.cuda.current_device()
            checkpoint = torch.load(filename, map_location=lambda storage, loc: storage.cuda(device_id))
            model.load_state_dict(checkpoint["state_dict"])
    """

_MOVES = """
    import torch


    def resume(model, filename):
        if torch.cuda.is_available():
            device_id = torch.cuda.current_device()
            model.cuda()
            checkpoint = torch.load(filename, map_location=lambda storage, loc: storage.cuda(device_id))
        else:
            checkpoint = torch.load(filename, map_location="cpu")
        model.load_state_dict(checkpoint["state_dict"])
    """

_TO_THE_CPU = ("map_location=lambda storage, loc: storage.cuda(device_id)", 'map_location="cpu"')


def location_guard_invalid_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _NO_ELSE,
            substituted(_NO_ELSE, _TO_THE_CPU),
            note="a CUDA load location under a check with no else: on XLA nothing loads",
            findings=(Expected(5, 8, _BLOCKED),),
        ),
        invalid(
            _MOVES,
            substituted(
                _MOVES,
                ("import torch\n", "import torch\n    import torch_xla.core.xla_model as xm\n"),
                ("model.cuda()", "model.to(xm.xla_device())"),
                _TO_THE_CPU,
            ),
            target="sagemaker",
            note="a check that also moves the model, beside the load (sagemaker)",
            findings=(Expected(6, 8, _BLOCKED),),
        ),
    )
