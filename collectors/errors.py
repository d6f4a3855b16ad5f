"""offsetguard's own error tree.

Every exception that leaves a collector, the Kafka seam or a decoder is one of these; third-party
exceptions (kafka-python, aiokafka, sockets, HTTP) are translated where they are caught, with
``raise ... from exc`` so the original stays on ``__cause__``.

    OffsetguardError                 base; carries cluster/group/topic/partition where known
    ├── ConfigError                  settings refused at start (names the field)
    ├── KafkaError                   anything that went wrong talking to Kafka
    │   ├── KafkaUnavailableError    no broker (or not the needed broker) could be reached
    │   ├── KafkaTimeoutError        a request did not complete in time
    │   ├── KafkaAuthError           SASL/TLS/ACL refused us
    │   └── KafkaResponseError       a broker answered with an error code (.error_code, .error_name)
    ├── MetricsScrapeError           a broker metrics URL could not be scraped or parsed (.url)
    ├── StoreError                   the embedded store failed
    │   ├── StoreWriteError          the disk refused a write: full, read-only, I/O error (.code)
    │   ├── StoreCorruptError        the database file is not a database or is damaged (.path)
    │   └── FencedError              a write of a replica that no longer holds the leader lease (.epoch)
    └── DecodeError                  bytes of ``__consumer_offsets`` are truncated or corrupt (.offset)
"""

from __future__ import annotations


class OffsetguardError(Exception):
    """Base of every error offsetguard raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        cluster: str | None = None,
        group: str | None = None,
        topic: str | None = None,
        partition: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.cluster = cluster
        self.group = group
        self.topic = topic
        self.partition = partition

    def __str__(self) -> str:
        where = [
            f"{name}={value!r}"
            for name, value in (
                ("cluster", self.cluster),
                ("group", self.group),
                ("topic", self.topic),
                ("partition", self.partition),
            )
            if value is not None
        ]
        return f"{self.message} ({', '.join(where)})" if where else self.message


class ConfigError(OffsetguardError):
    """The configuration is invalid; ``field`` names the offending setting."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class KafkaError(OffsetguardError):
    """Something went wrong talking to Kafka."""


class KafkaUnavailableError(KafkaError):
    """No broker, or not the broker a request needed, could be reached."""


class KafkaTimeoutError(KafkaError):
    """A Kafka request did not complete within its timeout."""


class KafkaAuthError(KafkaError):
    """Authentication or authorization was refused by the cluster."""


class KafkaResponseError(KafkaError):
    """A broker answered with a non-zero error code."""

    def __init__(self, message: str, *, error_code: int, error_name: str, **where: object) -> None:
        super().__init__(message, **where)  # type: ignore[arg-type]
        self.error_code = error_code
        self.error_name = error_name


class MetricsScrapeError(OffsetguardError):
    """A broker metrics endpoint could not be scraped or its text could not be parsed."""

    def __init__(self, message: str, *, url: str, cluster: str | None = None) -> None:
        super().__init__(message, cluster=cluster)
        self.url = url


class StoreError(OffsetguardError):
    """The embedded store could not read or write."""


class StoreWriteError(StoreError):
    """The disk refused a write (SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR...): ``code`` names it."""

    def __init__(self, message: str, *, code: str, cluster: str | None = None) -> None:
        super().__init__(message, cluster=cluster)
        self.code = code


class StoreCorruptError(StoreError):
    """The database file ``path`` is not a SQLite database or is damaged; the message says the recovery."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class FencedError(StoreError):
    """A write (or send) refused: this replica no longer holds the leader lease at ``epoch`` (issue 46).

    Not a :class:`StoreWriteError`: the disk is fine and nothing is to be kept for later; the replica
    steps down and the active one does the work. ``current_holder``/``current_epoch``: the lease as read.
    """

    def __init__(
        self,
        message: str,
        *,
        holder: str | None = None,
        epoch: int | None = None,
        current_holder: str | None = None,
        current_epoch: int | None = None,
    ) -> None:
        super().__init__(message)
        self.holder = holder
        self.epoch = epoch
        self.current_holder = current_holder
        self.current_epoch = current_epoch


class DecodeError(OffsetguardError):
    """A ``__consumer_offsets`` key or value is truncated or corrupt; ``offset`` locates the record."""

    def __init__(self, message: str, *, offset: int | None = None, partition: int | None = None) -> None:
        super().__init__(message, topic="__consumer_offsets", partition=partition)
        self.offset = offset
