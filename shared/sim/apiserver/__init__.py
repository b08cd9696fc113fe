"""The Kubernetes API half of the simulated cluster: what a real control plane without kubelets does.

HTTP and content negotiation (``handler`` on ``exchange`` and ``verbs``, ``routes``, ``bodies``,
``queryparams``), storage, lists and watch (``store``, ``paging``, ``listwatch``, ``watch``), the
verbs and their semantics (``api``, ``writerules``, ``patches``, ``subresources``, ``collector``),
what the server checks and fills in (``admission``, ``defaults``), discovery and OpenAPI, identities
and RBAC (``identities``, ``rbac``, ``impersonation``, ``audit``), fault injection on the API itself
(``faults``), the virtual clock, and the built-in controllers every cluster runs (scheduler, Job
controller). What it needs of the server hosting it is ``host``. Nothing here knows about GPUs: the
``gpu`` package builds on this one, never the other way round.
"""
