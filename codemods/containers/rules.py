"""SM3: Dockerfiles of containers that run SageMaker training with the model-parallel library.

Checked: Dockerfiles that mention SageMaker or smdistributed, or start from a SageMaker
deep-learning-container training image; any other Dockerfile is left alone.
"""

from __future__ import annotations

from codemods.engine.rule import Example, Rule

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


def _example(before: str) -> tuple[Example, ...]:
    return (Example(before, None, filename=_DOCKERFILE),)


DOCKERFILE_UNRESOLVED = Rule(
    "SM300", "dockerfile-unresolved", "info",
    "A Dockerfile value the checks need is not fixed in the file (a build argument without a default): could "
    "not check",
    False,
    why="`docker build --build-arg` can set it to anything; the checks that depend on it are reported instead "
    "of guessed.",
    examples=_example("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN pip install sagemaker-training\n"),
)

BASE_IMAGE = Rule(
    "SM301", "base-image", "error",
    "The image extends a SageMaker deep-learning-container training image or starts from an NVIDIA CUDA base image",
    False,
    why="The model-parallel library needs CUDA and the SageMaker training stack: the DLC training images carry "
    "both, a CUDA base image is where a custom build starts.",
    examples=_example("FROM python:3.8-slim\nRUN pip install sagemaker-training\n"
                      "ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
)

SUBMIT_DIRECTORY = Rule(
    "SM302", "submit-directory", "error",
    "`ENV SAGEMAKER_SUBMIT_DIRECTORY` is not set",
    False,
    why="The SageMaker training toolkit runs the user code from that directory; without it the container does "
    "not find the entry point.",
    examples=_example(
        "FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker\n"
        'ENV PATH="/opt/ml/code:${PATH}"\n'),
)

SAGEMAKER_TRAINING = Rule(
    "SM303", "sagemaker-training", "error",
    "A custom image does not install `sagemaker-training`",
    False,
    why="The SageMaker training toolkit starts the entry point, MPI and the environment SageMaker jobs expect; "
    "a custom CUDA image has none of it.",
    examples=_example(_CUSTOM + "ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
)

SMDISTRIBUTED_WHEELS = Rule(
    "SM304", "smdistributed-wheels", "error",
    "A custom model-parallel image installs both smdistributed wheels (model parallel and data parallel)",
    False,
    why="The model-parallel library uses the data-parallel library for cross-node RDMA; an image with one of "
    "the two fails when the job starts.",
    examples=_example(_CUSTOM.replace("RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}\n", "")
                      + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
)

WHEEL_PYTHON_TAG = Rule(
    "SM305", "wheel-python-tag", "error",
    "The smdistributed wheels' Python tag (cp38, ...) matches the image's Python",
    False,
    why="pip refuses a wheel built for another Python (or the build fails later, in the job); the wheels must "
    "match each other and the interpreter of the image.",
    examples=_example(_CUSTOM.replace("ARG PYTHON_VERSION=3.8", "ARG PYTHON_VERSION=3.9")
                      + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
)

METIS = Rule(
    "SM306", "metis", "error",
    "A custom model-parallel image does not install METIS",
    False,
    why="The model-parallel library partitions models with METIS and fails to load without it.",
    examples=_example(_CUSTOM.replace("RUN apt-get update && apt-get install -y libmetis-dev\n", "")
                      + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
)

RMM = Rule(
    "SM307", "rmm", "error",
    "A custom model-parallel image does not install the RAPIDS memory manager (librmm)",
    False,
    why="The model-parallel library allocates GPU memory through RMM and fails to load without it.",
    examples=_example(_CUSTOM.replace(
        "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && ./build.sh librmm\n", "")
        + "RUN pip install sagemaker-training\nENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"),
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
)

RULES = (DOCKERFILE_UNRESOLVED, BASE_IMAGE, SUBMIT_DIRECTORY, SAGEMAKER_TRAINING, SMDISTRIBUTED_WHEELS, WHEEL_PYTHON_TAG, METIS, RMM, ENTRY_POINT_DIRECTORY)
