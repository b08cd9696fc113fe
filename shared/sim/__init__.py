"""The simulated cluster: a Kubernetes API emulator over real HTTP on 127.0.0.1 (part 1), with GPU
nodes, a kubelet running workloads in virtual time, hardware faults and repair (part 2).

Test and demo infrastructure, below no product code: programs never import ``shared.sim``; they
reach it through a kubeconfig, exactly as they reach a real cluster. Stdlib only (it must not
import the kubernetes client it stands in front of). Start it with ``python -m shared.sim serve``
or ``SimServer`` (see docs/sim.md); modules:

- ``server``: the SimServer object tests and later simulation parts hook onto;
- ``handler``/``routes``/``control``: HTTP, URLs, the ``/sim/v1`` control endpoints;
- ``api``/``collector``/``subresources``/``defaults``: API semantics;
- ``store``/``watch``: versioned objects, events, watches; ``selectors``/``patches``: pure functions;
- ``resources``/``discovery``/``tables``: what is served and how kubectl sees it;
- ``rbac``/``audit``/``faults``: identities and 403s, the request record, injected failures;
- ``vclock``: virtual time and its timers; ``stages`` (+ ``profiles/``, ``stages/`` YAML): hardware
  and lifecycles as data; ``faultspec``/``fabric``: fault grammar and the bandwidth model;
  ``gpunodes``/``noderoot``: node objects and the files node agents read;
- ``scheduler``/``jobs``/``jobcontroller``/``kubelet``/``podstatus``: pods and Jobs in virtual time;
  ``workloads`` with ``nccl_output``/``dcgm_output``/``training_output``: what a container prints;
- ``repair`` (RebootNode, GPUReset), ``helmseed`` (``seed``), ``fabriccontrol`` (their endpoints).
"""

from shared.sim.server import SimServer

__all__ = ["SimServer"]
