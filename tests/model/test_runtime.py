"""The Environment: operations that wait, resumption, timers in model time."""

from __future__ import annotations

import weakref

from mqconform.model.runtime import INFINITE, Completion, Environment, Pending, Wait


def _waits_then_returns(key):
    got = yield Wait(key)
    return ("done", got)


def test_a_plain_result_passes_through():
    assert Environment().call(42) == 42


def test_an_operation_that_returns_at_once_gives_its_result():
    def op():
        if False:
            yield
        return "now"

    assert Environment().call(op()) == "now"


def test_a_waiting_operation_is_pending_until_resumed():
    env, key = Environment(), object()
    assert env.call(_waits_then_returns(key), token="t1") == Pending("t1")
    assert env.is_waiting(key)
    assert env.resume(key, 7) is True
    assert env.take_completions() == [Completion("t1", ("done", 7))]
    assert env.resume(key, 8) is False


def test_nested_events_wait_through_yield_from():
    env, key = Environment(), object()

    def outer():
        inner = yield from _waits_then_returns(key)
        return ("outer", inner)

    env.call(outer(), token=1)
    env.resume(key, "x")
    assert env.take_completions()[0].result == ("outer", ("done", "x"))


def test_timers_fire_in_deadline_order_at_their_own_time():
    env, fired = Environment(now=1000), []
    env.start_timer(500, lambda: fired.append(("b", env.now)))
    env.start_timer(100, lambda: fired.append(("a", env.now)))
    env.start_timer(INFINITE, lambda: fired.append(("never", env.now)))
    assert env.advance(1200) == 1 and fired == [("a", 1100)]
    assert env.advance(5000) == 1 and fired[-1] == ("b", 1500)
    assert env.now == 5000 and env.next_deadline() is None


def test_a_cancelled_timer_does_not_fire():
    env, fired, key = Environment(), [], object()
    env.start_timer(10, lambda: fired.append(1), key=key)
    assert env.timer_deadline(key) == 10
    assert env.cancel_timer(key) is True
    env.advance(100)
    assert fired == [] and env.cancel_timer(key) is False


def test_a_cancelled_timer_lets_go_of_what_its_handler_held_and_does_not_pile_up():
    """An hour-long timer cancelled at once (a receive whose client went away) must not keep
    its operation alive for the hour; cancelled timers are dropped from the heap once they
    are half of it."""
    env, fired = Environment(), []

    class Held:
        pass

    held = Held()
    ref = weakref.ref(held)
    keys = [object() for _ in range(100)]
    env.start_timer(3_600_000, lambda h=held: fired.append(h), key=keys[0])
    for key in keys[1:]:
        env.start_timer(3_600_000, lambda: fired.append("other"), key=key)
    del held
    assert env.cancel_timer(keys[0]) is True
    assert ref() is None
    for key in keys[1:60]:
        env.cancel_timer(key)
    assert len(env._timers) < 100  # rebuilt once half were cancelled
    env.advance(4_000_000)
    assert fired == ["other"] * 40


def test_time_never_goes_back():
    env = Environment(now=50)
    env.advance(10)
    assert env.now == 50


def test_sequential_ids_are_replayable():
    from mqconform.model.runtime import SequentialIds

    a, b = SequentialIds(), SequentialIds()
    assert [a.handle() for _ in range(3)] == [b.handle() for _ in range(3)] == [1, 2, 3]
    assert a.guid() == b.guid()
