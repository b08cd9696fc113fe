"""The server-side checks a Kubernetes 1.34 API server applies to built-in kinds, with its texts.

Each module mirrors one upstream validation file: :mod:`.formats` the string formats of
apimachinery's ``pkg/util/validation`` (names, label keys and values, ports), :mod:`.meta`
ObjectMeta and label selectors, :mod:`.pods` the pod spec (also inside workload templates) and
:mod:`.containers` its containers, :mod:`.core`, :mod:`.apps`, :mod:`.batch`, :mod:`.rbac` and
:mod:`.budgets` (PodDisruptionBudget, Lease) the kinds of those API groups, :mod:`.quantity`
resource quantities, :mod:`.gojson` Go's JSON syntax errors, :mod:`.defaulting` the defaults a
real server writes before it validates (:mod:`.poddefaults` those of a pod spec), and
:mod:`.kinds` the table that picks the checks for a kind. Custom resources are judged elsewhere.
"""
