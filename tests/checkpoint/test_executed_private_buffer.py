"""Executed: a save into an in-memory buffer that the same process reads back (DeiT's
``_load_checkpoint_for_ema``: ``buf = io.BytesIO(); torch.save(state, buf); buf.seek(0);
torch.load(buf)``) stays ``torch.save`` in a multi-process script (checkpoint/private_files.py):
converted and started by torch_xla.launch with two CPU devices (torch_xla 2.9), every process loads
its state back.  The negative control, the port's old form (``xm.save`` into the buffer): it writes on
the master only, and the other process reads an empty buffer (EOFError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import run_script

pytestmark = pytest.mark.executed

SCRIPT = """\
import io

import torch
import torch.distributed as dist


def copy_state(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer)


def main():
    dist.init_process_group("nccl")
    model = torch.nn.Linear(2, 2).cuda()
    try:
        state = copy_state(model)
        said = f"rank {dist.get_rank()} loaded {sorted(state)}"
    except EOFError:
        said = f"rank {dist.get_rank()} read an empty buffer"
    with open(f"rank{dist.get_rank()}.txt", "w") as out:  # (two processes' prints can share a line)
        out.write(said)


if __name__ == "__main__":
    main()
"""
KEPT = "    torch.save(model.state_dict(), buffer)\n"


def _run(folder: Path, source: str) -> list[str]:
    """What each of the two processes said, in rank order."""
    (folder / "train.py").write_text(source)
    run_script(folder, "train.py", runner=False, env={"CPU_NUM_DEVICES": "2"})
    return [(folder / f"rank{rank}.txt").read_text() for rank in range(2)]


def test_a_buffer_read_back_in_every_process_keeps_torch_save(tmp_path: Path) -> None:
    converted = convert_source(SCRIPT.encode(), target="2.9")
    assert isinstance(converted.output, bytes)
    output = converted.output.decode()
    assert KEPT in output and "xm.save" not in output
    assert "torch_xla.launch(" in output
    assert not [f for f in converted.findings if f.rule in ("XLA401", "XLA403")]
    said = _run(tmp_path, output)
    assert said == ["rank 0 loaded ['bias', 'weight']", "rank 1 loaded ['bias', 'weight']"], said
    # negative control: xm.save writes on the master only
    (tmp_path / "old").mkdir()
    old = output.replace(KEPT, "    xm.save(model.state_dict(), buffer)\n").replace(
        "import torch_xla.runtime as xr\n", "import torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n", 1
    )
    assert "xm.save" in old and "import torch_xla.core.xla_model as xm" in old
    said = _run(tmp_path / "old", old)
    assert said == ["rank 0 loaded ['bias', 'weight']", "rank 1 read an empty buffer"], said
