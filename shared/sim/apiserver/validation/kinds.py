"""Which checks judge which built-in kind, on create and on update.

A kind missing from the table (Event, and any built-in served later) gets the ObjectMeta checks
only, with DNS-subdomain names, which is what upstream applies to every object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import apps, autoscaling, batch, budgets, core, dra, formats, meta, pods, rbac

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Checks:
    create: Callable[[Obj], list[FieldError]]
    update: Callable[[Obj, Obj], list[FieldError]]


def _generic_create(obj: Obj) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)


def _generic_update(obj: Obj, old: Obj) -> list[FieldError]:
    return meta.object_meta_update(obj.get("metadata") or {}) + _generic_create(obj)


GENERIC = Checks(_generic_create, _generic_update)

TABLE: dict[tuple[str, str], Checks] = {
    ("", "Pod"): Checks(pods.create, pods.update),
    ("", "Namespace"): Checks(core.namespace, core.namespace_update),
    ("", "ConfigMap"): Checks(core.config_map, core.config_map_update),
    ("", "Secret"): Checks(core.secret, core.secret_update),
    ("", "Node"): Checks(core.node, core.node_update),
    ("", "Service"): Checks(core.service, core.service_update),
    ("", "ServiceAccount"): Checks(core.service_account, core.service_account_update),
    ("apps", "Deployment"): Checks(apps.deployment, apps.deployment_update),
    ("apps", "ReplicaSet"): Checks(apps.replicaset, apps.replicaset_update),
    ("apps", "DaemonSet"): Checks(apps.daemonset, apps.daemonset_update),
    ("apps", "StatefulSet"): Checks(apps.statefulset, apps.statefulset_update),
    ("batch", "Job"): Checks(batch.job, batch.job_update),
    ("policy", "PodDisruptionBudget"): Checks(budgets.pod_disruption_budget, budgets.pod_disruption_budget_update),
    ("coordination.k8s.io", "Lease"): Checks(budgets.lease, budgets.lease_update),
    ("autoscaling", "HorizontalPodAutoscaler"): Checks(
        autoscaling.horizontal_pod_autoscaler, autoscaling.horizontal_pod_autoscaler_update
    ),
    ("resource.k8s.io", "DeviceClass"): Checks(dra.device_class, dra.device_class_update),
    ("resource.k8s.io", "ResourceClaim"): Checks(dra.resource_claim, dra.resource_claim_update),
    ("resource.k8s.io", "ResourceClaimTemplate"): Checks(
        dra.resource_claim_template, dra.resource_claim_template_update
    ),
    ("resource.k8s.io", "ResourceSlice"): Checks(dra.resource_slice, dra.resource_slice_update),
    ("rbac.authorization.k8s.io", "Role"): Checks(
        lambda o: rbac.role(o, namespaced=True), lambda o, p: rbac.role_update(o, p, namespaced=True)
    ),
    ("rbac.authorization.k8s.io", "ClusterRole"): Checks(
        lambda o: rbac.role(o, namespaced=False), lambda o, p: rbac.role_update(o, p, namespaced=False)
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): Checks(
        lambda o: rbac.binding(o, namespaced=True), lambda o, p: rbac.binding_update(o, p, namespaced=True)
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): Checks(
        lambda o: rbac.binding(o, namespaced=False), lambda o, p: rbac.binding_update(o, p, namespaced=False)
    ),
}


def checks(group: str, kind: str) -> Checks:
    return TABLE.get((group, kind), GENERIC)
