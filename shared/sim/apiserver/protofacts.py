"""The five facts the protobuf field table needs that Kubernetes' ``generated.proto`` files do not say.

API group names, the request options every group version accepts, fields the Go types embed with
``json:",inline"``, fields whose explicit zero must survive (set pointers), and fields whose comment
lacks ``+optional`` although Go omits their empty value; each list says where its facts come from.
:mod:`shared.sim.apiserver.protogen` reads everything else from the ``.proto`` text.
"""

from __future__ import annotations

META = "k8s.io.apimachinery.pkg.apis.meta.v1"

# API group of each ``k8s.io.api.<name>.<version>`` package: the ``GroupName`` constant of the
# package's register.go in kubernetes/api (group names are not written in the .proto files).
GROUPS: dict[str, str] = {
    "core": "",
    "apps": "apps",
    "batch": "batch",
    "policy": "policy",
    "rbac": "rbac.authorization.k8s.io",
    "scheduling": "scheduling.k8s.io",
    "coordination": "coordination.k8s.io",
    "events": "events.k8s.io",
    "authorization": "authorization.k8s.io",
    "authentication": "authentication.k8s.io",
    "networking": "networking.k8s.io",
}

# Request options every group version accepts as a body (metav1.AddToGroupVersion registers them in
# each group version besides meta.k8s.io/v1: apimachinery pkg/apis/meta/v1/register.go, optionsTypes).
META_KINDS = ("ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions")

# Fields the Go structs embed with ``json:",inline"``: protobuf nests them as a message, JSON spreads
# their members into the parent (kubernetes/api core/v1 and networking/v1 types.go; the pod-template
# ones agree with the PodTemplateSpec schema published in JobSet's CRD, where ``name`` sits directly
# in configMapKeyRef and the probe handlers directly in a probe).
INLINE = frozenset(
    {
        "k8s.io.api.core.v1.ConfigMapEnvSource.localObjectReference",
        "k8s.io.api.core.v1.ConfigMapKeySelector.localObjectReference",
        "k8s.io.api.core.v1.ConfigMapProjection.localObjectReference",
        "k8s.io.api.core.v1.ConfigMapVolumeSource.localObjectReference",
        "k8s.io.api.core.v1.SecretEnvSource.localObjectReference",
        "k8s.io.api.core.v1.SecretKeySelector.localObjectReference",
        "k8s.io.api.core.v1.SecretProjection.localObjectReference",
        "k8s.io.api.core.v1.Volume.volumeSource",
        "k8s.io.api.core.v1.Probe.handler",
        "k8s.io.api.core.v1.PersistentVolumeSpec.persistentVolumeSource",
        "k8s.io.api.core.v1.EphemeralContainer.ephemeralContainerCommon",
        "k8s.io.api.networking.v1.IngressRule.ingressRuleValue",
    }
)

# Fields whose explicit zero, false or "" must survive although their comment says ``+optional``:
# pointers (``*int32``, ``*bool``, ``*string`` in the Go types), which Go writes only when set and
# whose JSON keeps a set zero even under omitempty, and the few optional fields Go tags without
# omitempty (core/v1 Event.reportingComponent and reportingInstance). Limited to what
# ``kubectl create``, client-go leader election, event recorders and helm send, plus pod-template
# fields people set to 0/false on purpose.
KEEP_ZERO = frozenset(
    {
        "k8s.io.api.apps.v1.DeploymentSpec.replicas",
        "k8s.io.api.apps.v1.DeploymentSpec.revisionHistoryLimit",
        "k8s.io.api.apps.v1.DeploymentSpec.progressDeadlineSeconds",
        "k8s.io.api.apps.v1.ReplicaSetSpec.replicas",
        "k8s.io.api.apps.v1.StatefulSetSpec.replicas",
        "k8s.io.api.apps.v1.StatefulSetSpec.revisionHistoryLimit",
        "k8s.io.api.apps.v1.RollingUpdateStatefulSetStrategy.partition",
        "k8s.io.api.apps.v1.DaemonSetSpec.revisionHistoryLimit",
        "k8s.io.api.batch.v1.JobSpec.parallelism",
        "k8s.io.api.batch.v1.JobSpec.completions",
        "k8s.io.api.batch.v1.JobSpec.activeDeadlineSeconds",
        "k8s.io.api.batch.v1.JobSpec.backoffLimit",
        "k8s.io.api.batch.v1.JobSpec.backoffLimitPerIndex",
        "k8s.io.api.batch.v1.JobSpec.maxFailedIndexes",
        "k8s.io.api.batch.v1.JobSpec.ttlSecondsAfterFinished",
        "k8s.io.api.batch.v1.JobSpec.suspend",
        "k8s.io.api.batch.v1.JobSpec.manualSelector",
        "k8s.io.api.batch.v1.CronJobSpec.startingDeadlineSeconds",
        "k8s.io.api.batch.v1.CronJobSpec.suspend",
        "k8s.io.api.batch.v1.CronJobSpec.successfulJobsHistoryLimit",
        "k8s.io.api.batch.v1.CronJobSpec.failedJobsHistoryLimit",
        "k8s.io.api.core.v1.ConfigMap.immutable",
        "k8s.io.api.core.v1.Secret.immutable",
        "k8s.io.api.core.v1.ServiceAccount.automountServiceAccountToken",
        "k8s.io.api.core.v1.PodSpec.automountServiceAccountToken",
        "k8s.io.api.core.v1.PodSpec.terminationGracePeriodSeconds",
        "k8s.io.api.core.v1.PodSpec.activeDeadlineSeconds",
        "k8s.io.api.core.v1.PodSpec.shareProcessNamespace",
        "k8s.io.api.core.v1.PodSpec.enableServiceLinks",
        "k8s.io.api.core.v1.PodSpec.hostUsers",
        "k8s.io.api.core.v1.PodSpec.setHostnameAsFQDN",
        "k8s.io.api.core.v1.PodSpec.priority",
        "k8s.io.api.core.v1.Probe.terminationGracePeriodSeconds",
        "k8s.io.api.core.v1.SecurityContext.privileged",
        "k8s.io.api.core.v1.SecurityContext.runAsUser",
        "k8s.io.api.core.v1.SecurityContext.runAsGroup",
        "k8s.io.api.core.v1.SecurityContext.runAsNonRoot",
        "k8s.io.api.core.v1.SecurityContext.readOnlyRootFilesystem",
        "k8s.io.api.core.v1.SecurityContext.allowPrivilegeEscalation",
        "k8s.io.api.core.v1.PodSecurityContext.runAsUser",
        "k8s.io.api.core.v1.PodSecurityContext.runAsGroup",
        "k8s.io.api.core.v1.PodSecurityContext.runAsNonRoot",
        "k8s.io.api.core.v1.PodSecurityContext.fsGroup",
        "k8s.io.api.core.v1.ConfigMapVolumeSource.defaultMode",
        "k8s.io.api.core.v1.ConfigMapVolumeSource.optional",
        "k8s.io.api.core.v1.SecretVolumeSource.defaultMode",
        "k8s.io.api.core.v1.SecretVolumeSource.optional",
        "k8s.io.api.core.v1.ProjectedVolumeSource.defaultMode",
        "k8s.io.api.core.v1.KeyToPath.mode",
        "k8s.io.api.core.v1.ConfigMapProjection.optional",
        "k8s.io.api.core.v1.SecretProjection.optional",
        "k8s.io.api.core.v1.DownwardAPIVolumeSource.defaultMode",
        "k8s.io.api.core.v1.DownwardAPIVolumeFile.mode",
        "k8s.io.api.core.v1.ServiceAccountTokenProjection.expirationSeconds",
        "k8s.io.api.core.v1.HostPathVolumeSource.type",
        "k8s.io.api.core.v1.Event.reportingComponent",
        "k8s.io.api.core.v1.Event.reportingInstance",
        "k8s.io.api.core.v1.ConfigMapKeySelector.optional",
        "k8s.io.api.core.v1.SecretKeySelector.optional",
        "k8s.io.api.core.v1.ConfigMapEnvSource.optional",
        "k8s.io.api.core.v1.SecretEnvSource.optional",
        "k8s.io.api.core.v1.PersistentVolumeClaimSpec.storageClassName",
        "k8s.io.api.core.v1.ServiceSpec.allocateLoadBalancerNodePorts",
        "k8s.io.api.policy.v1.PodDisruptionBudgetSpec.minAvailable",
        "k8s.io.api.policy.v1.PodDisruptionBudgetSpec.maxUnavailable",
        "k8s.io.api.authentication.v1.TokenRequestSpec.expirationSeconds",
        "k8s.io.api.coordination.v1.LeaseSpec.holderIdentity",
        "k8s.io.api.coordination.v1.LeaseSpec.leaseDurationSeconds",
        "k8s.io.api.coordination.v1.LeaseSpec.leaseTransitions",
        "k8s.io.api.networking.v1.NetworkPolicyPort.endPort",
        f"{META}.DeleteOptions.gracePeriodSeconds",
        f"{META}.DeleteOptions.orphanDependents",
    }
)

# Fields whose comment lacks ``+optional`` but whose Go JSON tag says omitempty, so an empty value is
# not written (apimachinery pkg/apis/meta/v1/types.go: ListMeta.Continue, ManagedFieldsEntry; api
# events/v1, authorization/v1 and apps/v1 types.go for the others).
OMIT_EMPTY = frozenset(
    {
        "k8s.io.api.events.v1.Event.reportingController",
        "k8s.io.api.events.v1.Event.reportingInstance",
        "k8s.io.api.events.v1.Event.action",
        "k8s.io.api.events.v1.Event.reason",
        "k8s.io.api.events.v1.Event.type",
        "k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpec.namespace",
        "k8s.io.api.apps.v1.DeploymentCondition.reason",
        "k8s.io.api.apps.v1.DeploymentCondition.message",
        f"{META}.ListMeta.continue",
        f"{META}.ManagedFieldsEntry.manager",
        f"{META}.ManagedFieldsEntry.operation",
        f"{META}.ManagedFieldsEntry.apiVersion",
        f"{META}.ManagedFieldsEntry.fieldsType",
        f"{META}.ManagedFieldsEntry.subresource",
    }
)
