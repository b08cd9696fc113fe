"""``aicr bundle -o oci://…`` and ``aicr verify oci://…``: a bundle pushed to a registry, pulled and checked.

A push parses the reference first (a bad one is exit 2 before anything is rendered), renders the
bundle exactly as ``aicr bundle -o DIR`` would into a private scratch folder, packs it
(``oci.pack``) and uploads it (``registry.push``); nothing is left on the disk, unlike upstream,
which keeps ``./bundle`` and an OCI layout beside it. A verification pulls the manifest and its
layer, checks the layer against the manifest's digests, unpacks it into a scratch folder and runs
the same checksum verification as ``aicr verify DIR``: a tampered blob or file is a failed
verdict (exit 1) naming what differs, a registry that cannot be reached or refuses is an error.

``registry`` (and with it oras and requests) is imported only here, inside the functions.
"""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel, Field

from shared import __version__, errors, files
from shared.bundle import checksums, oci, service
from shared.bundle.request import BundleRequest
from shared.bundle.result import OUTPUT_PLACEHOLDER, BundleResult

BUNDLE_FOLDER = "bundle"
"""The folder the printed deployment steps pull the artifact into (upstream builds into ``./bundle``)."""


def _reference(target: str, *, where: str, allow_digest: bool) -> oci.Reference:
    return oci.parse(target, where=where, default_tag=oci.default_tag(__version__), allow_digest=allow_digest)


class Published(BaseModel):
    """A bundle pushed to a registry: what was written, where it went, and how to deploy it."""

    bundle: BundleResult
    reference: str
    digest: str
    verify: str
    """The ``aicr verify`` line that checks exactly this artifact (by digest)."""
    pull: str
    """The ``oras pull`` line that fetches exactly this artifact (by digest) into ``bundle/``."""

    def text(self) -> str:
        lines = [
            "",
            f"{self.bundle.title} generated successfully!",
            f"Pushed to: {self.reference}",
            f"Digest: {self.digest}",
            f"Files generated: {len(self.bundle.files)}",
            f"Verify: {self.verify}",
        ]
        if self.bundle.notes:
            lines += ["", "Note:", *(f"  - {note}" for note in self.bundle.notes)]
        steps = [self.pull, *(step.replace(OUTPUT_PLACEHOLDER, BUNDLE_FOLDER) for step in self.bundle.steps)]
        lines += ["", "To deploy:", *(f"  {i}. {step}" for i, step in enumerate(steps, start=1))]
        return "\n".join(lines) + "\n"


def bundle(request: BundleRequest, *, target: str, plain_http: bool = False, insecure_tls: bool = False) -> Published:
    """Render the bundle ``request`` asks for and push it to ``target`` (``oci://…``).

    ``request.output`` is ignored: the bundle is rendered into a scratch folder that is removed
    afterwards. Raises InvalidInput for a bad reference or bundle input (nothing pushed) and the
    registry's errors (see ``registry``)."""
    from shared.bundle import registry

    reference = _reference(target, where="--output", allow_digest=False)
    with files.scratch_directory(".aicr-oci-") as scratch:
        local = scratch / BUNDLE_FOLDER
        result = service.bundle(request.model_copy(update={"output": local, "force": False}))
        artifact = oci.pack(local, version=__version__)
        digest = registry.push(artifact, reference, scratch=scratch, plain_http=plain_http, insecure_tls=insecure_tls)
    pinned = dataclasses.replace(reference, tag=None, digest=digest)
    flag = " --plain-http" if plain_http else ""
    return Published(
        bundle=result,
        reference=reference.text,
        digest=digest,
        verify=f"aicr verify{flag} {pinned.text}",
        pull=f"oras pull{flag} {pinned.plain} -o {BUNDLE_FOLDER}",
    )


class ArtifactVerification(BaseModel):
    """What ``aicr verify oci://…`` found; ``passed`` is the verdict (exit 1 when false)."""

    reference: str
    digest: str
    problems: list[str] = Field(default_factory=list)
    """How the artifact differs from its manifest (layer digest, size, members refused)."""
    bundle: checksums.Verification | None = None
    """The checksum verification of the unpacked bundle (None when nothing could be unpacked)."""

    @property
    def passed(self) -> bool:
        return not self.problems and self.bundle is not None and self.bundle.passed

    def text(self) -> str:
        lines = [f"Pulled {self.reference} ({self.digest})", *(f"tampered: {p}" for p in self.problems)]
        body = "\n".join(lines) + "\n"
        if self.bundle is not None:
            report = self.bundle.text()
            if self.problems and self.bundle.passed:
                report = report.replace(
                    "Bundle verification: PASSED", "Bundle verification: FAILED (artifact tampered)"
                )
            return body + report
        return body + "Bundle verification: FAILED (the artifact holds no bundle that can be checked)\n"


def verify(target: str, *, plain_http: bool = False, insecure_tls: bool = False) -> ArtifactVerification:
    """Pull the artifact ``target`` names and verify it as ``aicr verify DIR`` verifies a folder.

    Raises InvalidInput for a bad reference or an artifact that is no aicr bundle, and the
    registry's errors; a bundle that differs from its manifest or its checksums is a result with
    ``passed`` false."""
    from shared.bundle import registry

    reference = _reference(target, where="DIRECTORY", allow_digest=True)
    digest, _manifest, layer, blob = registry.pull(reference, plain_http=plain_http, insecure_tls=insecure_tls)
    problems = oci.layer_problems(layer, blob)
    with files.scratch_directory(".aicr-verify-") as scratch:
        local = scratch / BUNDLE_FOLDER
        problems += oci.unpack(layer, blob, local)
        verification: checksums.Verification | None = None
        if local.is_dir():  # nothing is unpacked from a layer that is no gzip tar: that problem is said
            try:
                verification = service.verify(local)
            except errors.InvalidInput as exc:
                problems.append(f"the unpacked artifact is not a bundle: {exc.message}")
    if verification is not None:
        verification = verification.model_copy(update={"directory": reference.text})
    return ArtifactVerification(reference=reference.text, digest=digest, problems=problems, bundle=verification)
