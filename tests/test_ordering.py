import pytest

from tests.ordering import module_order

PATHS = ["a.py", "b.py", "c.py", "d.py"]


def test_module_order_as_written_and_reverse() -> None:
    assert module_order(PATHS, "as-written") == (PATHS, None)
    assert module_order(PATHS, "reverse") == (["d.py", "c.py", "b.py", "a.py"], None)


def test_module_order_random_seed_repeats_and_keeps_every_module() -> None:
    first, seed = module_order(PATHS, "random:7")
    assert seed == 7 and sorted(first) == PATHS
    assert module_order(PATHS, "random:7") == (first, 7)
    chosen, picked = module_order(PATHS, "random")
    assert picked is not None and module_order(PATHS, f"random:{picked}")[0] == chosen


@pytest.mark.parametrize("bad", ["sideways", "random:x"])
def test_module_order_bad_value_usage_error(bad: str) -> None:
    with pytest.raises(pytest.UsageError):
        module_order(PATHS, bad)
