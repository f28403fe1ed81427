"""SageMaker launcher scripts (SM1, SM2): estimators and their job configuration, instance types."""
