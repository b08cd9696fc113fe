"""``adaptive``: our default isolation strategy — fewer rounds and no more node-minutes than halving.

Under the cost model (``model.test_minutes``) every test pays minutes of start-up whatever its
size, so the wall time of an isolation is its number of rounds, and a node costs least in the
smallest group. The strategy has two modes over one reference pool (``references``: nodes that
passed, handed out one test per round, each suspect beside one of them):

- **Hard mode** (``hard``, reading ``hardview``) while the results fit hard node faults and faulty
  links between domains: screening in pairs inside each topology domain with one inter-domain
  group beside them (``screening``), then each member of a failed group that never passed beside
  a reference — a hard-faulty node never passes, so one failure there names it, two rounds for any
  number of hard faults — and accused links narrowed and confirmed by direct tests (``linkprobes``).
- **Flaky mode** (``flaky``, reading ``flakyview``) from the first result hard faults cannot
  explain (a group failed whose members all passed, on no link in doubt) to the end of the run:
  a failure beside references counts against the one member that was not one, a small failure
  against all its members (suspects, tested beside references only), a large one (a full-scale
  run) only asks for more passes; a node is blamed after failing beside two different
  references, pairs are never run twice, and every node is rescreened with new partners until
  it has enough clean passes.

A node that passed cannot be hard-faulty, so in hard mode a reference is never "bad"; only two
flaky nodes failing in step (one beside a healthy node it then passes with, the other as that
node's reference) can make hard mode blame a healthy node, which a second reference would prevent
at the price of a third round (docs/benchmarks.md, isolation, measures how often).

Pure: the state is recomputed from the history on every call; the fault set is never seen. The
history may start with a round the strategy did not plan (a failed full-scale run of every node).
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.certify.isolate import flaky, hard, hardview, model, screening


def adaptive(
    nodes: Sequence[model.Node], history: Sequence[model.RoundResult], settings: model.Settings
) -> model.Decision:
    """Hard mode while results fit hard faults and links; flaky mode from the first misfit on."""
    domains = model.by_domain(nodes)
    if not history:
        groups = screening.screen(domains, settings.screen_size or 2, spanning=True)
        if groups:
            return model.Plan("screening", groups)
        return model.Verdict(healthy=frozenset(), message="too few nodes for a group test")
    view = hardview.HardView.read(nodes, history)
    if view.inconsistent:
        return flaky.plan(nodes, history, settings)
    return hard.plan(view, domains, history, settings)
