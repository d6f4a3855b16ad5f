from dataclasses import replace

from service.notify.catchup import CatchUp
from tests.service.notify.builders import T0, silence

SI = silence(("cluster", "=", "prod"), ends=T0 + 60)


def test_catch_up_first_round_then_only_when_active_silences_change() -> None:
    c = CatchUp(receivers=True)
    assert c.wanted([SI], T0) is True  # the first round after a start
    c.done()
    assert c.wanted([SI], T0 + 1) is False
    assert c.wanted([SI], T0 + 61) is True  # it ended: what it held back may be due
    c.done()
    assert c.wanted([], T0 + 62) is False  # gone from the list since: the same (none active)
    assert c.wanted([replace(SI, ends_at=T0 + 600, updated_at=T0 + 62)], T0 + 62) is True


def test_catch_up_edited_or_started_silence_wanted() -> None:
    c = CatchUp(receivers=True)
    c.wanted([SI], T0)
    c.done()
    assert c.wanted([replace(SI, updated_at=T0 + 1)], T0 + 1) is True  # matchers edited
    pending = silence(("kind", "=", "lag_high"), starts=T0 + 10, silence_id="si-2")
    c.wanted([SI, pending], T0 + 2)
    c.done()
    assert c.wanted([SI, pending], T0 + 11) is True  # started: the active set changed


def test_catch_up_not_done_until_told_and_invalidated_after_prune() -> None:
    c = CatchUp(receivers=True)
    assert c.wanted([], T0) is True
    assert c.wanted([], T0 + 1) is True  # the advance that asked did not commit: still due
    c.done()
    assert c.wanted([], T0 + 2) is False
    c.invalidate()
    assert c.wanted([], T0 + 3) is True


def test_catch_up_never_without_receivers() -> None:
    c = CatchUp(receivers=False)
    assert c.wanted([], T0) is False
    c.invalidate()
    assert c.wanted([SI], T0) is False
