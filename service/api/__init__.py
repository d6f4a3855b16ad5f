"""The on-call HTTP API's plumbing: errors, auth, dependencies, response schemas and the views the
routers in :mod:`service.routers` translate into them."""
