"""MS-MQRR 3.1.4.7: the parameter table of R_StartReceive (LookupId, hCursor, ulAction,
ulTimeout); each invalid combination must give MQ_ERROR_INVALID_PARAMETER (R50)."""

from __future__ import annotations

import pytest

from mqconform.model import calls as c

LOOKUP = 1  # a nonzero LookupId; validation comes before the lookup
INVALID = [
    # (name, LookupId, use a cursor, ulAction, ulTimeout)
    ("lookup-with-timeout", LOOKUP, False, c.MQ_LOOKUP_PEEK_CURRENT, 100),
    ("lookup-with-cursor", LOOKUP, True, c.MQ_LOOKUP_PEEK_CURRENT, 0),
    ("lookup-with-receive-action", LOOKUP, False, c.MQ_ACTION_RECEIVE, 0),
    ("lookup-with-peek-current", LOOKUP, False, c.MQ_ACTION_PEEK_CURRENT, 0),
    ("lookup-action-without-lookup-id", 0, False, c.MQ_LOOKUP_PEEK_NEXT, 0),
    ("lookup-receive-without-lookup-id", 0, False, c.MQ_LOOKUP_RECEIVE_CURRENT, 0),
    ("cursor-with-lookup-action", 0, True, c.MQ_LOOKUP_PEEK_CURRENT, 0),
    ("peek-next-without-cursor", 0, False, c.MQ_ACTION_PEEK_NEXT, 0),
    ("unknown-action", 0, False, 0x12345678, 0),
    ("unknown-action-with-cursor", 0, True, 0x00000002, 0),
]


@pytest.mark.parametrize("name,lookup,cursor,action,timeout", INVALID,
                         ids=[row[0] for row in INVALID])
@pytest.mark.req("MS-MQRR/3.1.4.7/R50")
def test_invalid_parameter_combination_is_refused(mq, name, lookup, cursor, action, timeout):
    ctx = mq.open(mq.queue([b"m"]))
    h = mq.call(c.R_CreateCursor(phContext=ctx)).phCursor if cursor else 0
    mq.receive(ctx, action, LookupId=lookup, hCursor=h, ulTimeout=timeout)
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT)  # the message is untouched


@pytest.mark.req("MS-MQRR/3.1.4.7/R53", "MS-MQRR/3.1.4.7/R7")
def test_an_unknown_cursor_is_refused(mq):
    ctx = mq.open(mq.queue([b"m"]))
    mq.receive(ctx, c.MQ_ACTION_PEEK_CURRENT, hCursor=0x7777)
