"""When to render ``/metrics`` ahead of a scraper's next scrape.

A render at fleet scale takes a second or two, and a scrape that starts it waits for all of it. Prometheus
scrapes a target at a fixed interval, so the next scrape's moment is known: the endpoint renders the
body shortly before it and the scrape is answered at once. One :class:`Cadence` per scraper (per client
address and body) learns the gap between its last two scrapes and, given the last render's duration,
plans one render ahead after each scrape:

- it starts ``lead`` = 1.5 x the last render's duration + 0.5 s (at most half the gap) before the
  predicted scrape, and its body answers until ``lead`` after it (so a late scrape still gets it);
- a body rendered ahead is at most ``lead`` plus one render older than one rendered on demand: with a
  5 s collector interval and a 2 s render, one collector cycle at worst;
- none for gaps under :data:`MIN_GAP_S` (back-to-back scrapers share renders through the endpoint's TTL)
  or over :data:`MAX_GAP_S`; and after a render ahead that no scrape used (the scraper stopped, or its
  timing is irregular: a person with curl) the next scrape plans none, so an unpredictable scraper costs
  at most one extra render per two scrapes, and a stopped one a single render.

The renders happen anyway, one per scrape; planning them moves them off the scrape's wait, not more of them.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_GAP_S = 5.0
MAX_GAP_S = 300.0
LEAD_FACTOR = 1.5
LEAD_MARGIN_S = 0.5


@dataclass(frozen=True, slots=True)
class Ahead:
    """A planned render: start at ``start``; its body answers scrapes until ``until`` (monotonic s)."""

    start: float
    until: float


@dataclass(slots=True)
class Cadence:
    """One scraper's timing as the endpoint saw it (monotonic seconds)."""

    last: float | None = None  # the last scrape's start
    gap: float | None = None  # between the last two scrapes
    ahead_unanswered: bool = False  # a render ahead started and no scrape has been answered by it yet
    skip_next: bool = False  # the last render ahead went unused: plan none after the next scrape

    def scraped(self, now: float, *, answered: bool) -> None:
        """A scrape started at ``now``; ``answered``: a finished or running render answers it without a
        new one."""
        if self.last is not None:
            self.gap = now - self.last
        self.last = now
        if self.ahead_unanswered and not answered:
            self.skip_next = True
        self.ahead_unanswered = False

    def started_ahead(self) -> None:
        self.ahead_unanswered = True

    def plan(self, duration: float) -> Ahead | None:
        """The render ahead of the next scrape, or None (see the module docstring); ``duration``: the
        last render's of this scraper's body."""
        if self.skip_next:
            self.skip_next = False
            return None
        if self.last is None or self.gap is None or not MIN_GAP_S <= self.gap <= MAX_GAP_S:
            return None
        due = self.last + self.gap
        lead = min(LEAD_FACTOR * duration + LEAD_MARGIN_S, self.gap / 2)
        return Ahead(due - lead, due + lead)
