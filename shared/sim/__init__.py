"""The simulated cluster, part 1: a Kubernetes API emulator over real HTTP on 127.0.0.1.

Test and demo infrastructure, below no product code: programs never import ``shared.sim``; they
reach it through a kubeconfig, exactly as they reach a real cluster. Stdlib only (it must not
import the kubernetes client it stands in front of). Start it with ``python -m shared.sim serve``
or ``SimServer`` (see docs/sim.md); modules:

- ``server``: the SimServer object tests and later simulation parts hook onto;
- ``handler``/``routes``/``control``: HTTP, URLs, the ``/sim/v1`` control endpoints;
- ``api``/``collector``/``subresources``/``defaults``: API semantics;
- ``store``/``watch``: versioned objects, events, watches; ``selectors``/``patches``: pure functions;
- ``resources``/``discovery``/``tables``: what is served and how kubectl sees it;
- ``rbac``/``audit``/``faults``: identities and 403s, the request record, injected failures.
"""

from shared.sim.server import SimServer

__all__ = ["SimServer"]
