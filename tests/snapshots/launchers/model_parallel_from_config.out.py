"""A launcher that reads part of its job configuration at run time: what depends on those
values is reported as not checked, the rest is still checked."""
import json
import sys

import sagemaker
from sagemaker.pytorch import PyTorch

with open(sys.argv[1]) as handle:
    config = json.load(handle)

smp_options = dict(enabled=True, parameters=dict(pipeline_parallel_degree=config["partitions"], microbatches=8))
mpi_options = {"enabled": True, "processes_per_host": 8, **config.get("mpi", {})}


def estimator(instance_type):
    return PyTorch(
        entry_point="train_gpt.py",
        role=sagemaker.get_execution_role(),
        instance_type=instance_type,
        instance_count=config["nodes"],
        framework_version="1.13.1",
        py_version="py39",
        distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options},
    )


estimator(config["instance_type"]).fit()
