"""``CustomResource[Spec, Status]``: the envelope every custom resource of ours shares.

apiVersion, kind and the object's metadata around a spec model and a status model, as read from
the cluster or from a file. A resource declares only what is its own::

    class Certification(CustomResource[CertificationSpec, CertificationStatus]):
        GROUP, VERSION, KIND = "nvcre.nvidia.com", "v1alpha1", "Certification"

``shared.kube.crds.Resource.of`` builds the CustomResourceDefinition from the same class, so the
schema the server checks and the model the programs parse cannot drift apart.

Reading is lenient where the server is the authority: unknown top-level keys are ignored and
metadata keeps the fields it does not name (``managedFields`` and the like), so a newer server's
additions pass through. A missing ``status`` is the status model's defaults: an object nobody has
worked on yet. Writing goes through ``rest``; the documents built here are plain data.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

SpecT = TypeVar("SpecT", bound=BaseModel)
StatusT = TypeVar("StatusT", bound=BaseModel)


class Fields(BaseModel):
    """The base of a resource's spec and status models (and of what they hold): fields named as the
    API writes them, an unknown field refused, so a misspelt key in a file is an error, not a silent
    default. (A class docstring is not inherited, so the CRD schemas of the subclasses stay their own.)"""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


# ``status.phase`` of a resource that runs to a verdict (a Certification, a WorkloadRun, a
# ValidationRequest): a Pod's phases without Unknown. A comment, not a docstring: pydantic would put
# a docstring into the CRD schema of every field of this type.
class Phase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class OwnerReference(BaseModel):
    """metav1.OwnerReference: the object this one belongs to (deleted with it, by default)."""

    model_config = ConfigDict(extra="allow")

    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    blockOwnerDeletion: bool | None = None


class ObjectMeta(BaseModel):
    """metav1.ObjectMeta, the fields our programs read; the others are kept as they came.

    Dumped as it was read: the keys the object carried, in their order (then any field set since),
    never an empty default it did not carry, so ``get -o yaml`` prints an object as the server sent it.
    """

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generateName: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resourceVersion: str | None = None
    generation: int | None = None
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    ownerReferences: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)
    _read: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_keys(cls, data: Any, handler: ModelWrapValidatorHandler[ObjectMeta]) -> ObjectMeta:
        meta = handler(data)
        if isinstance(data, dict):
            meta._read = tuple(data)
        return meta

    @model_serializer(mode="wrap")
    def _as_read(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        keys = [k for k in self._read if k in dumped]
        keys += [k for k in dumped if k not in keys and k in self.model_fields_set]
        return {k: dumped[k] for k in keys}


def _schema(schema: dict[str, Any], resource: type[Any]) -> None:
    """The JSON Schema editors read: apiVersion and kind default to the resource's own; status
    has no default to show (the server, not the author, writes it)."""
    properties = schema.get("properties") or {}
    if resource.KIND:
        properties["apiVersion"]["default"] = resource.api_version()
        properties["kind"]["default"] = resource.KIND
    properties["status"].pop("default", None)


class CustomResource(BaseModel, Generic[SpecT, StatusT]):
    """One custom object: a subclass names its GROUP, VERSION and KIND and its two models."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=_schema)

    GROUP: ClassVar[str] = ""
    VERSION: ClassVar[str] = ""
    KIND: ClassVar[str] = ""

    apiVersion: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: SpecT
    status: StatusT = Field(default=None, validate_default=True)
    """Absent on an object nobody has worked on yet: ``_envelope`` puts the status model's defaults."""

    @model_validator(mode="before")
    @classmethod
    def _envelope(cls, data: Any) -> Any:
        """Fill apiVersion and kind from the class, and an absent status with its defaults."""
        if not isinstance(data, dict):
            return data
        filled = {"apiVersion": cls.api_version(), "kind": cls.KIND, **data}
        if filled.get("status") is None:
            filled["status"] = {}
        return filled

    @classmethod
    def api_version(cls) -> str:
        return f"{cls.GROUP}/{cls.VERSION}"

    @classmethod
    def spec_model(cls) -> type[BaseModel]:
        return _model_of(cls, "spec")

    @classmethod
    def status_model(cls) -> type[BaseModel]:
        return _model_of(cls, "status")

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        """The object's namespace; ``default`` when a file names none (as kubectl reads it)."""
        return self.metadata.namespace or "default"

    @property
    def deleting(self) -> bool:
        """Deleted, and held only by a finalizer until its controller lets go."""
        return bool(self.metadata.deletionTimestamp)

    def creation_document(self, namespace: str | None = None) -> dict[str, Any]:
        """What to POST: name, labels and annotations, the spec; no status (the server ignores it
        on a resource with a status subresource) and nothing the server assigns."""
        metadata: dict[str, Any] = {"name": self.name}
        for key in ("labels", "annotations"):
            if value := getattr(self.metadata, key):
                metadata[key] = dict(value)
        if namespace:
            metadata["namespace"] = namespace
        return {
            "apiVersion": self.apiVersion,
            "kind": self.kind,
            "metadata": metadata,
            "spec": self.spec.model_dump(mode="json", exclude_none=True),
        }


def _model_of(resource: type[CustomResource[Any, Any]], part: str) -> type[BaseModel]:
    model = resource.model_fields[part].annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{resource.__name__}.{part} is not a model: parametrize CustomResource[Spec, Status]")
    return model
