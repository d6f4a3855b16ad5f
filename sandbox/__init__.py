"""A real KRaft Kafka on loopback for tests and ``make run`` (see :mod:`sandbox.cluster`; not
imported here: every ``offsetguard`` command registers the sandbox commands, and only they need it)."""
