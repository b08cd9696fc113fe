"""Which operators a simulated cluster runs, and how they are installed on one.

Three operators, each a set of CRDs plus controllers and webhooks: ``jobset`` (JobSet),
``trainer`` (Kubeflow Trainer v2: TrainJob, TrainingRuntime, ClusterTrainingRuntime; needs
JobSet, which Trainer's manifests install with it) and ``mpi-operator`` (MPIJob).
:class:`Operators` registers every controller with the controller manager and every webhook with
the API once; both stay inert for a kind whose CRD is not installed, so :meth:`Operators.install`
(putting the CRDs in) is all that makes a cluster "have" an operator — as on a real cluster, a
TrainJob create on a cluster without the CRD is a 404.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any

from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver.controllers import manager as manager_mod
from shared.sim.operators import (
    jobset,
    jobsetcrd,
    jobsetwebhook,
    mpicrd,
    mpijob,
    trainercrd,
    trainerwebhook,
    trainjob,
)

_CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


class Operator(StrEnum):
    TRAINER = "trainer"
    JOBSET = "jobset"
    MPI_OPERATOR = "mpi-operator"


DEFAULT: tuple[Operator, ...] = (Operator.TRAINER, Operator.JOBSET, Operator.MPI_OPERATOR)
_NEEDS = {Operator.TRAINER: (Operator.JOBSET,)}


def parse(text: str) -> tuple[Operator, ...]:
    """``trainer,jobset,mpi-operator`` → the operators; ``none`` (or empty) → none.

    Raises ValueError naming the unknown name and the allowed ones, or a missing dependency.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["none"] or not names:
        return ()
    allowed = [o.value for o in Operator]
    chosen: list[Operator] = []
    for name in names:
        if name not in allowed:
            raise ValueError(f"unknown operator {name!r}: choose from {', '.join(allowed)} or none")
        if Operator(name) not in chosen:
            chosen.append(Operator(name))
    for operator in chosen:
        for needed in _NEEDS.get(operator, ()):
            if needed not in chosen:
                raise ValueError(
                    f"{operator.value} needs {needed.value} (Kubeflow Trainer runs its TrainJobs as JobSets)"
                )
    return tuple(chosen)


@functools.cache
def _definitions(operator: Operator) -> tuple[dict[str, Any], ...]:
    if operator is Operator.JOBSET:
        return (jobsetcrd.definition(),)
    if operator is Operator.TRAINER:
        return (trainercrd.trainjob(), trainercrd.runtime(cluster=False), trainercrd.runtime(cluster=True))
    return (mpicrd.definition(),)


def crds(operator: Operator) -> list[dict[str, Any]]:
    """The CRD objects ``operator`` installs (new copies)."""
    return [copy.deepcopy(d) for d in _definitions(operator)]


class Operators:
    """The operators' controllers and webhooks, wired into one simulated cluster."""

    def __init__(self, *, api: api_mod.Api, manager: manager_mod.Manager, now: Callable[[], str]) -> None:
        self.api = api
        ctx = manager.ctx
        manager.register(jobset.NAME, jobset.GR, jobset.JobSetController(ctx))
        manager.register(trainjob.NAME, trainjob.GR, trainjob.TrainJobController(ctx))
        manager.register(mpijob.NAME, mpijob.GR, mpijob.MPIJobController(ctx))
        api.webhooks.extend([jobsetwebhook.JobSetWebhook(), trainerwebhook.TrainJobWebhook(api.store, now)])

    def install(self, operators: Iterable[Operator | str]) -> None:
        """Put the CRDs of ``operators`` into the cluster (those already there are left alone)."""
        crd_r = self.api.table.by_group_resource(*_CRDS)
        assert crd_r is not None
        for operator in operators:
            for definition in crds(Operator(operator)):
                if self.api.store.get(_CRDS, "", definition["metadata"]["name"]) is None:
                    self.api.create(crd_r, None, definition)
