"""The on-call console's page latencies, as a user meets them: Debian's Chromium (headless, Playwright)
opens each page, and the page itself says how long it took to be drawn (every API call it makes answered
and rendered: ``data-took-ms``, from the navigation for a page opened, from the route change for one
reached by a link; Playwright's own waits poll too coarsely, up to 500 ms late, to time with). Used by
``bench/api`` (its ``console`` phase) on its server.

Pages: the overview (firing alerts, clusters, health, the first page of groups), an alert, a group with its
timeline, a search over the groups, and the next page of groups. Each is measured ``rounds`` times, a
random alert and group each time; the first visit of each is a warm-up and not counted.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
TARGET_P99_MS = 200.0


def available() -> str | None:
    """Why the console cannot be measured here (None: it can)."""
    if shutil.which("chromium") is None and not os.path.exists(CHROMIUM):
        return f"no {CHROMIUM} (deploy/tools/install-chromium.sh)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (make install)"
    return None


def measure(
    url: str, cluster: str, groups: int, alert_ids: list[str], rounds: int, seed: int = 3
) -> dict[str, Any]:
    """Milliseconds per page kind: ``{"overview": [...], "alert": [...], ...}``, and errors seen."""
    from playwright.sync_api import sync_playwright

    rng = random.Random(seed)
    took: dict[str, list[float]] = {k: [] for k in ("overview", "alert", "group", "search", "next_page")}
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("response", lambda r: r.status >= 400 and errors.append(f"{r.status} {r.url}"))

            def timed(kind: str, action: Callable[[], None], counted: bool) -> None:
                page.evaluate("document.body && (document.body.dataset.ready = 'false')")
                action()
                page.wait_for_selector("body[data-ready=true]", timeout=30_000)
                if counted:
                    took[kind].append(float(page.evaluate("document.body.dataset.tookMs")))

            def groups_loaded(action: Callable[[], None], kind: str, counted: bool) -> None:
                loads = int(page.evaluate("document.getElementById('groups').dataset.loads"))
                action()
                page.wait_for_selector(f"#groups[data-loads='{loads + 1}']", timeout=30_000)
                if counted:
                    took[kind].append(
                        float(page.evaluate("document.getElementById('groups').dataset.tookMs"))
                    )

            def hash_to(route: str) -> Callable[[], None]:
                return lambda: page.evaluate(f"location.hash = {route!r}")

            for i in range(rounds + 1):
                counted = i > 0
                timed("overview", lambda: page.goto(f"{url}/ui/"), counted)
                # a search matching 10 groups (group-0120 .. group-0129); timed from the request (after the
                # page's 250 ms typing debounce) to the rows drawn
                needle = f"group-{rng.randrange(groups // 10):03d}"
                groups_loaded(lambda n=needle: page.fill("#groups input[type=search]", n), "search", counted)
                timed("overview", lambda: page.goto(f"{url}/ui/"), False)
                groups_loaded(lambda: page.click("#groups button:has-text('next')"), "next_page", counted)
                timed("alert", hash_to(f"#/alerts/{rng.choice(alert_ids)}"), counted)
                group = f"group-{rng.randrange(groups):04d}"
                timed("group", hash_to(f"#/groups/{cluster}/{group}"), counted)
        finally:
            browser.close()
    return {"pages_ms": took, "errors": errors}
