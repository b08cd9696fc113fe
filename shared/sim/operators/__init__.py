"""The GPU workload operators of the simulated cluster: JobSet, Kubeflow Trainer v2 and the MPI Operator.

Sits beside :mod:`shared.sim.apiserver` (which it builds on: the controller manager's context, the
store, the API verbs and the Job controller that turns Jobs into pods) and never imports
:mod:`shared.sim.gpu` — what a container does is the kubelet's business. Each operator is its CRDs
(ours, generated from the upstream Go types, ``*crd.py``), its admission webhooks (``*webhook.py``)
and its controller, which creates the real children upstream creates: JobSet → headless Service and
one Job per replicatedJob replica; TrainJob → runtime snapshot, SSH Secret, hostfile ConfigMap and a
JobSet; MPIJob → Service, ConfigMap, Secret, worker Pods and a launcher Job. :mod:`.catalog` installs
them on a :class:`shared.sim.server.SimServer`. Sources and versions: research/workloads.md
(Trainer v2.3.0, JobSet v0.12.0, MPI Operator v0.8.0).
"""

from shared.sim.operators.catalog import DEFAULT, Operator, Operators, parse

__all__ = ["DEFAULT", "Operator", "Operators", "parse"]
