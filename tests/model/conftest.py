"""Builders for model tests: a queue manager with queues, open descriptors and messages."""

from __future__ import annotations

import pytest

from mqconform.model.adm import (
    Message,
    OpenQueueDescriptor,
    Queue,
    QueueAccessType,
    QueueManager,
    QueueShareMode,
    QueueType,
)
from mqconform.model.runtime import Environment


class World:
    """A LocalQueueManager in an Environment, with helpers that set state up directly."""

    def __init__(self):
        self.qm = QueueManager(computer_name="MQREF", queue_manager_quota=1 << 40)
        self.env = Environment(self.qm)

    def queue(self, pathname: str = ".\\private$\\q", queue_type=QueueType.Private, **kw):
        q = Queue(pathname=pathname, queue_type=queue_type, queue_manager=self.qm, **kw)
        self.qm.queue_collection.append(q)
        return q

    def open(self, queue, access=QueueAccessType.ReceiveAccess,
             share=QueueShareMode.DenyNone) -> OpenQueueDescriptor:
        desc = OpenQueueDescriptor(handle=self.env.ids.handle(), access_type=access,
                                   share_mode=share, queue_reference=queue)
        queue.open_queue_descriptor_collection.append(desc)
        return desc

    def send(self, queue, body: bytes = b"x", priority: int = 3, **kw) -> Message:
        from mqconform.model.message_ops import enqueue_message

        message = Message(body=body, priority=priority, **kw)
        assert enqueue_message(self.env, queue, message) == 0
        return message


@pytest.fixture
def world() -> World:
    return World()
