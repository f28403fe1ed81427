"""SM3: Dockerfiles of containers that run SageMaker training with the model-parallel library.

Checked: SageMaker training images, Dockerfiles that mention SageMaker or smdistributed, or
start from a SageMaker deep-learning-container training image; any other Dockerfile is left
alone (_SAGEMAKER_ONLY, said on the pages of the rules that ask for the toolkit).
"""

from __future__ import annotations

from codemods.engine.rule import Example, Expected, Invalid, Rule, Valid, invalid, run, valid

_DOCKERFILE = "Dockerfile"
_TOOLKIT = "RUN pip install sagemaker-training\n"
_SUBMIT = "ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code\n"
_PATH = 'ENV PATH="/opt/ml/code:${PATH}"\n'
_DLC = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker"
_FROM_DLC = f"FROM {_DLC}\n"
# The DLC with only the submit directory set (an indented instruction, which Docker accepts).
_DLC_ONLY = _FROM_DLC + "        " + _SUBMIT
# Custom model-parallel images: a CUDA base, the library's wheels and what they need. The
# cases' image is complete; the examples' (shorter) lacks the toolkit and the submit directory.
_CUDA_BASE = "FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04\n"
_PYTHON = "ARG PYTHON_VERSION=3.8\n"
_MODEL_PARALLEL = "RUN pip install --no-cache-dir -U ${SMD_MODEL_PARALLEL_URL}\n"
_DATA_PARALLEL = "RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir ${SMDATAPARALLEL_BINARY}\n"
_PACKAGES = "RUN apt-get update && apt-get install -y python${PYTHON_VERSION} libmetis-dev\n"
_PACKAGES_BUT_METIS = "RUN apt-get update && apt-get install -y python${PYTHON_VERSION}\n"
_PACKAGES_BUT_PYTHON = "RUN apt-get update && apt-get install -y libmetis-dev\n"
_RMM = "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && cd rmm-0.15.0 && ./build.sh librmm\n"
_SMP_IMAGE = (
    _CUDA_BASE
    + _PYTHON
    + "ARG SMD_MODEL_PARALLEL_URL=https://example.com/pytorch-1.10.0/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl\n"
    "ARG SMDATAPARALLEL_BINARY=https://example.com/pytorch/1.10.2/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl\n"
    + _PACKAGES
    + _RMM
    + _MODEL_PARALLEL
    + _DATA_PARALLEL
    + _TOOLKIT
    + _SUBMIT
)
# A plain CUDA image for local use that downloads a tool from S3: not a SageMaker image.
_LOCAL_CUDA = (
    "FROM nvidia/cuda:9.0-cudnn7-devel-ubuntu16.04\n"
    "RUN curl -o /usr/local/bin/patchelf https://s3-us-west-2.amazonaws.com/artifacts/patchelf_0.9_amd64.elf\n"
    "RUN pip install numpy>=1.11\n"
)
_SAGEMAKER_ONLY = (
    " Checked only in a SageMaker training image: a Dockerfile that mentions SageMaker or smdistributed "
    "(`ENV SAGEMAKER_*`, `pip install sagemaker-training`) or starts from a SageMaker deep-learning-container "
    "training image, or one that an estimator of the same run names by its `image_uri`; a plain CUDA image that "
    "only downloads from an AWS address (S3) is left alone."
)
_EXAMPLE_RMM = "RUN wget -nv https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && ./build.sh librmm\n"
_CUSTOM = (
    _CUDA_BASE
    + _PYTHON
    + "ARG SMD_MODEL_PARALLEL_URL=https://example.com/smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl\n"
    "ARG SMDATAPARALLEL_BINARY=https://example.com/smdistributed_dataparallel-1.4.0-cp38-cp38-linux_x86_64.whl\n"
    + _PACKAGES_BUT_PYTHON
    + _EXAMPLE_RMM
    + _MODEL_PARALLEL
    + _DATA_PARALLEL
)


def _edited(image: str, *edits: tuple[str, str]) -> str:
    """An image with some of its text replaced (each ``(old, new)`` once; ``new`` "" removes
    it): what a case changes, and only that."""
    for old, new in edits:
        if image.count(old) != 1:
            raise ValueError(f"not once in the image: {old!r}")
        image = image.replace(old, new)
    return image


def _example(before: str, *, findings: tuple[Expected, ...] = ()) -> tuple[Example, ...]:
    return (Invalid(before, None, filename=_DOCKERFILE, findings=findings),)


def _custom_example(*edits: tuple[str, str], findings: tuple[Expected, ...]) -> tuple[Example, ...]:
    """The example: the guide's custom image with ``edits``, the toolkit installed and the submit directory set."""
    return _example(_edited(_CUSTOM, *edits) + _TOOLKIT + _SUBMIT, findings=findings)


def _valid(before: str, *, note: str = "") -> Valid:
    return valid(before, filename=_DOCKERFILE, note=note)


def _invalid(before: str, *, findings: tuple[Expected, ...], note: str = "", alias: bool = False) -> Invalid:
    return invalid(before, filename=_DOCKERFILE, note=note, alias=alias, findings=findings)


def _smp_invalid(*edits: tuple[str, str], says: str, note: str = "", alias: bool = False) -> Invalid:
    """The cases' complete model-parallel image with ``edits``: one finding, at its first line."""
    return _invalid(_edited(_SMP_IMAGE, *edits), note=note, alias=alias, findings=(Expected(1, 1, says),))


def _trainer_launch(entry_point: str = "train.py") -> tuple[str, str]:
    """A launcher whose estimator runs ``entry_point`` in the run's image."""
    return (
        "launch.py",
        "from sagemaker.pytorch import PyTorch\n"
        f"PyTorch(entry_point='{entry_point}', image_uri='1.dkr.ecr.us-east-1.amazonaws.com/trainer:1',\n"
        "        instance_type='ml.p3.2xlarge')\n",
    )


DOCKERFILE_UNRESOLVED = Rule(
    code="SM300",
    name="dockerfile-unresolved",
    severity="info",
    summary="A Dockerfile value the checks need is not fixed in the file (a build argument without a default): could "
    "not check",
    fixable=False,
    why="`docker build --build-arg` can set it to anything; the checks that depend on it are reported instead "
    "of guessed.",
    instead="A default for the build argument (`ARG BASE_IMAGE=nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04`; `docker "
    "build --build-arg` still overrides it), or the value written in place. A base image from a registry of your "
    "own cannot be checked: see that it extends a SageMaker training image.",
    examples=lambda: _example(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n" + _TOOLKIT,
        findings=(Expected(2, 1, "could not check the base image"),),
    ),
    valid=lambda: (
        _valid("ARG BASE_IMAGE=nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04\nFROM ${BASE_IMAGE}\n" + _TOOLKIT + _SUBMIT),
    ),
    invalid=lambda: (
        _invalid(
            "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n" + _TOOLKIT + _SUBMIT,
            findings=(Expected(2, 1, "could not check the base image"),),
        ),
        _invalid(
            "from 111122223333.dkr.ecr.us-east-1.amazonaws.com/team/base:latest\n"
            "env SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code\n",
            note="private-ecr-base",
            alias=True,
            findings=(Expected(1, 1, "could not check the base image"),),
        ),
    ),
)

BASE_IMAGE = Rule(
    code="SM301",
    name="base-image",
    severity="error",
    summary="The image extends a SageMaker deep-learning-container training image or starts from an NVIDIA CUDA base image",
    fixable=False,
    why="The model-parallel library needs CUDA and the SageMaker training stack: the DLC training images carry "
    "both, a CUDA base image is where a custom build starts.",
    instead="A SageMaker deep-learning-container training image as the base, which carries CUDA and the training toolkit "
    "(`FROM "
    "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39-cu117-ubuntu20.04-sagemaker`), "
    "or, for a custom build, an NVIDIA CUDA base image (`FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04`) with "
    "what SM303-SM307 ask for installed.",
    examples=lambda: _example(
        "FROM python:3.8-slim\n" + _TOOLKIT + _SUBMIT,
        findings=(Expected(1, 1, "python:3.8-slim is neither a SageMaker deep-learning-container training image"),),
    ),
    valid=lambda: (
        _valid(_FROM_DLC + _SUBMIT, note="dlc"),
        _valid("FROM python:3.8-slim\nRUN pip install flask\n", note="not-a-sagemaker-image"),
    ),
    invalid=lambda: (
        _invalid(
            "FROM --platform=linux/amd64 ubuntu:20.04 AS base\nFROM base\n" + _TOOLKIT + _SUBMIT,
            note="through-a-stage",
            alias=True,
            findings=(
                Expected(1, 1, "ubuntu:20.04 is neither a SageMaker deep-learning-container training image nor"),
            ),
        ),
    ),
)

SUBMIT_DIRECTORY = Rule(
    code="SM302",
    name="submit-directory",
    severity="error",
    summary="`ENV SAGEMAKER_SUBMIT_DIRECTORY` is not set",
    fixable=False,
    why="The SageMaker training toolkit runs the user code from that directory; without it the container does "
    "not find the entry point." + _SAGEMAKER_ONLY,
    instead="`ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code` in the image's final stage (or in the stage it starts `FROM`, "
    "whose environment it inherits), and the entry point in that directory.",
    examples=lambda: _example(_FROM_DLC + _PATH, findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),)),
    valid=lambda: (
        _valid(_FROM_DLC + _PATH + _SUBMIT),
        _valid(f"# xla-codemod: ignore[SM302]\nFROM {_DLC}", note="suppressed-above-the-line"),
        _valid(
            f"FROM {_DLC} AS dlc\nENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code\nFROM dlc\nENV SAGEMAKER_PROGRAM=train.py\n",
            note="set-in-the-parent-stage",
        ),
        _valid(_LOCAL_CUDA, note="local-cuda-image-downloading-from-s3"),
        run(_trainer_launch(), ("environment/docker/Dockerfile", _LOCAL_CUDA)),
    ),
    invalid=lambda: (
        _invalid(
            _FROM_DLC + "RUN pip install --no-cache-dir transformers\n" + _PATH,
            findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
        _invalid(
            "from public.ecr.aws/deep-learning-containers/pytorch-training:2.0.0-gpu-py310\n"
            "env SAGEMAKER_PROGRAM=train.py\n",
            note="public-ecr-lower-case",
            alias=True,
            findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
        _invalid(
            f"FROM {_DLC} AS dlc\nENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code\nFROM ubuntu:20.04\n"
            "COPY --from=dlc /opt/ml /opt/ml\n" + _TOOLKIT,
            note="not-in-the-final-stage",
            findings=(Expected(3, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
        _invalid(
            _LOCAL_CUDA + "ENV SAGEMAKER_PROGRAM=train.py\n" + _TOOLKIT,
            note="local-cuda-image-run-by-sagemaker",
            findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
        run(_trainer_launch(), (_DOCKERFILE, _LOCAL_CUDA)),
        _invalid(
            "FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310\n"
            "RUN pip install --no-cache-dir transformers\n",
            note="dlc-base-named-only-in-from",
            findings=(Expected(1, 1, "no `ENV SAGEMAKER_SUBMIT_DIRECTORY`"),),
        ),
    ),
)

SAGEMAKER_TRAINING = Rule(
    code="SM303",
    name="sagemaker-training",
    severity="error",
    summary="A custom image does not install `sagemaker-training`",
    fixable=False,
    why="The SageMaker training toolkit starts the entry point, MPI and the environment SageMaker jobs expect; "
    "a custom CUDA image has none of it." + _SAGEMAKER_ONLY,
    instead="`RUN pip install sagemaker-training` (the SageMaker training toolkit) in the custom image; a SageMaker "
    "deep-learning-container training image as the base already has it.",
    examples=lambda: _example(
        _CUSTOM + _SUBMIT,
        findings=(Expected(1, 1, "a custom image installs the SageMaker training toolkit"),),
    ),
    valid=lambda: (
        _valid(_SMP_IMAGE),
        _valid(_FROM_DLC + _SUBMIT, note="dlc-has-it"),
        _valid(_LOCAL_CUDA, note="local-cuda-image-downloading-from-s3"),
        run(_trainer_launch(), ("environment/docker/Dockerfile", _LOCAL_CUDA)),
    ),
    invalid=lambda: (
        _smp_invalid((_TOOLKIT, ""), says="a custom image installs the SageMaker training toolkit"),
        _smp_invalid(
            (_TOOLKIT, 'RUN ["python3", "-m", "pip", "install", "sagemaker-inference"]\n'),
            says="a custom image installs the SageMaker training toolkit",
            note="json-form",
            alias=True,
        ),
        _invalid(
            _LOCAL_CUDA + _SUBMIT,
            note="local-cuda-image-run-by-sagemaker",
            findings=(Expected(1, 1, "a custom image installs the SageMaker training toolkit"),),
        ),
        run(_trainer_launch(), ("trainer/Dockerfile", _LOCAL_CUDA)),
    ),
)

SMDISTRIBUTED_WHEELS = Rule(
    code="SM304",
    name="smdistributed-wheels",
    severity="error",
    summary="A custom model-parallel image installs both smdistributed wheels (model parallel and data parallel)",
    fixable=False,
    why="The model-parallel library uses the data-parallel library for cross-node RDMA; an image with one of "
    "the two fails when the job starts.",
    instead="Both wheels, the data-parallel one as SageMaker's guide installs it: `RUN pip install --no-cache-dir -U "
    "${SMD_MODEL_PARALLEL_URL}` and `RUN SMDATAPARALLEL_PT=1 pip install --no-cache-dir "
    "${SMDATAPARALLEL_BINARY}`, each URL a wheel for the image's PyTorch, CUDA and Python.",
    examples=lambda: _custom_example(
        (_DATA_PARALLEL, ""),
        findings=(Expected(1, 1, "the image does not install the smdistributed_dataparallel wheel"),),
    ),
    valid=lambda: (_valid(_SMP_IMAGE),),
    invalid=lambda: (
        _smp_invalid((_DATA_PARALLEL, ""), says="the image does not install the smdistributed_dataparallel wheel"),
        _smp_invalid(
            (_MODEL_PARALLEL, "RUN python3 -m pip download ${SMD_MODEL_PARALLEL_URL}\n"),
            says="the image does not install the smdistributed_modelparallel wheel",
            note="downloaded-not-installed",
            alias=True,
        ),
    ),
)

# The cases' image without its Python version (its Python is the base image's).
_NO_PYTHON = ((_PYTHON, ""), (_PACKAGES, _PACKAGES_BUT_PYTHON))

WHEEL_PYTHON_TAG = Rule(
    code="SM305",
    name="wheel-python-tag",
    severity="error",
    summary="The smdistributed wheels' Python tag (cp38, ...) matches the image's Python",
    fixable=False,
    why="pip refuses a wheel built for another Python (or the build fails later, in the job); the wheels must "
    "match each other and the interpreter of the image.",
    instead="Wheels whose tag is the image's Python, the same for both: `cp38` wheels "
    "(`smdistributed_modelparallel-1.7.0-cp38-cp38-linux_x86_64.whl`) in an image whose Python is 3.8 (`ARG "
    "PYTHON_VERSION=3.8`, `apt-get install -y python${PYTHON_VERSION}`), or the wheels built for the Python the "
    "image has.",
    examples=lambda: _custom_example(
        (_PYTHON, "ARG PYTHON_VERSION=3.9\n"),
        findings=(
            Expected(3, 1, "the smdistributed_modelparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
            Expected(4, 1, "the smdistributed_dataparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"),
        ),
    ),
    valid=lambda: (_valid(_SMP_IMAGE),),
    invalid=lambda: (
        _invalid(
            _edited(_SMP_IMAGE, (_PYTHON, "ARG PYTHON_VERSION=3.9\n")),
            findings=(
                Expected(
                    3, 1, "the smdistributed_modelparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"
                ),
                Expected(
                    4, 1, "the smdistributed_dataparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"
                ),
            ),
        ),
        _invalid(
            _edited(_SMP_IMAGE, *_NO_PYTHON, ("dataparallel-1.4.0-cp38-cp38", "dataparallel-1.4.0-cp39-cp39")),
            note="wheels-disagree",
            findings=(Expected(3, 1, "the smdistributed wheels are built for different Pythons"),),
        ),
        _invalid(
            _edited(
                _SMP_IMAGE,
                *_NO_PYTHON,
                (_TOOLKIT, "RUN conda install -y python=3.9 && pip install sagemaker-training\n"),
            ),
            note="conda-python",
            alias=True,
            findings=(
                Expected(
                    2, 1, "the smdistributed_modelparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"
                ),
                Expected(
                    3, 1, "the smdistributed_dataparallel wheel is built for cp38, the image's Python is 3.9 (cp39)"
                ),
            ),
        ),
    ),
)

METIS = Rule(
    code="SM306",
    name="metis",
    severity="error",
    summary="A custom model-parallel image does not install METIS",
    fixable=False,
    why="The model-parallel library partitions models with METIS and fails to load without it.",
    instead="`RUN apt-get update && apt-get install -y libmetis-dev`, or METIS built from source as SageMaker's guide "
    "does (`ARG METIS=metis-5.1.0`, its tarball from glaros.dtc.umn.edu, `make config shared=1 && make install`).",
    examples=lambda: _custom_example(
        (_PACKAGES_BUT_PYTHON, ""),
        findings=(Expected(1, 1, "the model-parallel library needs METIS"),),
    ),
    valid=lambda: (
        _valid(_SMP_IMAGE),
        _valid(
            _edited(
                _SMP_IMAGE,
                (_PACKAGES, _PACKAGES_BUT_METIS),
                (
                    _TOOLKIT,
                    _TOOLKIT + "ARG METIS=metis-5.1.0\n"
                    "RUN wget -nv http://glaros.dtc.umn.edu/gkhome/fetch/sw/metis/${METIS}.tar.gz && make install\n",
                ),
            ),
            note="built-from-source",
        ),
    ),
    invalid=lambda: (
        _smp_invalid((_PACKAGES, _PACKAGES_BUT_METIS), says="the model-parallel library needs METIS"),
        _smp_invalid(
            ("FROM nvidia/", "FROM nvcr.io/nvidia/"),
            (_PACKAGES, _PACKAGES_BUT_METIS),
            says="the model-parallel library needs METIS",
            note="ngc-base",
            alias=True,
        ),
    ),
)

RMM = Rule(
    code="SM307",
    name="rmm",
    severity="error",
    summary="A custom model-parallel image does not install the RAPIDS memory manager (librmm)",
    fixable=False,
    why="The model-parallel library allocates GPU memory through RMM and fails to load without it.",
    instead="RMM built and installed as SageMaker's guide does (CMake 3.14 or later): `RUN wget -nv "
    "https://github.com/rapidsai/rmm/archive/v0.15.0.tar.gz && tar -xvf v0.15.0.tar.gz && cd rmm-0.15.0 && "
    "INSTALL_PREFIX=/usr/local ./build.sh librmm`.",
    examples=lambda: _custom_example(
        (_EXAMPLE_RMM, ""),
        findings=(Expected(1, 1, "the model-parallel library needs the RAPIDS memory manager"),),
    ),
    valid=lambda: (_valid(_SMP_IMAGE),),
    invalid=lambda: (
        _smp_invalid((_RMM, ""), says="the model-parallel library needs the RAPIDS memory manager"),
        _smp_invalid(
            ("FROM nvidia/", "FROM public.ecr.aws/nvidia/"),
            (_RMM, "RUN rm -rf /tmp/*\n"),
            says="the model-parallel library needs the RAPIDS memory manager",
            note="mirrored-base",
            alias=True,
        ),
    ),
)

ENTRY_POINT_DIRECTORY = Rule(
    code="SM308",
    name="entry-point-directory",
    severity="error",
    summary="An estimator of the same run uses this image (`image_uri`) with an `entry_point` that the image does not "
    "put in SAGEMAKER_SUBMIT_DIRECTORY",
    fixable=False,
    why="The training toolkit looks for the entry point in SAGEMAKER_SUBMIT_DIRECTORY; a script the image copies "
    "elsewhere (or not at all, while it copies others there) is not found when the job starts.",
    instead="The entry point in `SAGEMAKER_SUBMIT_DIRECTORY`: copy it there with the files the image already puts there "
    "(`COPY train.py helpers.py /opt/ml/code/`), and give an absolute `entry_point` only inside that directory "
    "(`/opt/ml/code/train.py`).",
    examples=lambda: _example(_FROM_DLC + "COPY helpers.py /opt/ml/code/\n" + _SUBMIT),
    valid=lambda: (
        run(
            _trainer_launch(),
            (_DOCKERFILE, _FROM_DLC + "WORKDIR /opt/ml/code\nCOPY train.py helpers.py ./\n" + _SUBMIT),
        ),
        run(_trainer_launch(), (_DOCKERFILE, _DLC_ONLY)),
    ),
    invalid=lambda: (
        run(_trainer_launch(), (_DOCKERFILE, _FROM_DLC + "COPY helpers.py /opt/ml/code/\n" + _SUBMIT)),
        run(
            _trainer_launch("/opt/program/train.py"),
            ("docker/Dockerfile.trainer", _DLC_ONLY),
            ("docker/Dockerfile.other", _DLC_ONLY),
        ),
        run(
            (
                "launch.py",
                """
            from sagemaker.estimator import Estimator as E

            image = 'acct.dkr.ecr.eu-west-1.amazonaws.com/smp-trainer:v2'
            E(image_uri=image, entry_point='src/train.py', instance_type='ml.p3.2xlarge', role=role)
            """,
            ),
            (
                "smp-trainer/Dockerfile",
                _FROM_DLC + "COPY src/utils.py /opt/ml/code/utils.py\nENV SAGEMAKER_SUBMIT_DIRECTORY=/opt/ml/code\n",
            ),
            alias=True,
        ),
    ),
)

RULES = (
    DOCKERFILE_UNRESOLVED,
    BASE_IMAGE,
    SUBMIT_DIRECTORY,
    SAGEMAKER_TRAINING,
    SMDISTRIBUTED_WHEELS,
    WHEEL_PYTHON_TAG,
    METIS,
    RMM,
    ENTRY_POINT_DIRECTORY,
)
