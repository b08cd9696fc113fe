"""The controllers every real control plane runs, for the simulated cluster.

kube-controller-manager's Deployment, ReplicaSet, DaemonSet and StatefulSet controllers, the
garbage collector's background sweep of dangling owner references, the node lifecycle
controller with the node heartbeats it watches, and the Event TTL — each a module here, each
level-based: it re-reads the object it acts on and what that object owns, so running it twice
does nothing twice, and a restart loses nothing. :class:`manager.Manager` routes the store's
events to them and runs them; the kubelet loop (``shared.sim.gpu.kubelet``) drives the manager
next to the Job controller, in virtual time. Writes go through the API verbs, so watchers see
them as they would see a real controller's.
"""
