"""Certification: proving with workloads that GPU nodes can run demanding jobs at full speed.

Domain layer, above ``shared/kube``. It never changes node state.

- ``models``: the Certification resource (upstream's spec fields, our resumable status);
- ``thresholds``: CEL over ``value`` per metric key, compiled when a spec loads;
- ``catalog`` (+ ``catalog/tests.yaml``): which workload each category runs;
- ``render``: target nodes, the first round's groups, Jobs per docs/formats.md;
- ``results``: a group's log → measurements, pass/fail and reason (``parsers`` read the logs);
- ``isolate``: pure isolation strategies (``adaptive`` default, ``halving`` upstream's);
- ``runner``: one level-based reconcile step; ``resource``: the object in the cluster;
- ``report``: tables and data; ``service``: what the ``nvcrectl`` commands call.
"""
