"""The ``offsetguard`` command line: one sub-command module per concern, registered in :mod:`cli.main`."""
