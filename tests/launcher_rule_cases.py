"""Rule cases for launcher scripts (SM1, SM2) and Dockerfiles (SM3): positive, negative and
alias cases (other import spellings of the estimators; other spellings of instructions),
run by tests/test_rules.py like the training-script cases."""

from __future__ import annotations

import textwrap
from functools import partial

from tests.rule_cases import C

L = partial(C, filename="launch.py")
D = partial(C, filename="Dockerfile")

def _i(text: str) -> str:
    """Indented like the case literals below (after a line break, as a literal's closing
    quotes leave its last line indented), so that a case's pieces dedent together."""
    return "\n" + textwrap.indent(textwrap.dedent(text).lstrip("\n"), " " * 8)


SMP = _i("""
    smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2, "ddp": True}}
    mpi_options = {"enabled": True, "processes_per_host": 8}
""")
PYTORCH = _i("from sagemaker.pytorch import PyTorch\n")
MP_JOB = _i("""
    PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
            distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
""")
DLC = _i("FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker")
CUSTOM = """
    FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
    ARG PYTHON_VERSION=3.8
    ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
    ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
    RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
    RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
    RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
    RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
    RUN pip install sagemaker-training
    ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
"""


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


LAUNCHER_CASES = [
    # -- SM100 values that are not in the file ----------------------------------------------
    L("SM100", "positive", PYTORCH + """
        import json

        distribution = json.load(open("dist.json"))
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", distribution=distribution)
        """, note="from-a-config-file"),
    L("SM100", "positive", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8}
        PyTorch(entry_point="train.py", instance_type=args.instance_type,
                distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
        """, note="instance-type-passed-in"),
    L("SM100", "positive", PYTORCH + SMP + """
        PyTorch(entry_point="train.py", instance_type="ml.x9.99xlarge",
                distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
        """, note="unknown-instance-type"),
    L("SM100", "positive", PYTORCH + """
        mpi_options = {"enabled": True, "processes_per_host": 8}
        mpi_options["custom_mpi_options"] = flags
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                              "mpi": mpi_options})
        """, note="changed-after-it-is-built"),
    L("SM100", "negative", PYTORCH + SMP + MP_JOB, note="all-in-the-file"),
    L("SM100", "alias", """
        import sagemaker.pytorch

        sagemaker.pytorch.PyTorch(entry_point="train.py", distribution=make_distribution())
        """),
    # -- SM101 structure --------------------------------------------------------------------
    L("SM101", "positive", """
        from sagemaker.estimator import Estimator

        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        Estimator(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                  distribution={"smdistributed": smp_options, "mpi": {"enabled": True, "processes_per_host": 8}})
        """, """
        from sagemaker.estimator import Estimator

        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        Estimator(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
                  distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": {"enabled": True, "processes_per_host": 8}})
        """, note="flat-form"),
    L("SM101", "positive", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": {"parameters": {"pipeline_parallel_degree": 2}}},
                              "mpi": {"enabled": True, "processes_per_host": 8}})
        """, note="no-enabled"),
    L("SM101", "positive", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}}})
        """, note="no-mpi"),
    L("SM101", "positive", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": {"enabled": True}},
                              "mpi": {"enabled": True, "processes_per_host": 8}})
        """, note="no-parameters"),
    L("SM101", "negative", PYTORCH + SMP + MP_JOB, note="seed-shape"),
    L("SM101", "negative", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": {"enabled": False}}})
        """, note="switched-off"),
    L("SM101", "alias", """
        from sagemaker.estimator import Estimator as Est

        smp = dict(enabled=True, parameters=dict(pipeline_parallel_degree=2))
        Est(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
            distribution=dict(smdistributed=smp, mpi=dict(enabled=True, processes_per_host=8)))
        """, """
        from sagemaker.estimator import Estimator as Est

        smp = dict(enabled=True, parameters=dict(pipeline_parallel_degree=2))
        Est(image_uri="123.dkr.ecr.us-east-1.amazonaws.com/smp:1", instance_type="ml.p3.16xlarge",
            distribution=dict(smdistributed={"modelparallel": smp}, mpi=dict(enabled=True, processes_per_host=8)))
        """, note="dict-calls"),
    # -- SM102 partitions ---------------------------------------------------------------------
    L("SM102", "positive", PYTORCH + """
        smp_options = {
            "enabled": True,
            "parameters": {
                "partitions": 2,  # Required
                "microbatches": 4,
            },
        }
        mpi_options = {"enabled": True, "processes_per_host": 8}
        """ + MP_JOB, PYTORCH + """
        smp_options = {
            "enabled": True,
            "parameters": {
                "pipeline_parallel_degree": 2,  # Required
                "microbatches": 4,
            },
        }
        mpi_options = {"enabled": True, "processes_per_host": 8}
        """ + MP_JOB),
    L("SM102", "positive", PYTORCH + """
        smp_options = {'enabled': True, 'parameters': {'partitions': 2, 'pipeline_parallel_degree': 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8}
        """ + MP_JOB, note="both-given"),
    L("SM102", "negative", PYTORCH + SMP + MP_JOB),
    L("SM102", "negative", """
        from sagemaker.pytorch import PyTorch

        disk = {"partitions": 2}
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", hyperparameters=disk)
        """, note="not-a-distribution"),
    L("SM102", "alias", """
        from sagemaker.tensorflow import TensorFlow as TF

        TF(entry_point="train.py", instance_type="ml.p3.16xlarge",
           distribution={"smdistributed": {"modelparallel": dict(enabled=True, parameters=dict(partitions=2, horovod=True))},
                         "mpi": {"enabled": True, "processes_per_host": 8}})
        """, """
        from sagemaker.tensorflow import TensorFlow as TF

        TF(entry_point="train.py", instance_type="ml.p3.16xlarge",
           distribution={"smdistributed": {"modelparallel": dict(enabled=True, parameters=dict(pipeline_parallel_degree=2, horovod=True))},
                         "mpi": {"enabled": True, "processes_per_host": 8}})
        """, note="tensorflow-dict-call"),
    # -- SM103 model + data parallel -------------------------------------------------------------
    L("SM103", "positive", PYTORCH + SMP + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": True}},
                              "mpi": mpi_options})
        """),
    L("SM103", "negative", PYTORCH + SMP + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"modelparallel": smp_options, "dataparallel": {"enabled": False}},
                              "mpi": mpi_options})
        """, note="dataparallel-off"),
    L("SM103", "negative", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"smdistributed": {"dataparallel": {"enabled": True}}})
        """, note="dataparallel-only"),
    L("SM103", "alias", """
        from sagemaker import pytorch

        strategies = {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}},
                      "dataparallel": {"enabled": True}}
        pytorch.PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                        distribution={"smdistributed": strategies, "mpi": {"enabled": True, "processes_per_host": 8}})
        """),
    # -- SM104 processes_per_host ------------------------------------------------------------------
    L("SM104", "positive", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 16}
        """ + MP_JOB, PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8}
        """ + MP_JOB, note="above-the-gpus"),
    L("SM104", "positive", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True}
        """ + MP_JOB, note="missing"),
    L("SM104", "positive", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 3}}
        mpi_options = {"enabled": True, "processes_per_host": 12}
        """ + MP_JOB, note="degree-does-not-divide-the-gpus"),
    L("SM104", "positive", PYTORCH + SMP + """
        PyTorch(entry_point="train.py", instance_type="ml.c5.18xlarge",
                distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
        """, note="cpu-instance"),
    L("SM104", "negative", PYTORCH + SMP + MP_JOB),
    L("SM104", "negative", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.c5.18xlarge",
                distribution={"mpi": {"enabled": True, "processes_per_host": 36}})
        """, note="plain-mpi-on-cpus"),
    L("SM104", "alias", """
        import sagemaker.huggingface as hf

        instance = "ml.g5.12xlarge"
        hf.HuggingFace(entry_point="train.py", instance_type=instance,
                       distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                     "mpi": {"enabled": True, "processes_per_host": 8}})
        """, """
        import sagemaker.huggingface as hf

        instance = "ml.g5.12xlarge"
        hf.HuggingFace(entry_point="train.py", instance_type=instance,
                       distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                                     "mpi": {"enabled": True, "processes_per_host": 4}})
        """),
    # -- SM105 repeated MCA flag ---------------------------------------------------------------------
    L("SM105", "positive", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8,
                       "custom_mpi_options": "-x NCCL_DEBUG=WARN --mca btl_vader_single_copy_mechanism none -x A=1"}
        """ + MP_JOB, PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8,
                       "custom_mpi_options": "-x NCCL_DEBUG=WARN -x A=1"}
        """ + MP_JOB, note="keeps-the-rest"),
    L("SM105", "positive", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8,
                       "custom_mpi_options": '--mca btl_vader_single_copy_mechanism none '}
        """ + MP_JOB, PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8,
                       "custom_mpi_options": ''}
        """ + MP_JOB, note="only-the-default"),
    L("SM105", "positive", PYTORCH + """
        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge",
                distribution={"mpi": {"enabled": True, "custom_mpi_options": "-mca btl_vader_single_copy_mechanism cma"}})
        """, note="other-value-reported"),
    L("SM105", "negative", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "--mca btl_tcp_if_include eth0"}
        """ + MP_JOB),
    L("SM105", "alias", """
        from sagemaker.tensorflow.estimator import TensorFlow

        TensorFlow(entry_point="train.py", instance_type="ml.p3.16xlarge",
                   distribution=dict(mpi=dict(enabled=True, custom_mpi_options="--mca btl_vader_single_copy_mechanism none -x X=1")))
        """, """
        from sagemaker.tensorflow.estimator import TensorFlow

        TensorFlow(entry_point="train.py", instance_type="ml.p3.16xlarge",
                   distribution=dict(mpi=dict(enabled=True, custom_mpi_options="-x X=1")))
        """),
    # -- SM106 EFA flags -----------------------------------------------------------------------------
    L("SM106", "positive", PYTORCH + SMP + """
        PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge", instance_count=2,
                distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
        """),
    L("SM106", "negative", PYTORCH + """
        smp_options = {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}
        mpi_options = {"enabled": True, "processes_per_host": 8,
                       "custom_mpi_options": "-x FI_EFA_USE_DEVICE_RDMA=1 -x FI_PROVIDER=efa -x RDMAV_FORK_SAFE=1"}
        PyTorch(entry_point="train.py", instance_type="ml.p4d.24xlarge",
                distribution={"smdistributed": {"modelparallel": smp_options}, "mpi": mpi_options})
        """, note="flags-given"),
    L("SM106", "negative", PYTORCH + SMP + MP_JOB, note="no-efa"),
    L("SM106", "alias", """
        from sagemaker.pytorch.estimator import PyTorch as Launcher

        Launcher(entry_point="train.py", instance_type="ml.p3dn.24xlarge",
                 distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"pipeline_parallel_degree": 2}}},
                               "mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "-x FI_PROVIDER=efa"}})
        """),
    # -- SM107 set_device in the training script -------------------------------------------------------
    C("SM107", "positive", """
        import torch
        import smdistributed.modelparallel.torch as smp

        smp.init()
        device = torch.device("cuda")
        """, """
        import torch
        import smdistributed.modelparallel.torch as smp

        smp.init()
        torch.cuda.set_device(smp.local_rank())
        device = torch.device("cuda")
        """),
    C("SM107", "positive", """
        import torch
        import smdistributed.modelparallel.torch as smp

        smp.init()
        torch.cuda.set_device(args.local_rank)
        """, note="another-device"),
    C("SM107", "negative", """
        import torch
        import smdistributed.modelparallel.torch as smp

        smp.init()
        local_rank = smp.local_rank()
        torch.cuda.set_device(local_rank)
        """, note="through-a-name"),
    C("SM107", "negative", """
        import tensorflow as tf
        import smdistributed.modelparallel.tensorflow as smp

        smp.init()
        """, note="tensorflow"),
    C("SM107", "alias", """
        import torch as th
        from smdistributed.modelparallel import torch as smp_torch


        def main():
            smp_torch.init()
            model = build()
        """, """
        import torch as th
        from smdistributed.modelparallel import torch as smp_torch


        def main():
            smp_torch.init()
            th.cuda.set_device(smp_torch.local_rank())
            model = build()
        """),
    # -- SM201 pytorchxla distribution --------------------------------------------------------------------
    L("SM201", "positive", """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        estimator = HuggingFace(
            entry_point="train.py",
            instance_type="ml.p3.16xlarge",
            instance_count=1,
            transformers_version="4.21.1",
            pytorch_version="1.11.0",
            compiler_config=TrainingCompilerConfig(),
        )
        """, """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        estimator = HuggingFace(
            entry_point="train.py",
            instance_type="ml.p3.16xlarge",
            instance_count=1,
            transformers_version="4.21.1",
            pytorch_version="1.11.0",
            compiler_config=TrainingCompilerConfig(),
            distribution={"pytorchxla": {"enabled": True}},
        )
        """),
    L("SM201", "positive", """
        from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

        PyTorch(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                framework_version="1.13.1", compiler_config=TrainingCompilerConfig())
        """, """
        from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

        PyTorch(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                framework_version="1.13.1", compiler_config=TrainingCompilerConfig(), distribution={"pytorchxla": {"enabled": True}})
        """, note="several-instances"),
    L("SM201", "negative", """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        HuggingFace(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=1,
                    transformers_version="4.21.1", pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig())
        """, note="one-gpu"),
    L("SM201", "negative", """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", transformers_version="4.21.1",
                    pytorch_version="1.11.0", compiler_config=TrainingCompilerConfig(),
                    distribution={"pytorchxla": {"enabled": True}})
        """, note="already-there"),
    L("SM201", "alias", """
        import sagemaker.huggingface
        from sagemaker.huggingface.training_compiler.config import TrainingCompilerConfig as Compiler

        compiler = Compiler()
        sagemaker.huggingface.HuggingFace("train.py", instance_type="ml.g5.48xlarge",
                                          transformers_version="4.21.1", pytorch_version="1.11.0",
                                          compiler_config=compiler,)
        """, """
        import sagemaker.huggingface
        from sagemaker.huggingface.training_compiler.config import TrainingCompilerConfig as Compiler

        compiler = Compiler()
        sagemaker.huggingface.HuggingFace("train.py", instance_type="ml.g5.48xlarge",
                                          transformers_version="4.21.1", pytorch_version="1.11.0",
                                          compiler_config=compiler,
                                          distribution={"pytorchxla": {"enabled": True}},)
        """),
    # -- SM202 legacy launcher arrangement -------------------------------------------------------------------
    L("SM202", "positive", """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        HuggingFace(entry_point="train.py", instance_type="ml.p3.8xlarge", instance_count=1,
                    transformers_version="4.11.0", pytorch_version="1.9.0", compiler_config=TrainingCompilerConfig())
        """),
    L("SM202", "negative", """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        hyperparameters = {"n_gpus": 4, "training_script": "train.py"}
        HuggingFace(entry_point="distributed_training_launcher.py", instance_type="ml.p3.8xlarge", instance_count=1,
                    transformers_version="4.17.0", pytorch_version="1.10.2", hyperparameters=hyperparameters,
                    compiler_config=TrainingCompilerConfig())
        """, note="launcher-arrangement"),
    L("SM202", "alias", """
        from sagemaker import huggingface

        huggingface.HuggingFace(entry_point="train.py", instance_type="ml.p3.2xlarge", instance_count=2,
                                transformers_version="4.17.0", pytorch_version="1.10.2",
                                compiler_config=huggingface.TrainingCompilerConfig(debug=False))
        """),
    # -- SM203 what the SDK rejects --------------------------------------------------------------------------
    L("SM203", "positive", """
        from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

        PyTorch(entry_point="train.py", image_uri=my_image, framework_version="1.13.1", instance_type="ml.p3.2xlarge",
                compiler_config=TrainingCompilerConfig())
        """, note="image-uri"),
    L("SM203", "positive", """
        from sagemaker.huggingface import HuggingFace, TrainingCompilerConfig

        HuggingFace(entry_point="train.py", instance_type="ml.p3.16xlarge", transformers_version="4.11.0",
                    pytorch_version="1.9.0", compiler_config=TrainingCompilerConfig(),
                    distribution={"pytorchxla": {"enabled": True}})
        """, note="pytorchxla-too-old"),
    L("SM203", "positive", """
        from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

        PyTorch(entry_point="train.py", instance_type="ml.p3.16xlarge", framework_version="1.13.1",
                compiler_config=TrainingCompilerConfig(), distribution={"torch_distributed": {"enabled": True}})
        """, note="other-distribution"),
    L("SM203", "negative", """
        from sagemaker.pytorch import PyTorch, TrainingCompilerConfig

        PyTorch(entry_point="train.py", image_uri=my_image, instance_type="ml.p3.2xlarge",
                compiler_config=TrainingCompilerConfig(enabled=False))
        """, note="compiler-off"),
    L("SM203", "alias", """
        import sagemaker

        sagemaker.pytorch.PyTorch(entry_point="train.py", image_uri="1.dkr.ecr.us-east-1.amazonaws.com/x:1",
                                  instance_type="ml.p3.2xlarge", framework_version="1.13.1",
                                  compiler_config=sagemaker.pytorch.TrainingCompilerConfig())
        """),
    # -- SM300 Dockerfile values that are not in the file ---------------------------------------------------------
    D("SM300", "positive", """
        ARG BASE_IMAGE
        FROM ${BASE_IMAGE}
        RUN pip install sagemaker-training
        ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
        """),
    D("SM300", "negative", """
        ARG BASE_IMAGE=nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
        FROM ${BASE_IMAGE}
        RUN pip install sagemaker-training
        ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
        """),
    D("SM300", "alias", """
        from 111122223333.dkr.ecr.us-east-1.amazonaws.com/team/base:latest
        env SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
        """, note="private-ecr-base"),
    # -- SM301 base image -------------------------------------------------------------------------------------
    D("SM301", "positive", """
        FROM python:3.8-slim
        RUN pip install sagemaker-training
        ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
        """),
    D("SM301", "negative", DLC + _i("\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"), note="dlc"),
    D("SM301", "negative", """
        FROM python:3.8-slim
        RUN pip install flask
        """, note="not-a-sagemaker-image"),
    D("SM301", "alias", """
        FROM --platform=linux/amd64 ubuntu:20.04 AS base
        FROM base
        RUN pip install sagemaker-training
        ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
        """, note="through-a-stage"),
    # -- SM302 SAGEMAKER_SUBMIT_DIRECTORY -------------------------------------------------------------------------
    D("SM302", "positive", DLC + """
        RUN pip install --no-cache-dir transformers
        ENV PATH="/opt/ml/code:${PATH}"
        """),
    D("SM302", "negative", DLC + """
        ENV PATH="/opt/ml/code:${PATH}"
        ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
        """),
    D("SM302", "negative", _i("# xla-codemod: ignore[SM302]\n") + DLC.lstrip("\n"), note="suppressed-above-the-line"),
    D("SM302", "negative", DLC + """ AS dlc
        ENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
        FROM dlc
        ENV SAGEMAKER_PROGRAM=train.py
        """, note="set-in-the-parent-stage"),
    D("SM302", "alias", """
        from public.ecr.aws/deep-learning-containers/pytorch-training:2.0.0-gpu-py310
        env SAGEMAKER_PROGRAM=train.py
        """, note="public-ecr-lower-case"),
    D("SM302", "positive", DLC + """ AS dlc
        ENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
        FROM ubuntu:20.04
        COPY --from=dlc /opt/ml /opt/ml
        RUN pip install sagemaker-training
        """, note="not-in-the-final-stage"),
    # -- SM303 sagemaker-training ----------------------------------------------------------------------------------
    D("SM303", "positive", _d(CUSTOM).replace("RUN pip install sagemaker-training\n", "")),
    D("SM303", "negative", _d(CUSTOM)),
    D("SM303", "negative", DLC + _i("\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"), note="dlc-has-it"),
    D("SM303", "alias", _d(CUSTOM).replace("RUN pip install sagemaker-training\n",
                                           'RUN ["python3", "-m", "pip", "install", "sagemaker-inference"]\n'),
      note="json-form"),
    # -- SM304 smdistributed wheels ------------------------------------------------------------------------------------
    D("SM304", "positive", _d(CUSTOM).replace("RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}\n",
                                              "")),
    D("SM304", "negative", _d(CUSTOM)),
    D("SM304", "alias", _d(CUSTOM).replace("RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}\n",
                                           "RUN python3 -m pip download ${SMD_MODEL_PARALLEL_URL}\n"),
      note="downloaded-not-installed"),
    # -- SM305 Python tag ------------------------------------------------------------------------------------------------
    D("SM305", "positive", _d(CUSTOM).replace("ARG PYTHON_VERSION=3.8", "ARG PYTHON_VERSION=3.9")),
    D("SM305", "positive", _d(CUSTOM).replace("ARG PYTHON_VERSION=3.8\n", "").replace(
        "python${PYTHON_VERSION} ", "").replace("dataparallel-1.4.0-cp38-cp38", "dataparallel-1.4.0-cp39-cp39"),
      note="wheels-disagree"),
    D("SM305", "negative", _d(CUSTOM)),
    D("SM305", "alias", _d(CUSTOM).replace("ARG PYTHON_VERSION=3.8\n", "").replace(
        "python${PYTHON_VERSION} ", "").replace("RUN pip install sagemaker-training",
                                                "RUN conda install -y python=3.9 && pip install sagemaker-training"),
      note="conda-python"),
    # -- SM306 METIS -------------------------------------------------------------------------------------------------------
    D("SM306", "positive", _d(CUSTOM).replace(" libmetis-dev", "")),
    D("SM306", "negative", _d(CUSTOM)),
    D("SM306", "alias", _d(CUSTOM).replace(" libmetis-dev", "").replace("FROM nvidia/cuda", "FROM nvcr.io/nvidia/cuda"),
      note="ngc-base"),
    D("SM306", "negative", _d(CUSTOM).replace(" libmetis-dev", "").replace(
        "RUN pip install sagemaker-training\n", "RUN pip install sagemaker-training\nARG METIS=metis-5.1.0\n"
        "RUN wget -nv http://glaros.dtc.umn.edu/gkhome/fetch/sw/metis/${METIS}.tar.gz && make install\n"),
      note="built-from-source"),
    # -- SM307 RAPIDS memory manager ------------------------------------------------------------------------------------------
    D("SM307", "positive", _d(CUSTOM).replace(
        "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm\n", "")),
    D("SM307", "negative", _d(CUSTOM)),
    D("SM307", "alias", _d(CUSTOM).replace(
        "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm\n",
        "RUN rm -rf /tmp/*\n").replace("FROM nvidia/cuda:", "FROM public.ecr.aws/nvidia/cuda:"), note="mirrored-base"),
]

# Rules that compare files of one run (an estimator and the Dockerfile of its image):
# rule, kind, files (path -> text); tests/test_launchers.py runs them through the runner.
PYTORCH_IMPORT = "from sagemaker.pytorch import PyTorch\n"
DLC_IMAGE = DLC.strip()
RUN_CASES = [  # texts are dedented by the test
    ("SM308", "positive", {
        "launch.py": PYTORCH_IMPORT + "PyTorch(entry_point='train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',\n"
        "        instance_type='ml.p3.2xlarge')\n",
        "Dockerfile": DLC_IMAGE + "\nCOPY helpers.py /opt/ml/code/\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
    }),
    ("SM308", "positive", {
        "launch.py": PYTORCH_IMPORT + "PyTorch(entry_point='/opt/program/train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/"
        "trainer:1',\n        instance_type='ml.p3.2xlarge')\n",
        "docker/Dockerfile.trainer": DLC_IMAGE + _i("\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
        "docker/Dockerfile.other": DLC_IMAGE + _i("\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
    }),
    ("SM308", "negative", {
        "launch.py": PYTORCH_IMPORT + "PyTorch(entry_point='train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',\n"
        "        instance_type='ml.p3.2xlarge')\n",
        "Dockerfile": DLC_IMAGE + "\nWORKDIR /opt/ml/code\nCOPY train.py helpers.py ./\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
    }),
    ("SM308", "negative", {
        "launch.py": PYTORCH_IMPORT + "PyTorch(entry_point='train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',\n"
        "        instance_type='ml.p3.2xlarge')\n",
        "Dockerfile": DLC_IMAGE + _i("\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
    }),
    ("SM308", "alias", {
        "launch.py": "from sagemaker.estimator import Estimator as E\n\nimage = 'acct.dkr.ecr.eu-west-1.amazonaws.com/smp-trainer:v2'\n"
        "E(image_uri=image, entry_point='src/train.py', instance_type='ml.p3.2xlarge', role=role)\n",
        "smp-trainer/Dockerfile": DLC_IMAGE + "\nCOPY src/utils.py /opt/ml/code/utils.py\nENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code\n",
    }),
]
