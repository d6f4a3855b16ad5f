"""What a drill asks the running service, through its HTTP API (:class:`~service.api.client.ApiClient`):
the alerts of the drill's group, one alert with its notifications, the committed offset and log start the
service sees, and the acknowledgement that ends a drill's alert."""

from __future__ import annotations

from typing import Any

from service.api.client import ApiClient, ApiClientError, segment


class ApiWatch:
    def __init__(self, client: ApiClient, cluster: str) -> None:
        self._client = client
        self.cluster = cluster

    def alerts(self, group: str) -> list[dict[str, Any]]:
        """The group's alerts (firing and resolved), newest first."""
        page = self._client.get_json(
            "/api/v1/alerts", {"cluster": self.cluster, "group": group, "limit": 200}
        )
        return list(page["alerts"])

    def alert(self, alert_id: str) -> dict[str, Any]:
        """One alert with its transitions and notifications."""
        return dict(self._client.get_json(f"/api/v1/alerts/{segment(alert_id)}"))

    def group(self, group: str) -> dict[str, Any] | None:
        """The group as the service last observed it: ``state``, ``coordinator``, ``partitions``, ...
        (None: not seen)."""
        detail = self._found(f"/api/v1/clusters/{segment(self.cluster)}/groups/{segment(group)}")
        return dict(detail) if detail else None

    def committed(self, group: str, topic: str, partition: int) -> int | None:
        """The group's committed offset of the partition as the service last polled it (None: not seen)."""
        detail = self.group(group)
        for p in detail["partitions"] if detail else ():
            if (p["topic"], p["partition"]) == (topic, partition):
                return int(p["committed_offset"])
        return None

    def partition(self, topic: str, partition: int) -> dict[str, Any] | None:
        """The partition as the service last observed it: ``log_start``, ``log_end``, ``changed_at`` (when
        the range last changed), ... (None: not seen)."""
        body = self._found(f"/api/v1/clusters/{segment(self.cluster)}/topics/{segment(topic)}/partitions")
        return (
            next((dict(p) for p in body["partitions"] if p["partition"] == partition), None) if body else None
        )

    def _found(self, path: str) -> Any:
        """The JSON at ``path``, or None if the service does not know it (404)."""
        try:
            return self._client.get_json(path)
        except ApiClientError as exc:
            if exc.status == 404:
                return None
            raise

    def ack(self, alert_id: str, comment: str) -> None:
        self._client.post_json(
            f"/api/v1/alerts/{segment(alert_id)}/ack", {"comment": comment, "who": "drill"}
        )
