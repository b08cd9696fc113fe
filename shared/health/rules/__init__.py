"""Package data: the default values (upstream's six fault-quarantine rule sets), read by ``values``."""
