"""Operating nvsentinel: the configuration and the wiring that span health and the lifecycle.

Composition layer, above the domain packages ``shared.health`` (fault quarantine, drain,
remediation) and ``shared.lifecycle`` (the validation lifecycle), which stand on their own below
it; the lifecycle imports health (it takes repaired nodes over from quarantine), never the reverse.
``config`` models nvsentinel's whole values file and loads it, ``service`` holds the commands that
read that file or span both packages (``nvsentinel run``, ``crds install``), ``validation`` what
``nvsentinel validation`` calls. Nothing here prints.
"""
