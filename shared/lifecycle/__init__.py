"""The node validation lifecycle: ValidationRequests gate nodes, run tests on them and release them.

A domain package beside ``health/`` and ``certify/`` (it reads quarantine state and hands over from
it, and runs tests through the certification engine). ``models`` and ``resource`` hold the
ValidationRequest custom resource, ``settings`` the ``lifecycle-manager`` values, ``sessions``
the per-node bookkeeping and gate, ``groups`` the test-group builder, ``criteria`` the CEL
readiness checks, ``providers`` the Certification and Job providers, ``reconcile`` one step of a
request, ``triggers`` the automatic requests (repaired and new nodes), ``controller`` the loop that
``nvsentinel run`` starts, and ``service`` what ``nvsentinel validation`` calls.
"""
