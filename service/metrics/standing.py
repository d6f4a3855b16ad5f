"""A body kept rendered for scrapes whose moment is not known yet.

Rendering ahead (:mod:`service.metrics.ahead`) needs a scraper's gap, so without more the first two
scrapes after a start, and the first after a scraper changed its rhythm, wait for a render of a second
or two. Instead, while no scraper's render ahead has answered it, the endpoint renders a *standing* body
each time the collectors bring new observations (it looks every :data:`POLL_S`, once the first picture's
collectors have run once), and a scrape takes it at once. A standing body answers while its observations
are still the latest, or while the one for the newer observations is being rendered (so it is at most one
collector cycle behind, as a render ahead may be), for :data:`MAX_AGE_S` at most, and never when it
lacks an observation present now.

Standing renders go on for :data:`WINDOW_S` after the service started, after a scrape a standing body
answered, and after a scrape that had to render on demand; they stop as soon as a scrape comes when its
render ahead said it would (started, and the scrape answered by that body or a newer one: the scraper's
cadence is known, a render per scrape is enough). A window covers one scrape
at Prometheus's default interval (1 minute). With no scraper at all, the service renders for one window
after its start and then never again.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.metrics.sources import ScrapeInputs
from service.runs import FIRST_PICTURE, has_run

POLL_S = 1.0  # how often the endpoint looks for new observations while standing renders go on
WINDOW_S = 75.0  # how long standing renders go on after the last reason for them
# A standing body never answers later than this after it was rendered: the figures that move without
# new observations (collector staleness, alert counts, lag seconds) are never older. While standing renders
# go on, one is rendered again before this runs out, new observations or not.
MAX_AGE_S = 10.0

Seen = tuple[object, ...]  # the observation objects a render read (identity is their version)


def observations(inputs: ScrapeInputs) -> Seen:
    """The observation objects of ``inputs`` (collectors replace them whole each cycle)."""
    return tuple(
        part for c in inputs.clusters for part in (c.cluster, c.metadata, c.offsets, c.groups, c.committed)
    )


def first_round_in(inputs: ScrapeInputs) -> bool:
    """Whether every collector of the first picture (:data:`~service.runs.FIRST_PICTURE`) has finished a
    run (succeeded or failed). Before that a standing render would show a picture about to grow, and
    compete with the first collections for the CPU. The others (broker metrics, configs) run after the
    first complete render: waiting for them would wait for a scrape."""
    return all(has_run(s) for s in inputs.statuses if s.name in FIRST_PICTURE)


def same(a: Seen | None, b: Seen) -> bool:
    """Whether ``a`` holds the very objects of ``b``."""
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


@dataclass(slots=True)
class Standing:
    """Until when standing renders go on (monotonic seconds); see the module docstring."""

    until: float = float("-inf")

    def extend(self, now: float) -> None:
        """A reason for standing renders at ``now``: the start, a standing body used, a scrape missed."""
        self.until = max(self.until, now + WINDOW_S)

    def settle(self) -> None:
        """A render ahead answered its scrape: none from here until the next reason."""
        self.until = float("-inf")

    def active(self, now: float) -> bool:
        return now < self.until
