"""The library behind aicr, nvcrectl and nvsentinel.

Base modules (errors, output, yamlio, cel, kube) sit under the domain packages (recipe, bundle,
certify, health); the three programs sit on top and never import one another. Product code never
imports ``shared.sim``.
"""

__version__ = "0.1.0"
