"""Dockerfiles of SageMaker model-parallel containers (SM3)."""
