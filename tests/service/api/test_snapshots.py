import gzip
import io
import json
import os
import tarfile
from pathlib import Path

from fastapi.testclient import TestClient

from collectors.settings import ClusterSettings
from collectors.snapshots import SnapshotCounts, SnapshotInfo, SnapshotResult
from service.api.deps import snapshot_taker
from service.app import create_app
from service.settings import Settings
from store import Store
from tests.service.api.builders import NOW, T0, build
from tests.service.api.conftest import WRITE

SNAP_ID = "20231114T221320000Z-0badcafe"
RECORDS = b'{"offset": 0}\n{"offset": 1}\n'


def write_snapshot(settings: Settings, snapshot_id: str = SNAP_ID, group: str = "orders-app") -> SnapshotInfo:
    directory = settings.snapshots.directory / snapshot_id
    directory.mkdir(parents=True)
    (directory / "manifest.json").write_text(json.dumps({"id": snapshot_id, "group": group}))
    (directory / "state.json").write_text("{}")
    (directory / "records.jsonl.gz").write_bytes(gzip.compress(RECORDS))
    return SnapshotInfo(
        snapshot_id, "prod", group, 7, "manual", T0 + 20, str(directory), 0, 1, 2, 100, "ab" * 32
    )


def _client(settings: Settings, snapshots: int = 1) -> TestClient:
    runtime = build(settings)
    assert runtime.store is not None
    for i in range(snapshots):
        runtime.store.add_snapshot(write_snapshot(settings, SNAP_ID[:-1] + str(i)))
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)
    return TestClient(app)


def test_list_snapshots_newest_first_filtered_by_group(settings: Settings) -> None:
    with _client(settings, snapshots=2) as client:
        body = client.get("/api/v1/snapshots", params={"cluster": "prod", "group": "orders-app"}).json()
        ids = [s["id"] for s in body["snapshots"]]
        assert ids == [SNAP_ID[:-1] + "1", SNAP_ID[:-1] + "0"]
        assert body["snapshots"][0]["download_url"] == f"/api/v1/snapshots/{ids[0]}/download"
        assert client.get("/api/v1/snapshots", params={"group": "other"}).json()["snapshots"] == []


def test_get_snapshot_manifest_verbatim(settings: Settings) -> None:
    with _client(settings) as client:
        snap = SNAP_ID[:-1] + "0"
        assert client.get(f"/api/v1/snapshots/{snap}").json() == {
            "id": snap,
            "manifest": {"id": snap, "group": "orders-app"},
        }


def test_download_snapshot_tar_holds_the_three_files(settings: Settings) -> None:
    with _client(settings) as client:
        snap = SNAP_ID[:-1] + "0"
        response = client.get(f"/api/v1/snapshots/{snap}/download")
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/gzip"
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
            assert tar.getnames() == [
                f"{snap}/manifest.json",
                f"{snap}/state.json",
                f"{snap}/records.jsonl.gz",
            ]
            member = tar.extractfile(f"{snap}/records.jsonl.gz")
            assert member is not None and gzip.decompress(member.read()) == RECORDS


def test_download_snapshot_records_format_is_the_jsonl_gz(settings: Settings) -> None:
    with _client(settings) as client:
        response = client.get(f"/api/v1/snapshots/{SNAP_ID[:-1]}0/download", params={"format": "records"})
        assert gzip.decompress(response.content) == RECORDS


def test_snapshot_routes_traversal_or_unknown_id_404_nothing_read(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    with _client(settings) as client:
        for bad in ("..%2F..%2Fsecret.txt", "%2E%2E", "..%2Fog.db", "20231114T221320000Z-00000000", "x"):
            for suffix in ("", "/download", "/download?format=records"):
                response = client.get(f"/api/v1/snapshots/{bad}{suffix}")
                assert response.status_code == 404, (bad, suffix)
                assert "top secret" not in response.text


def test_download_snapshot_symlinked_file_refused(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret")
    with _client(settings) as client:
        snap = SNAP_ID[:-1] + "0"
        records = settings.snapshots.directory / snap / "records.jsonl.gz"
        records.unlink()
        os.symlink(tmp_path / "secret.txt", records)
        response = client.get(f"/api/v1/snapshots/{snap}/download", params={"format": "records"})
        assert response.status_code == 404
        assert "top secret" not in response.text


def test_take_snapshot_write_token_runs_taker_and_returns_result(settings: Settings) -> None:
    calls: list[tuple[str, str]] = []

    def fake(cluster: ClusterSettings, group: str, s: Settings, store: Store) -> SnapshotResult:
        calls.append((cluster.name, group))
        info = write_snapshot(s, "20231114T221500000Z-00000001", group)
        store.add_snapshot(info)
        return SnapshotResult(info, SnapshotCounts(total=2, commits=2), 0, 2, ())

    runtime = build(settings)
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)
    app.dependency_overrides[snapshot_taker] = lambda: fake
    with TestClient(app) as client:
        response = client.post("/api/v1/clusters/prod/groups/a%2Fb/snapshots", headers=WRITE)
        assert response.status_code == 201, response.text
        body = response.json()
        assert (body["snapshot"]["group"], body["counts"]["commits"], body["end_offset"]) == ("a/b", 2, 2)
        assert calls == [("prod", "a/b")]
        listed = client.get("/api/v1/snapshots", params={"group": "a/b"}).json()["snapshots"]
        assert [s["id"] for s in listed] == ["20231114T221500000Z-00000001"]
        assert client.post("/api/v1/clusters/prod/groups/nope/snapshots", headers=WRITE).status_code == 404
        assert client.post("/api/v1/clusters/other/groups/a%2Fb/snapshots", headers=WRITE).status_code == 404
    assert calls == [("prod", "a/b")]


def test_take_snapshot_without_write_token_refused_before_taking(settings: Settings) -> None:
    calls: list[str] = []
    runtime = build(settings)
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)
    app.dependency_overrides[snapshot_taker] = lambda: lambda *a: calls.append("taken")
    with TestClient(app) as client:
        assert client.post("/api/v1/clusters/prod/groups/clampy/snapshots").status_code == 401
    assert calls == []
