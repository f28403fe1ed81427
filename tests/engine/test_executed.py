"""Executed: each form the tool writes for torch_xla 2.9 runs there (CPU, PJRT_DEVICE=CPU).

Small CUDA scripts, one per form, are converted for the 2.9 target; each output must hold
the target table's spelling of what it ports (so the forms run here are the ones the tool
writes), and runs: the device, the step barrier and optimizer step, xm.save, the loader,
autocast, the gradient scaler, the XLA FSDP wrapper, torch.compile with openxla (in one
child process), and torch_xla.launch with the xla:// process group (a script of its own,
world size 1).  The fixtures' runs (tests/*/test_executed.py) check training; this checks
that every form is callable as written.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.targets import TARGETS
from tests.support.executed import run_command, run_environment
from tests.support.fixtures import output_text

pytestmark = pytest.mark.executed

TARGET = TARGETS["2.9"]
HEADER = "import torch\nimport torch.nn as nn\n"

# name -> (CUDA source defining run(), the concepts whose 2.9 spelling its output holds)
FORMS = {
    "steps": (
        """
        def run():
            device = torch.device("cuda")
            model = nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(3):
                loss = model(torch.randn(8, 4).to(device)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            torch.save(model.state_dict(), "model.pt")
            return {"device": device.type, "saved": sorted(torch.load("model.pt")), "loss": loss.item()}
        """,
        ("device", "sync", "optimizer_step", "save"),
    ),
    "loader": (
        """
        from torch.utils.data import DataLoader, TensorDataset

        def run():
            device = torch.device("cuda")
            batches = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 2)), batch_size=4)
            model = nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            seen = []
            for x, y in batches:
                x, y = x.to(device), y.to(device)
                loss = (model(x) - y).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                seen.append(x.device.type)
            return {"batches": seen}
        """,
        ("mp_device_loader",),
    ),
    "autocast": (
        """
        def run():
            device = torch.device("cuda")
            model = nn.Linear(4, 2).to(device)
            with torch.cuda.amp.autocast():
                out = model(torch.randn(8, 4).to(device))
            return {"dtype": str(out.dtype), "device": out.device.type}
        """,
        ("autocast",),
    ),
    "scaler": (
        """
        def run():
            device = torch.device("cuda")
            model = nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.cuda.amp.GradScaler()
            before = model.weight.detach().cpu().clone()
            for step in range(2):
                loss = model(torch.randn(8, 4).to(device)).pow(2).mean()
                optimizer.zero_grad()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            return {"scale": scaler.get_scale(), "stepped": not torch.equal(before, model.weight.detach().cpu())}
        """,
        ("grad_scaler",),
    ),
    "fsdp": (
        """
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        def run():
            device = torch.device("cuda")
            model = FSDP(nn.Linear(4, 2).to(device))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(2):
                loss = model(torch.randn(8, 4).to(device)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            return {"wrapper": type(model).__name__, "loss": loss.item()}
        """,
        ("fsdp",),
    ),
    "compile": (
        """
        def run():
            device = torch.device("cuda")
            model = torch.compile(nn.Linear(4, 2).to(device))
            out = model(torch.randn(8, 4).to(device))
            return {"device": out.device.type, "shape": list(out.shape)}
        """,
        (),
    ),
}

LAUNCHED = """
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP


    def worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)
        model = DDP(nn.Linear(4, 2).cuda(rank), device_ids=[rank])
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            loss = model(torch.randn(8, 4).cuda(rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"PROCESS_GROUP {dist.get_backend()} {dist.get_world_size()} {dist.get_rank()} {loss.item()}")


    if __name__ == "__main__":
        world_size = torch.cuda.device_count()
        mp.spawn(worker, args=(world_size,), nprocs=world_size)
    """

RUNNER = """
import importlib, json, sys
sys.path.insert(0, ".")
for name in sys.argv[1:]:
    print("FORM", name, json.dumps(importlib.import_module(f"form_{name}").run()), flush=True)
"""


def converted(source: str) -> str:
    return output_text(convert_source(HEADER + textwrap.dedent(source), target=TARGET.name))


@pytest.fixture(scope="module")
def forms(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("forms")
    outputs = {name: converted(source) for name, (source, _) in FORMS.items()}
    outputs["launched"] = converted(LAUNCHED)
    for name, text in outputs.items():
        (folder / f"form_{name}.py").write_text(text)
    return folder, outputs


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_form_is_written_in_the_target_spelling(forms: tuple[Path, dict[str, str]], name: str) -> None:
    _, outputs = forms
    for concept in FORMS[name][1]:
        assert f"{TARGET.api(concept).spelled}(" in outputs[name], (concept, outputs[name])
    if name == "autocast":
        assert TARGET.xla_autocast in outputs[name]
    if name == "compile":
        assert f'backend="{TARGET.compile_backend}"' in outputs[name]


def test_every_written_form_runs_on_torch_xla_2_9(forms: tuple[Path, dict[str, str]]) -> None:
    folder, outputs = forms
    output = run_command([sys.executable, "-c", RUNNER, *sorted(FORMS)], folder, run_environment(PJRT_DEVICE="CPU"))
    results = {
        line.split()[1]: json.loads(line.split(" ", 2)[2]) for line in output.splitlines() if line.startswith("FORM ")
    }
    assert sorted(results) == sorted(FORMS), output
    assert results["steps"]["device"] == "xla" and results["steps"]["saved"] == ["bias", "weight"]
    assert results["loader"]["batches"] == ["xla"] * 4
    assert results["autocast"] == {"dtype": "torch.bfloat16", "device": "xla"}
    assert results["scaler"]["stepped"] and results["scaler"]["scale"] > 0
    assert results["fsdp"]["wrapper"] == "XlaFullyShardedDataParallel"
    assert results["compile"] == {"device": "xla", "shape": [8, 2]}
    for name in ("steps", "fsdp"):
        assert math.isfinite(results[name]["loss"]), name


def test_the_launched_process_group_runs_on_torch_xla_2_9(forms: tuple[Path, dict[str, str]]) -> None:
    folder, outputs = forms
    assert f"{TARGET.api('launch').spelled}(" in outputs["launched"]
    assert 'dist.init_process_group("xla", init_method="xla://")' in outputs["launched"]
    output = run_command([sys.executable, "form_launched.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    groups = [line.split() for line in output.splitlines() if line.startswith("PROCESS_GROUP ")]
    assert [group[1:4] for group in groups] == [["xla", "1", "0"]], output
