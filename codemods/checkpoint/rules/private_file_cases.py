"""XLA401's and XLA403's cases of a save into a file only its own process reads back
(checkpoint/private_files.py): an in-memory buffer (DeiT's ``_load_checkpoint_for_ema``, through an
alias of ``io.BytesIO``), a temporary file or a file opened to be read back (``"w+b"``) stays ``torch.save`` in a multi-process script (xm.save
writes on the master only: every other process would read an empty buffer), and its load gets no map
location; a buffer made from given bytes or filled by a download, a file opened only for writing or
opened to be updated (``"r+b"``), or a name that may be a real file, is still a checkpoint."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

PRIVATE_FILES = """
import io
import tempfile
from io import BytesIO as Buffer

import torch
import torch.distributed as dist


def reload_ema(model_ema, checkpoint):
    mem_file = io.BytesIO()
    torch.save(checkpoint, mem_file)
    mem_file.seek(0)
    model_ema._load_checkpoint(mem_file)


def copy_state(model):
    buffer = Buffer()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer)


def through_a_temporary_file(state):
    with tempfile.TemporaryFile() as f:
        torch.save(state, f)
        f.seek(0)
        return torch.load(f)


def through_a_file_read_back(state, path):
    f = open(path, "w+b")
    torch.save(state, f)
    f.seek(0)
    return torch.load(f)


def main():
    dist.init_process_group("nccl")
    model = torch.nn.Linear(2, 2).cuda()
    copy_state(model)
"""

# A buffer that holds given bytes, or a name that is a real file on the other branch: what it loads
# may be a CUDA run's checkpoint, and what it saves is written by every process.
SHARED_FILES = substituted(
    PRIVATE_FILES,
    ("    buffer = Buffer()\n", "    buffer = Buffer() if model is None else open('state.pt', 'wb')\n"),
    ('    f = open(path, "w+b")\n', '    f = open(path, "wb")\n'),
    ("    with tempfile.TemporaryFile() as f:\n", "    with io.BytesIO(state) as f:\n"),
    (
        "def main():\n",
        "def downloaded(client):\n"
        "    buf = io.BytesIO()\n"
        '    client.download_fileobj("bucket", "model.pt", buf)\n'
        "    buf.seek(0)\n"
        "    return torch.load(buf)\n"
        "\n\n"
        "def through_an_existing_file(state, path):\n"
        '    f = open(path, "r+b")\n'
        "    torch.save(state, f)\n"
        "\n\n"
        "def main():\n",
    ),
)

_BACKEND = 'import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)\n'
_XM = "import torch_xla.core.xla_model as xm\n"
# Per target: the imports the port adds (without and with xm.save), the process-group start, the device.
_TARGETS = (
    ("2.9", _BACKEND, _XM + _BACKEND, 'dist.init_process_group("xla", init_method="xla://")', "torch_xla.device()"),
    (
        "sagemaker",
        "import os\n" + _XM + _BACKEND,
        "import os\n" + _XM + _BACKEND,
        'os.environ.setdefault("MASTER_ADDR", "localhost")\n    os.environ.setdefault("MASTER_PORT", "12355")\n'
        '    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())',
        "xm.xla_device()",
    ),
)


def _converted(program: str, imports: str, group: str, device: str, *changes: tuple[str, str]) -> str:
    return substituted(
        program,
        ("import torch.distributed as dist\n", "import torch.distributed as dist\n" + imports),
        ('dist.init_process_group("nccl")', group),
        ("model = torch.nn.Linear(2, 2).cuda()", f"model = torch.nn.Linear(2, 2).to({device})"),
        *changes,
    )


def private_file_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(
            PRIVATE_FILES,
            _converted(PRIVATE_FILES, imports, group, device),
            target=target,
            note=f"saved-into-a-buffer-this-process-reads-back-{target}",
        )
        for target, imports, _, group, device in _TARGETS
    )


def private_file_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            SHARED_FILES,
            _converted(
                SHARED_FILES,
                imports,
                group,
                device,
                ("torch.save(model.state_dict(), buffer)", "xm.save(model.state_dict(), buffer)"),
                ("torch.save(state, f)", "xm.save(state, f)"),
                ("torch.load(buffer)", 'torch.load(buffer, map_location="cpu")'),
                ("torch.load(f)", 'torch.load(f, map_location="cpu")'),
                ("torch.load(buf)", 'torch.load(buf, map_location="cpu")'),
            ),
            target=target,
            note=f"saved-into-a-file-that-may-be-shared-{target}",
            findings=tuple(
                Expected(
                    line + imports.count("\n"),
                    column,
                    "torch.save -> xm.save: moves device tensors to the CPU before saving",
                )
                for line, column in ((18, 5), (25, 9), (32, 5), (46, 5))
            ),
        )
        for target, _, imports, group, device in _TARGETS
    )
