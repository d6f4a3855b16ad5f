"""Incident drills: cause one incident class for real on a topic and group made for the drill, wait for
the running service to alert on it (and notify), then clean up and say PASS or FAIL (see docs/drills.md)."""
