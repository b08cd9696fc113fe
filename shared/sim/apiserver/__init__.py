"""The Kubernetes API half of the simulated cluster: what a real control plane without kubelets does.

HTTP and content negotiation (``handler``, ``routes``), storage and watch (``store``, ``watch``),
the verbs and their semantics (``api``, ``patches``, ``subresources``, ``collector``), what the
server checks and fills in (``defaults``), discovery and OpenAPI, identities and RBAC (``rbac``,
``audit``), fault injection on the API itself (``faults``), the virtual clock, and the built-in
controllers every cluster runs (scheduler, Job controller). Nothing here knows about GPUs: the
``gpu`` package builds on this one, never the other way round.
"""
