"""SM3: Dockerfiles of containers that run SageMaker training with the model-parallel library.

Checked: Dockerfiles that mention SageMaker or smdistributed, or start from a SageMaker
deep-learning-container training image; any other Dockerfile is left alone.
"""

from __future__ import annotations

from codemods.engine.rule import Example, Expected, Invalid, Rule, invalid, run, valid

_DOCKERFILE = "Dockerfile"
_CUSTOM = (
    "FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04\n"
    "ARG PYTHON_VERSION=3.8\n"
    "ARG SMD_MODEL_PARALLEL_URL=https://example.com/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl\n"
    "ARG SMDATAPARALLEL_BINARY=https://example.com/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl\n"
    "RUN apt-get update && apt-get install -y libmetis-dev\n"
    "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && ./build.sh librmm\n"
    "RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}\n"
    "RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}\n"
)


def _example(before: str, *, findings: tuple[Expected, ...] = ()) -> tuple[Example, ...]:
    return (Invalid(before, None, filename=_DOCKERFILE, findings=findings),)


DOCKERFILE_UNRESOLVED = Rule(
    "SM300", "dockerfile-unresolved", "info",
    "A Dockerfile value the checks need is not fixed in the file (a build argument without a default): could "
    "not check",
    False,
    why="`docker build --build-arg` can set it to anything; the checks that depend on it are reported instead "
    "of guessed.",
    examples=_example("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN pip install sagemaker-training\n",
        findings=(Expected(2, 1, "could not check the base image"),),
    ),
    valid=(
        valid(
            """
            ARG BASE_IMAGE=nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            FROM ${BASE_IMAGE}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
        ),
    ),
    invalid=(
        invalid(
            """
            ARG BASE_IMAGE
            FROM ${BASE_IMAGE}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            findings=(Expected(2, 1, "could not check the base image"),),
        ),
        invalid(
            """
            from 111122223333.dkr.ecr.us-east-1.amazonaws.com/team/base:latest
            env SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
            """,
            filename="Dockerfile",
            note="private-ecr-base",
            alias=True,
            findings=(Expected(1, 1, "could not check the base image"),),
        ),
    ),
)

BASE_IMAGE = Rule(
    "SM301", "base-image", "error",
    "The image extends a SageMaker deep-learning-container training image or starts from an NVIDIA CUDA base image",
    False,
    why="The model-parallel library needs CUDA and the SageMaker training stack: the DLC training images carry "
    "both, a CUDA base image is where a custom build starts.",
    examples=_example("FROM python:3.8-slim\nRUN pip install sagemaker-training\n"
                      "ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
                      findings=(
                          Expected(1, 1, "python:3.8-slim is neither a SageMaker deep-learning-container training image"),
                      )),
    valid=(
        valid(
            """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="dlc",
        ),
        valid(
            """
            FROM python:3.8-slim
            RUN pip install flask
            """,
            filename="Dockerfile",
            note="not-a-sagemaker-image",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM --platform=linux/amd64 ubuntu:20.04 AS base
            FROM base
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="through-a-stage",
            alias=True,
            findings=(
                Expected(1, 1, "ubuntu:20.04 is neither a SageMaker deep-learning-container training image nor"),
            ),
        ),
    ),
)

SUBMIT_DIRECTORY = Rule(
    "SM302", "submit-directory", "error",
    "`ENV SAGEMAKER_SUBMIT_DIRECTORY` is not set",
    False,
    why="The SageMaker training toolkit runs the user code from that directory; without it the container does "
    "not find the entry point.",
    examples=_example(
        "FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker\n"
        'ENV PATH="/opt/ml/code:${PATH}"\n', findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),)),
    valid=(
        valid(
            """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            ENV PATH="/opt/ml/code:${PATH}"
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
        ),
        valid(
            """
            # xla-codemod: ignore[SM302]
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker""",
            filename="Dockerfile",
            note="suppressed-above-the-line",
        ),
        valid(
            """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker AS dlc
            ENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
            FROM dlc
            ENV SAGEMAKER_PROGRAM=train.py
            """,
            filename="Dockerfile",
            note="set-in-the-parent-stage",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            RUN pip install --no-cache-dir transformers
            ENV PATH="/opt/ml/code:${PATH}"
            """,
            filename="Dockerfile",
            findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
        invalid(
            """
            from public.ecr.aws/deep-learning-containers/pytorch-training:2.0.0-gpu-py310
            env SAGEMAKER_PROGRAM=train.py
            """,
            filename="Dockerfile",
            note="public-ecr-lower-case",
            alias=True,
            findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
        invalid(
            """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker AS dlc
            ENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
            FROM ubuntu:20.04
            COPY --from=dlc /opt/ml /opt/ml
            RUN pip install sagemaker-training
            """,
            filename="Dockerfile",
            note="not-in-the-final-stage",
            findings=(Expected(3, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
    ),
)

SAGEMAKER_TRAINING = Rule(
    "SM303", "sagemaker-training", "error",
    "A custom image does not install `sagemaker-training`",
    False,
    why="The SageMaker training toolkit starts the entry point, MPI and the environment SageMaker jobs expect; "
    "a custom CUDA image has none of it.",
    examples=_example(_CUSTOM + "ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
        findings=(Expected(1, 1, "a custom image installs the SageMaker training toolkit"),),
    ),
    valid=(
        valid(
            """
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
            """,
            filename="Dockerfile",
        ),
        valid(
            """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="dlc-has-it",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            findings=(Expected(1, 1, "a custom image installs the SageMaker training toolkit"),),
        ),
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN ["python3", "-m", "pip", "install", "sagemaker-inference"]
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="json-form",
            alias=True,
            findings=(Expected(1, 1, "a custom image installs the SageMaker training toolkit"),),
        ),
    ),
)

SMDISTRIBUTED_WHEELS = Rule(
    "SM304", "smdistributed-wheels", "error",
    "A custom model-parallel image installs both smdistributed wheels (model parallel and data parallel)",
    False,
    why="The model-parallel library uses the data-parallel library for cross-node RDMA; an image with one of "
    "the two fails when the job starts.",
    examples=_example(_CUSTOM.replace("RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}\n", "")
                      + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
                      findings=(Expected(1, 1, "the image does not install the smdistributed_dataparallel wheel"),)),
    valid=(
        valid(
            """
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
            """,
            filename="Dockerfile",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            findings=(Expected(1, 1, "the image does not install the smdistributed_dataparallel wheel"),),
        ),
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN python3 -m pip download ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="downloaded-not-installed",
            alias=True,
            findings=(Expected(1, 1, "the image does not install the smdistributed_modelparallel wheel"),),
        ),
    ),
)

WHEEL_PYTHON_TAG = Rule(
    "SM305", "wheel-python-tag", "error",
    "The smdistributed wheels' Python tag (cp38, ...) matches the image's Python",
    False,
    why="pip refuses a wheel built for another Python (or the build fails later, in the job); the wheels must "
    "match each other and the interpreter of the image.",
    examples=_example(_CUSTOM.replace("ARG PYTHON_VERSION=3.8", "ARG PYTHON_VERSION=3.9")
                      + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
                      findings=(
                          Expected(3, 1, "the smdistributed_modelparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
                          Expected(4, 1, "the smdistributed_dataparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
                      )),
    valid=(
        valid(
            """
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
            """,
            filename="Dockerfile",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.9
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            findings=(
                Expected(3, 1, "the smdistributed_modelparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
                Expected(4, 1, "the smdistributed_dataparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
            ),
        ),
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp39-cp39-linux_x86_64.whl
            RUN apt-get update && apt-get install -y libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="wheels-disagree",
            findings=(Expected(3, 1, "the smdistributed wheels are built for different Pythons"),),
        ),
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y libmetis-dev
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN conda install -y python=3.9 && pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="conda-python",
            alias=True,
            findings=(
                Expected(2, 1, "the smdistributed_modelparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
                Expected(3, 1, "the smdistributed_dataparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
            ),
        ),
    ),
)

METIS = Rule(
    "SM306", "metis", "error",
    "A custom model-parallel image does not install METIS",
    False,
    why="The model-parallel library partitions models with METIS and fails to load without it.",
    examples=_example(_CUSTOM.replace("RUN apt-get update && apt-get install -y libmetis-dev\n", "")
                      + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
                      findings=(Expected(1, 1, "the model-parallel library needs METIS"),)),
    valid=(
        valid(
            """
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
            """,
            filename="Dockerfile",
        ),
        valid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION}
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ARG METIS=metis-5.1.0
            RUN wget -nv http://glaros.dtc.umn.edu/gkhome/fetch/sw/metis/${METIS}.tar.gz && make install
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="built-from-source",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION}
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            findings=(Expected(1, 1, "the model-parallel library needs METIS"),),
        ),
        invalid(
            """
            FROM nvcr.io/nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION}
            RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="ngc-base",
            alias=True,
            findings=(Expected(1, 1, "the model-parallel library needs METIS"),),
        ),
    ),
)

RMM = Rule(
    "SM307", "rmm", "error",
    "A custom model-parallel image does not install the RAPIDS memory manager (librmm)",
    False,
    why="The model-parallel library allocates GPU memory through RMM and fails to load without it.",
    examples=_example(_CUSTOM.replace(
        "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && ./build.sh librmm\n", "")
        + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n",
        findings=(Expected(1, 1, "the model-parallel library needs the RAPIDS memory manager"),)),
    valid=(
        valid(
            """
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
            """,
            filename="Dockerfile",
        ),
    ),
    invalid=(
        invalid(
            """
            FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            findings=(Expected(1, 1, "the model-parallel library needs the RAPIDS memory manager"),),
        ),
        invalid(
            """
            FROM public.ecr.aws/nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04
            ARG PYTHON_VERSION=3.8
            ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl
            ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl
            RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev
            RUN rm -rf /tmp/*
            RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}
            RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}
            RUN pip install sagemaker-training
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """,
            filename="Dockerfile",
            note="mirrored-base",
            alias=True,
            findings=(Expected(1, 1, "the model-parallel library needs the RAPIDS memory manager"),),
        ),
    ),
)

ENTRY_POINT_DIRECTORY = Rule(
    "SM308", "entry-point-directory", "error",
    "An estimator of the same run uses this image (`image_uri`) with an `entry_point` that the image does not "
    "put in SAGEMAKER_SUBMIT_DIRECTORY",
    False,
    why="The training toolkit looks for the entry point in SAGEMAKER_SUBMIT_DIRECTORY; a script the image copies "
    "elsewhere (or not at all, while it copies others there) is not found when the job starts.",
    examples=_example(
        "FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker\n"
        "COPY helpers.py /opt/ml/code/\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
    valid=(
        run(
            ("launch.py", """
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point='train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',
                    instance_type='ml.p3.2xlarge')
            """),
            ("Dockerfile", """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            WORKDIR /opt/ml/code
            COPY train.py helpers.py ./
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """),
        ),
        run(
            ("launch.py", """
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point='train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',
                    instance_type='ml.p3.2xlarge')
            """),
            ("Dockerfile", """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
                    ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """),
        ),
    ),
    invalid=(
        run(
            ("launch.py", """
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point='train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',
                    instance_type='ml.p3.2xlarge')
            """),
            ("Dockerfile", """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            COPY helpers.py /opt/ml/code/
            ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """),
        ),
        run(
            ("launch.py", """
            from sagemaker.pytorch import PyTorch
            PyTorch(entry_point='/opt/program/train.py', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',
                    instance_type='ml.p3.2xlarge')
            """),
            ("docker/Dockerfile.trainer", """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
                    ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """),
            ("docker/Dockerfile.other", """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
                    ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code
            """),
        ),
        run(
            ("launch.py", """
            from sagemaker.estimator import Estimator as E

            image = 'acct.dkr.ecr.eu-west-1.amazonaws.com/smp-trainer:v2'
            E(image_uri=image, entry_point='src/train.py', instance_type='ml.p3.2xlarge', role=role)
            """),
            ("smp-trainer/Dockerfile", """
            FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker
            COPY src/utils.py /opt/ml/code/utils.py
            ENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code
            """),
            alias=True,
        ),
    ),
)

RULES = (DOCKERFILE_UNRESOLVED, BASE_IMAGE, SUBMIT_DIRECTORY, SAGEMAKER_TRAINING, SMDISTRIBUTED_WHEELS, WHEEL_PYTHON_TAG, METIS, RMM, ENTRY_POINT_DIRECTORY)
