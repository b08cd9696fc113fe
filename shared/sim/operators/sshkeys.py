"""The SSH key pair both MPI operators put in a ``kubernetes.io/ssh-auth`` Secret.

Kubeflow Trainer's MPI plugin (``pkg/runtime/framework/plugins/mpi/mpi.go`` ``buildSSHAuthSecret``)
and the MPI Operator (``newSSHAuthSecret``) both generate an ECDSA P-521 key: ``ssh-privatekey`` is
the SEC1 PEM (``EC PRIVATE KEY``), ``ssh-publickey`` the authorized_keys line
(``ecdsa-sha2-nistp521 AAAA…``). Secret data is base64, as the API stores it. The key itself is
made by ``cryptography`` in ``shared.sim.apiserver.tls``, the simulator's one module that uses it.
"""

from __future__ import annotations

import base64

from shared.sim.apiserver import tls

PRIVATE_KEY = "ssh-privatekey"
PUBLIC_KEY = "ssh-publickey"


def key_pair() -> dict[str, str]:
    """A new key pair as Secret ``data`` (values base64-encoded)."""
    private, public = tls.ssh_key_pair()
    return {
        PRIVATE_KEY: base64.b64encode(private.encode()).decode(),
        PUBLIC_KEY: base64.b64encode(public.encode()).decode(),
    }
