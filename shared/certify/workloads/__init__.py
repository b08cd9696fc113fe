"""Certification workloads as the operators on a real GPU cluster run them.

A group's test is rendered by one :class:`.backend.Backend`: ``trainjob`` (Kubeflow Trainer v2:
a namespaced TrainingRuntime per catalog entry and a TrainJob referencing it), ``mpijob``
(kubeflow.org/v2beta1, MPI Operator) or ``job`` (batch/v1, single-node tests only). Per-platform
settings (:mod:`.platforms`) are data under ``shared/certify/platforms/``, chosen from the nodes.
Pure functions of plain data; creating and watching the objects is the runner's.
"""
