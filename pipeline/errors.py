"""Errors of the Spark pipeline, under :class:`collectors.errors.OffsetguardError`::

PipelineError            the job cannot run as asked (bad input, missing jars, Spark failed)
└── ArchiveError         the commit archive could not be written or read (.path)
"""

from __future__ import annotations

from typing import Any

from collectors.errors import OffsetguardError


class PipelineError(OffsetguardError):
    """The pipeline cannot run as asked; the message says what to change."""


class ArchiveError(PipelineError):
    """The commit archive could not be written or read; ``path`` names the file or directory."""

    def __init__(self, message: str, *, path: str | None = None, **where: Any) -> None:
        super().__init__(message, **where)
        self.path = path
