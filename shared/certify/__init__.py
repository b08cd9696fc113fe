"""Certification: proving with workloads that GPU nodes can run demanding jobs at full speed.

Domain layer, above ``shared/kube``. It will hold the Certification model, the test catalog,
the runners, thresholds, isolation strategies and the report (the certification issue); for now
it holds only ``parsers``: turning workload logs (nccl-tests, ``dcgmi diag``, the training
launcher) into structured results. It never changes node state.
"""
