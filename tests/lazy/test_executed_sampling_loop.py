"""Executed: a diffusion-style sampling loop without autograd that carries its image across
iterations and reads nothing until the end (DALLE2's ``p_sample_loop_ddpm``, audio-diffusion's
pipeline), on torch_xla 2.9 (CPU).  Ported, XLA704 ends every iteration with ``torch_xla.sync()``:
the samples match the eager original's and every graph is one denoising step long.  The negative
control: the same port with XLA704 off makes one graph of all the steps, many times larger."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import eager_and_converted_script, largest_graph, loss_problems

pytestmark = pytest.mark.executed

SAMPLE = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Denoiser(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8))

    def p_sample(self, img, t):
        return img - 0.05 * self.net(img) * (t + 1) / 30

    @torch.no_grad()
    def sample(self, start):
        img = start.to(device)
        for t in reversed(range(30)):
            img = self.p_sample(img, t)
        return img.cpu()


def main():
    torch.manual_seed(0)
    model = Denoiser().to(device)
    for step in range(2):
        img = model.sample(torch.randn(4, 8))
        print(f"step {step} loss {img.pow(2).mean().item()}")


if __name__ == "__main__":
    main()
"""


def test_a_sampling_loop_gets_a_barrier_per_step_and_samples_like_the_original(tmp_path: Path) -> None:
    code, got, want = eager_and_converted_script(tmp_path / "with", "sample.py", SAMPLE)
    assert "            img = self.p_sample(img, t)\n            torch_xla.sync()\n" in code
    assert len(want.losses) == 2
    assert not loss_problems(got, want)
    # The negative control: without XLA704's barrier the 30 steps are one graph.
    kept_code, kept, _ = eager_and_converted_script(
        tmp_path / "without", "sample.py", SAMPLE, RuleSelection(ignore=("XLA704",))
    )
    assert "torch_xla.sync()" not in kept_code
    assert not loss_problems(kept, want)
    assert largest_graph(kept) > 10 * largest_graph(got), (largest_graph(kept), largest_graph(got))
