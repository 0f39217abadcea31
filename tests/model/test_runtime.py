"""The Environment: operations that wait, resumption, timers in model time."""

from __future__ import annotations

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


def test_time_never_goes_back():
    env = Environment(now=50)
    env.advance(10)
    assert env.now == 50


def test_sequential_ids_are_replayable():
    from mqconform.model.runtime import SequentialIds

    a, b = SequentialIds(), SequentialIds()
    assert [a.handle() for _ in range(3)] == [b.handle() for _ in range(3)] == [1, 2, 3]
    assert a.guid() == b.guid()
