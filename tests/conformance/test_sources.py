"""conformance/sources.py: what the suite draws that differs from run to run, from one place a
builder can replace without patching any module."""

from __future__ import annotations

import threading
import time
import uuid

from mqconform.conformance import sources


class Fixed(sources.Source):
    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=7, version=4)

    def now(self) -> float:
        return 1767225600.5


def test_the_real_sources_by_default():
    assert sources.uuid4() != sources.uuid4()
    assert abs(sources.now() - time.time()) < 5
    assert abs(sources.arrival_time() - int(time.time())) <= 1


def test_a_source_in_use_is_every_threads_until_the_block_ends():
    seen = []
    with sources.use(Fixed()) as fixed:
        assert sources.current() is fixed
        worker = threading.Thread(target=lambda: seen.append((sources.uuid4(), sources.now())))
        worker.start()
        worker.join()
        assert sources.arrival_time() == 1767225600
        assert [sources.count("x"), sources.count("x"), sources.count("y")] == [1, 2, 1]
    assert seen == [(uuid.UUID(int=7, version=4), 1767225600.5)]
    assert sources.current() is not fixed and sources.uuid4() != uuid.UUID(int=7, version=4)
