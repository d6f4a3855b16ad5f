from service.detection.pace import OffsetsPace


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pace_nothing_waits_before_the_first_offsets_observation() -> None:
    assert OffsetsPace(6.0, Clock()).delay(0.15) == 0.15


def test_pace_triggers_wait_for_the_next_offsets_while_they_arrive() -> None:
    clock = Clock()
    pace = OffsetsPace(6.0, clock)
    pace.offsets_arrived()
    clock.now += 5.9
    assert (pace.delay(0.0), pace.delay(0.15), pace.delay(8.0)) == (6.0, 6.0, 8.0)


def test_pace_offsets_that_stopped_arriving_hold_nothing_back() -> None:
    clock = Clock()
    pace = OffsetsPace(6.0, clock)
    pace.offsets_arrived()
    clock.now += 6.0
    assert pace.delay(0.15) == 0.15
    pace.offsets_arrived()  # they come again
    assert pace.delay(0.15) == 6.0


def test_pace_zero_wait_never_holds() -> None:
    pace = OffsetsPace(0.0, Clock())
    pace.offsets_arrived()
    assert pace.delay(0.15) == 0.15
