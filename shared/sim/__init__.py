"""The simulated cluster: a Kubernetes API emulator over real HTTP on 127.0.0.1 (part 1), with GPU
nodes, a kubelet running workloads in virtual time, hardware faults and repair (part 2).

Test and demo infrastructure, below no product code: programs never import ``shared.sim``; they
reach it through a kubeconfig, exactly as they reach a real cluster. Stdlib only (it must not
import the kubernetes client it stands in front of). Start it with ``python -m shared.sim serve``
or ``SimServer`` (see docs/sim.md). Two packages, wired together in one place:

- ``apiserver/``: the control plane — HTTP, storage, watch, validation, discovery, RBAC and
  audit, API fault injection, virtual time, and the built-in controllers (scheduler, Jobs);
- ``gpu/``: the nodes — fabric model and hardware faults, node objects and files, the kubelet
  and what workloads print, repair, ``seed``;
- ``server``: the SimServer object that wires them; ``control``: the ``/sim/v1`` endpoints.
"""

from shared.sim.server import SimServer

__all__ = ["SimServer"]
