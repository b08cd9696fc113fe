"""Health: what nvsentinel knows about a node's hardware and what it does about it.

Domain layer (over ``shared/kube``, ``shared/cel``, ``shared/nodes``). It holds the HealthEvent
model and its custom resource (``event``, ``resource``), node conditions (``conditions``), the
fault-quarantine rule sets in upstream's values layout (``rules``), the circuit breaker
(``breaker``), the per-event quarantine decision and its node actions (``quarantine``), the
controller loop (``controller``) and the node agents' parsers (``xid``, ``monitors``).
"""
