"""The functions that still take the rank or world size from RANK/LOCAL_RANK/WORLD_SIZE once
converted (distributed/env_ranks.py), which XLA603's finding names: torch_xla.launch sets none of
those variables.  The reads XLA602 ports, writes of the variables and other variables do not count."""

from __future__ import annotations

import textwrap

import pytest

from codemods import convert_source
from codemods.distributed.env_ranks import env_rank_readers

TARGETS = ["2.9", "sagemaker"]


def _readers(text: str, loops_only: bool = False) -> tuple[tuple[str, str], ...]:
    return env_rank_readers(textwrap.dedent(text), loops_only)


def test_reads_of_every_form_and_their_callers() -> None:
    text = """
        import os
        from os import environ, getenv


        def world():
            return int(os.environ["RANK"]), int(os.environ.get("WORLD_SIZE", 1))


        def local():
            return int(getenv("LOCAL_RANK", 0)), "LOCAL_WORLD_SIZE" in environ


        def launched():
            return any(v in os.environ for v in ["SLURM_PROCID", "RANK"])


        def setup(args):
            args.rank, args.world_size = world()


        def main(args):
            setup(args)
    """
    assert _readers(text) == (
        ("launched", "RANK"),
        ("local", "LOCAL_RANK, LOCAL_WORLD_SIZE"),
        ("main", "RANK, WORLD_SIZE through `setup`"),
        ("setup", "RANK, WORLD_SIZE through `world`"),
        ("world", "RANK, WORLD_SIZE"),
    )
    # A script's own reads that the rank rules port are left out there: only the loop.
    assert _readers(text, loops_only=True) == (("launched", "RANK"),)


def test_writes_other_variables_and_no_environment_are_not_reads() -> None:
    text = """
        import os


        def export(rank):
            os.environ["RANK"] = str(rank)
            os.environ.update({"WORLD_SIZE": "1"})


        def slurm():
            return int(os.environ["SLURM_PROCID"])


        def names():
            return ("RANK", "WORLD_SIZE")
    """
    assert _readers(text) == ()
    assert env_rank_readers("def broken(:\n    os.environ['RANK']\n") == ()


@pytest.mark.parametrize("target", TARGETS)
def test_a_rank_the_rank_rules_port_gives_no_note(target: str) -> None:
    source = textwrap.dedent(
        """
        import os

        import torch.distributed as dist


        def main():
            rank = int(os.environ["RANK"])
            for v in ("SLURM_PROCID", "SLURM_NTASKS"):
                if v in os.environ:
                    print(os.environ[v])
            dist.init_process_group("nccl")


        if __name__ == "__main__":
            main()
        """
    )
    findings = [f for f in convert_source(source, target=target).findings if f.rule == "XLA603"]
    assert findings and all("main guard's code" in f.message for f in findings)
    assert not [f for f in findings if "does not set" in f.message], findings
