"""Typed response (and request) models of the HTTP API, one module per resource. Times are epoch seconds."""
