"""The GPU half of the simulated cluster: hardware, kubelets and what workloads print.

The fabric model (nodes, racks, NVLink domains, NICs and their faults), the node objects and
files a GPU node exposes (as a managed service registers them, :mod:`.providers`), the kubelet
that runs pods in virtual time (an mpirun launcher over its hostfile's hosts, :mod:`.launcher`),
the outputs of nccl-tests, ``dcgmi diag`` and training launchers computed from the fabric, and the
janitor that carries out remediations. It drives the cluster only through ``shared.sim.apiserver``.
"""
