"""`collector_paused`: the collector is off inside and back as it was after, an error or a nested pause included."""

from __future__ import annotations

import gc

import pytest

from benchlib.cli.collector import collector_paused


@pytest.fixture(autouse=True)
def _collector_restored():
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()


def test_the_collector_is_off_inside_and_back_on_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the inner pause leaves the outer one paused"
    assert gc.isenabled()


def test_an_error_inside_turns_it_back_on() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("inside")
    assert gc.isenabled()


def test_a_collector_off_before_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_as_a_decorator_it_keeps_the_command_s_name_and_signature() -> None:
    """typer reads a command's options from its signature."""
    import inspect

    @collector_paused()
    def command(model: str, batch: int = 1) -> bool:
        """Help text."""
        return gc.isenabled()

    assert command("m") is False
    assert command.__name__ == "command" and command.__doc__ == "Help text."
    assert list(inspect.signature(command).parameters) == ["model", "batch"]


def test_what_the_pause_made_is_still_collected_later() -> None:
    """Moved to the oldest generation unscanned, not frozen: a cycle made inside is freed by a later collection."""
    import weakref

    class Node:
        pass

    gc.enable()
    with collector_paused():
        node = Node()
        node.itself = node
        alive = weakref.ref(node)
        del node
    assert alive() is not None
    gc.collect()
    assert alive() is None
    assert gc.get_freeze_count() == 0
