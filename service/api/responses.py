"""Serialise a response model once.

A route that returns a model instance has FastAPI dump it, validate the dump against the declared
``response_model`` and encode the result: three passes over an object the route just built and pydantic
already validated. Routes on the hot path return :func:`json_response` instead (FastAPI passes a
``Response`` through untouched) and keep ``response_model=`` so the OpenAPI schema is unchanged.
"""

from __future__ import annotations

from fastapi import Response
from pydantic import BaseModel


def json_response(model: BaseModel) -> Response:
    """``model`` as compact UTF-8 JSON, in one pass through pydantic's serialiser."""
    return Response(model.model_dump_json(), media_type="application/json")
