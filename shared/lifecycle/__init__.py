"""The node validation lifecycle: ValidationRequests gate nodes, run tests on them and release them.

A domain package over ``health/`` and ``certify/``: it reads quarantine state and takes repaired
nodes over from it, and runs tests through the certification engine; neither imports it.
``models`` and ``resource`` hold the ValidationRequest custom resource, ``settings`` the
``lifecycle-manager`` section of nvsentinel's values, ``sessions`` the per-node bookkeeping and
gate, ``groups`` the test-group builder, ``criteria`` the CEL readiness checks, ``providers`` the
Certification and Job providers, ``reconcile`` one step of a request, ``triggers`` the automatic
requests (repaired and new nodes) and ``controller`` the loop. What loads the whole values file,
starts this loop beside quarantine (``nvsentinel run``) and serves ``nvsentinel validation`` sits
above, in ``shared.operate``.
"""
