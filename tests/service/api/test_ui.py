"""``/ui``: the console's files, served by the app with a policy that keeps the browser on this origin
(the pages themselves run in a real browser in ``tests/service/ui/integration``)."""

import re

from fastapi.testclient import TestClient


def test_ui_redirects_to_the_page_which_loads_only_local_files(client: TestClient) -> None:
    moved = client.get("/ui", follow_redirects=False)
    assert (moved.status_code, moved.headers["location"]) == (308, "/ui/")
    page = client.get("/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assets = re.findall(r'(?:src|href)="([^"#]+)"', page.text)
    assert sorted(assets) == ["/ui/console.css", "/ui/console.js", "data:,"]  # data:, an empty icon


def test_ui_script_and_style_served_typed_others_404(client: TestClient) -> None:
    script = client.get("/ui/console.js")
    assert (script.status_code, script.headers["content-type"]) == (200, "text/javascript; charset=utf-8")
    assert "innerHTML" not in script.text  # API values go in as text, never as markup
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", script.text)  # nothing fetched elsewhere
    assert client.get("/ui/console.css").headers["content-type"].startswith("text/css")
    for name in ("index.html.bak", "..%2Fapp.py", "secret"):
        missing = client.get(f"/ui/{name}")
        assert (missing.status_code, missing.json()["error"]) == (404, "not_found")


def test_ui_is_not_in_the_api_schema(client: TestClient) -> None:
    assert not [p for p in client.get("/openapi.json").json()["paths"] if p.startswith("/ui")]
