"""The console in a real browser: Debian's Chromium, headless, driven by Playwright, on ``offsetguard
serve`` (a process of its own) watching the 1-node sandbox, after a rewind replayed for real by an active
group member (150 read, back to 50: 100 messages replayed).

It checks what on-call would look at: the overview lists the firing rewind and finds the group by search;
the alert page shows summary, magnitude and evidence, refuses the ack without a token and with a read
token, and acknowledges with a write token; the group page's timeline draws the committed offset against
the log start and end with the rewind marked; the reset-plan preview gives the offsets of a time before
the rewind. No page logs a console error, and every request stays on the service's origin. Screenshots
go to the test's directory (and, as ``console-<page>.png``, to ``OFFSETGUARD_SCREENSHOTS`` when set: how
docs/images are made).
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from collectors.snapshots import MANIFEST_FILE
from drills.kafka_io import DrillKafka
from sandbox import security
from sandbox.cluster import SandboxCluster
from tests.e2e.harness import wait_for
from tests.support.daemons import ensure_binary, offsetguard_serve

pytestmark = pytest.mark.integration
READ_TOKEN = "console-read-token-0123456789"
WRITE_TOKEN = "console-write-token-0123456789"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


@dataclass(frozen=True)
class Incident:
    url: str
    group: str
    topic: str
    alert_id: str
    before_rewind: float  # a moment when the group had committed 150


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def incident(kafka1: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Incident]:
    tmp = tmp_path_factory.mktemp("console")
    # Its own group only: the shared sandbox holds the groups of the tests before it, whose incidents the
    # tail replays at start; their snapshots would use up the hourly budget before this rewind's.
    cluster = {**kafka1.cluster_config("sandbox"), "groups": {"include": ["console-rewind-.*"]}}
    config = {
        "clusters": [cluster],
        "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 1, "configs": 5},
        "store": {"path": str(tmp / "og.db")},
        "snapshots": {"directory": str(tmp / "snapshots")},
        "api": {
            "tokens": [
                {"name": "oncall-read", "token": READ_TOKEN, "scopes": ["read"]},
                {"name": "oncall", "token": WRITE_TOKEN, "scopes": ["write"]},
            ]
        },
    }
    name = f"console-rewind-{uuid.uuid4().hex[:6]}"
    kafka = DrillKafka(kafka1.cluster_settings("sandbox", principal=security.ADMIN))
    with offsetguard_serve(config, tmp) as url:
        groups = f"{url}/api/v1/clusters/sandbox/groups"
        kafka.create_topic(name)
        kafka.produce(name, 200)
        member = kafka.member(name, name)
        try:
            member.join()
            member.commit(150)
            wait_for(lambda: _committed(f"{groups}/{name}") == 150, 60, "the service sees 150")
            time.sleep(1.5)  # the history has 150 for a while
            before = time.time() - 0.5
            member.commit(50)
            alerts = f"{url}/api/v1/alerts?group={name}&kind=offset_rewind"
            [alert] = wait_for(lambda: _json(alerts)["alerts"], 60, "the rewind alert")
            yield Incident(url, name, name, alert["id"], before)
        finally:
            member.stop()
            kafka.remove(name, name)
            kafka.close()


def _committed(url: str) -> int | None:
    try:
        return int(_json(url)["partitions"][0]["committed_offset"])
    except (OSError, LookupError):
        return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = ensure_binary("chromium", "install-chromium.sh")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Console:
    """One browser page on the console, recording console errors and every request's origin."""

    def __init__(self, browser: Any, base: str, shots: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.base, self.shots = base, shots
        self.expected_refusals: list[tuple[int, str]] = []
        self.errors: list[str] = []
        self.refused: list[tuple[int, str]] = []  # (status, path) of every answer >= 400
        self.origins: set[str] = set()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.origins.add(_origin(r.url)))
        self.page.on("response", self._response)

    def _response(self, response: Any) -> None:
        # /readyz answers 503 while a collector is stale: the page shows "not ready", nothing refused
        path = _path(response.url)
        if response.status >= 400 and path != "/readyz":
            self.refused.append((response.status, path))

    def _console(self, message: Any) -> None:
        # Chromium logs each answer >= 400 as "Failed to load resource": those are in ``refused``
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(message.text)

    def open(self, route: str) -> Any:
        self.page.goto(f"{self.base}/ui/{route}")
        self.page.wait_for_selector("body[data-ready=true]")
        return self.page

    def go(self, route: str) -> Any:
        self.page.evaluate("document.body.dataset.ready = 'false'")
        self.page.evaluate(f"location.hash = {route!r}")
        self.page.wait_for_selector("body[data-ready=true]")
        return self.page

    def token(self, value: str) -> None:
        self.page.fill("#token", value)
        self.page.evaluate("document.body.dataset.ready = 'false'")
        self.page.click("#token-form button[type=submit]")
        self.page.wait_for_selector("body[data-ready=true]")

    def shot(self, name: str) -> None:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        extra = os.environ.get("OFFSETGUARD_SCREENSHOTS")
        if extra:
            Path(extra).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(extra) / f"console-{path.name}")


@pytest.fixture
def console(browser: Any, incident: Incident, tmp_path: Path) -> Iterator[Console]:
    c = Console(browser, incident.url, tmp_path)
    try:
        yield c
    finally:
        c.page.close()
    assert c.errors == [], c.errors
    assert c.origins == {incident.url}, c.origins
    assert c.refused == c.expected_refusals, c.refused


def _origin(url: str) -> str:
    return "/".join(url.removeprefix("blob:").split("/")[:3])  # a download's blob: URL is the page's


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_overview_shows_the_firing_rewind_and_finds_the_group(console: Console, incident: Incident) -> None:
    page = console.open("")
    firing = page.locator("#firing")
    assert firing.locator(f"a[href='#/alerts/{incident.alert_id}']").count() == 1
    assert int(firing.locator("[data-severity=critical] b").inner_text()) >= 1
    assert page.locator("#health tbody tr").count() >= 6  # the collectors and the tail
    loads = int(page.locator("#groups").get_attribute("data-loads") or 0)
    page.fill("#groups input[type=search]", incident.group.upper())
    page.wait_for_selector(f"#groups[data-loads='{loads + 1}']")  # the search's page drawn
    assert page.locator("#groups tbody tr td:first-child").all_inner_texts() == [incident.group]
    console.shot("overview")


def test_alert_page_ack_refused_without_token_and_read_token_done_with_write(
    console: Console, incident: Incident
) -> None:
    alert_url = f"{incident.url}/api/v1/alerts/{incident.alert_id}"
    wait_for(lambda: _json(alert_url)["snapshot_id"], 60, "the rewind's snapshot")
    page = console.open(f"#/alerts/{incident.alert_id}")
    assert "offset_rewind" in page.locator("h1").inner_text()
    magnitude = page.locator("#magnitude").inner_text()
    assert "messages_replayed" in magnitude and "100" in magnitude
    assert "150" in page.locator("#summary").inner_text() and page.locator("#evidence dt").count() > 0
    console.shot("alert")
    page.fill("#ack-comment", "looking")
    page.click("#ack-form button")
    assert "needs a bearer token" in page.locator("#action-result [role=alert]").inner_text()
    console.token(READ_TOKEN)
    page.fill("#ack-comment", "looking")
    page.click("#ack-form button")
    assert "lacks the 'write' scope" in page.locator("#action-result [role=alert]").inner_text()
    console.token(WRITE_TOKEN)
    page.fill("#ack-comment", "replay expected: reprocessing")
    page.click("#ack-form button")
    page.wait_for_selector("#action-result .ok")
    page.locator("#summary", has_text="by oncall").wait_for()
    ack_path = f"/api/v1/alerts/{incident.alert_id}/ack"
    console.expected_refusals = [(401, ack_path), (403, ack_path)]
    ack = _json(alert_url)["ack"]
    assert (ack["by"], ack["comment"]) == ("oncall", "replay expected: reprocessing")
    with page.expect_download() as download:
        page.click("#snapshot")
    assert download.value.suggested_filename.endswith(".tar.gz")
    with tarfile.open(download.value.path()) as snapshot:  # the __consumer_offsets evidence
        assert any(name.endswith(MANIFEST_FILE) for name in snapshot.getnames())
    page.fill("#silence-comment", "reprocessing all night")
    page.click("#silence-form button")
    page.wait_for_selector("#action-result .ok")
    [silence] = _json(f"{incident.url}/api/v1/silences")["silences"]
    assert {"name": "group", "op": "=", "value": incident.group} in silence["matchers"]
    assert (silence["comment"], silence["created_by"]) == ("reprocessing all night", "oncall")


def test_group_timeline_marks_the_rewind_and_reset_preview(console: Console, incident: Incident) -> None:
    page = console.open(f"#/groups/sandbox/{incident.group}")
    marker = page.wait_for_selector("svg.timeline g.incident[data-kind=offset_rewind]")
    assert marker.get_attribute("data-alert-id") == incident.alert_id
    for line in ("committed", "log-end", "log-start"):
        assert page.locator(f"svg.timeline path.{line}").count() == 1, line
    assert "50" in page.locator("#partitions tbody").inner_text()
    console.shot("group")
    page = console.go(f"#/reset/sandbox/{incident.group}")
    page.fill("#reset-time", f"{incident.before_rewind:.3f}")
    page.click("#reset-form button")
    plan = page.wait_for_selector("#reset-plan").inner_text()
    assert f"{incident.topic},0,150" in plan
    with page.expect_download() as download:
        page.click("#reset-download")
    # the file kafka-consumer-groups --reset-offsets --from-file takes: only topic,partition,offset lines
    assert Path(download.value.path()).read_text().split() == [f"{incident.topic},0,150"]
