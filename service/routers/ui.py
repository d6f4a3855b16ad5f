"""``/ui``: the on-call console (docs/console.md). Static files only: every figure on its pages comes from
the API, with the token the user enters, so the console has exactly the API's access rules. Nothing is
fetched from anywhere else (the Content-Security-Policy says so to the browser)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse, Response

from service.api.errors import NotFound

router = APIRouter(include_in_schema=False)
STATIC = Path(__file__).resolve().parent.parent / "ui" / "static"
FILES = {"console.js": "text/javascript", "console.css": "text/css"}
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' blob: data:; object-src 'none';"
    " base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


@router.get("/ui")
async def console_root() -> RedirectResponse:
    return RedirectResponse("/ui/", status_code=308)


@router.get("/ui/")
async def console_page() -> Response:
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=HEADERS)


@router.get("/ui/{name}")
async def console_file(name: str) -> Response:
    media_type = FILES.get(name)
    if media_type is None:
        raise NotFound(f"no console file {name!r}", code="not_found")
    return FileResponse(STATIC / name, media_type=media_type, headers=HEADERS)
