Feature: MS-MQRR 3.1.4.7 R_StartReceive (Opnum 7)
  The R_StartReceive method peeks or receives a message from an open queue. The message is
  the first unlocked one, the one at a cursor, or the one a LookupId names (or the one before
  or after it); a receive is two-phase: the message stays locked until R_EndReceive or
  R_CancelReceive with the same dwRequestId.

  # ------------------------------------------------------------------ the parameter table (R50)

  @MS-MQRR/3.1.4.7/R50 @MS-MQRR/3.1.4.7/R47 @MS-MQRR/3.1.4.7/R49
  Scenario Outline: An invalid combination of LookupId, hCursor, ulAction and ulTimeout is refused
    Given a queue with messages "m, n"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    And the client has created a cursor
    When the client calls R_StartReceive with LookupId <lookup>, hCursor <cursor>, ulAction <action> and ulTimeout <timeout>
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    And a peek finds the message "m"

    Examples: a nonzero LookupId allows only the MQ_LOOKUP_ actions, no cursor and no timeout
      | lookup | cursor | action                    | timeout    |
      | "m"    | none   | MQ_LOOKUP_PEEK_CURRENT    | 100        |
      | "m"    | none   | MQ_LOOKUP_RECEIVE_NEXT    | 0xFFFFFFFF |
      | "m"    | cursor | MQ_LOOKUP_PEEK_CURRENT    | 0          |
      | "m"    | cursor | MQ_LOOKUP_RECEIVE_CURRENT | 0          |
      | "m"    | none   | MQ_ACTION_RECEIVE         | 0          |
      | "m"    | none   | MQ_ACTION_PEEK_CURRENT    | 0          |
      | "m"    | cursor | MQ_ACTION_PEEK_NEXT       | 0          |
      | "m"    | cursor | MQ_ACTION_RECEIVE         | 0          |

    Examples: a LookupId of 0 makes every MQ_LOOKUP_ action invalid
      | lookup | cursor | action                    | timeout |
      | 0      | none   | MQ_LOOKUP_PEEK_CURRENT    | 0       |
      | 0      | none   | MQ_LOOKUP_PEEK_NEXT       | 0       |
      | 0      | none   | MQ_LOOKUP_PEEK_PREV       | 0       |
      | 0      | none   | MQ_LOOKUP_RECEIVE_CURRENT | 0       |
      | 0      | none   | MQ_LOOKUP_RECEIVE_NEXT    | 0       |
      | 0      | none   | MQ_LOOKUP_RECEIVE_PREV    | 0       |

    Examples: a cursor allows only MQ_ACTION_RECEIVE, MQ_ACTION_PEEK_CURRENT and MQ_ACTION_PEEK_NEXT
      | lookup | cursor | action                 | timeout |
      | 0      | cursor | MQ_LOOKUP_PEEK_CURRENT | 0       |
      | 0      | cursor | MQ_LOOKUP_PEEK_NEXT    | 0       |
      | 0      | cursor | 0x00000002             | 0       |
      | 0      | cursor | 0x80000002             | 0       |

    Examples: with neither, only MQ_ACTION_RECEIVE and MQ_ACTION_PEEK_CURRENT
      | lookup | cursor | action              | timeout |
      | 0      | none   | MQ_ACTION_PEEK_NEXT | 0       |
      | 0      | none   | MQ_ACTION_PEEK_NEXT | 100     |
      | 0      | none   | 0x00000001          | 0       |
      | 0      | none   | 0x80000002          | 0       |
      | 0      | none   | 0x40000013          | 0       |
      | 0      | none   | 0xFFFFFFFF          | 0       |

  @MS-MQRR/3.1.4.7/R50 @MS-MQRR/3.1.4.7/R46
  Scenario Outline: A valid combination of LookupId, hCursor, ulAction and ulTimeout is served
    Given a queue with messages "m, n"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    And the client has created a cursor
    When the client calls R_StartReceive with LookupId <lookup>, hCursor <cursor>, ulAction <action> and ulTimeout <timeout>
    Then the message "m" is returned

    Examples:
      | lookup | cursor | action                    | timeout    |
      | 0      | none   | MQ_ACTION_RECEIVE         | 0          |
      | 0      | none   | MQ_ACTION_PEEK_CURRENT    | 0          |
      | 0      | none   | MQ_ACTION_PEEK_CURRENT    | 0xFFFFFFFF |
      | 0      | none   | MQ_ACTION_RECEIVE         | 100        |
      | 0      | cursor | MQ_ACTION_PEEK_CURRENT    | 0          |
      | 0      | cursor | MQ_ACTION_RECEIVE         | 100        |
      | "m"    | none   | MQ_LOOKUP_PEEK_CURRENT    | 0          |
      | "m"    | none   | MQ_LOOKUP_RECEIVE_CURRENT | 0          |

  # ------------------------------------------------------------------ handles

  @MS-MQRR/3.1.4.7/R4 @MS-MQRR/3.1.4.7/R51 @MS-MQRR/3.1.4.7/R52 @MS-MQRR/3.1.4.7/R47
  Scenario: A handle closed with R_CloseQueue is refused
    Given a queue with messages "m"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has closed the queue
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the call fails

  @MS-MQRR/3.1.4.7/R5 @MS-MQRR/3.1.4.7/R52 @MS-MQRR/3.1.4.7/R47
  Scenario: A NULL handle is refused
    Given a queue with messages "m"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT with a NULL handle
    Then the call fails
    And a peek finds the message "m"

  @MS-MQRR/3.1.4.7/R7 @MS-MQRR/3.1.4.7/R53 @MS-MQRR/3.1.4.7/R47
  Scenario: A cursor handle that R_CreateCursor never returned is refused
    Given a queue with messages "m"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on hCursor 0x7777
    Then the call fails

  @MS-MQRR/3.1.4.7/R8 @MS-MQRR/3.1.4.7/R53 @MS-MQRR/3.1.4.7/R47
  Scenario: A cursor closed with R_CloseCursor is refused
    Given a queue with messages "m"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has closed the cursor
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE on the cursor
    Then the call fails
    And a peek finds the message "m"

  # ------------------------------------------------------------------ access (R6)

  @MS-MQRR/3.1.4.7/R6 @MS-MQRR/3.1.4.7/R47
  Scenario Outline: A handle opened with PEEK_ACCESS may not receive
    Given a queue with messages "m, n"
    And the client has opened the queue with PEEK_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with LookupId <lookup>, hCursor none, ulAction <action> and ulTimeout 0
    Then the call fails
    And a peek finds the message "m"

    Examples:
      | lookup | action                    |
      | 0      | MQ_ACTION_RECEIVE         |
      | "m"    | MQ_LOOKUP_RECEIVE_CURRENT |
      | "m"    | MQ_LOOKUP_RECEIVE_NEXT    |
      | "n"    | MQ_LOOKUP_RECEIVE_PREV    |

  @MS-MQRR/3.1.4.7/R6
  Scenario: A handle opened with PEEK_ACCESS may not receive at a cursor
    Given a queue with messages "m"
    And the client has opened the queue with PEEK_ACCESS
    And the client has created a cursor
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE on the cursor
    Then the call fails
    And a peek finds the message "m"

  @MS-MQRR/3.1.4.7/R6 @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R72 @MS-MQRR/3.1.4.7/R76 @MS-MQRR/3.1.4.7/R81 @MS-MQRR/3.1.4.7/R86
  Scenario: A handle opened with PEEK_ACCESS may peek in every way
    Given a queue with messages "a, b, c"
    And the client has opened the queue with PEEK_ACCESS
    And the client has noted the lookup identifiers of the messages
    And the client has created a cursor
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "c"
    Then the message "c" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "a"
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_PREV and the LookupId of "c"
    Then the message "b" is returned

  # ------------------------------------------------------------------ the first message

  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R69 @MS-MQRR/3.1.4.7/R70 @MS-MQRR/3.1.4.7/R71 @MS-MQRR/3.1.4.7/R109 @MS-MQRR/3.1.4.7/R46
  Scenario: MQ_ACTION_PEEK_CURRENT reads the first message and leaves it in the queue
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the message "first" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the message "first" is returned

  @MS-MQRR/3.1.4.7/R54 @MS-MQRR/3.1.4.7/R55 @MS-MQRR/3.1.4.7/R56 @MS-MQRR/3.1.4.7/R57 @MS-MQRR/3.1.4.7/R61 @MS-MQRR/3.1.4.7/R62 @MS-MQRR/3.1.4.7/R63 @MS-MQRR/3.1.4.7/R64 @MS-MQRR/3.1.4.7/R66 @MS-MQRR/3.1.4.7/R67 @MS-MQRR/3.1.4.7/R109 @MS-MQRR/3.1.4.7/R110 @MS-MQRR/3.1.4.7/R46
  Scenario: MQ_ACTION_RECEIVE reads the first message and locks it until R_EndReceive
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 7
    Then the message "first" is returned
    And a peek finds the message "second"
    When the client calls R_EndReceive with RR_ACK for request 7
    Then the call succeeds
    And a peek finds the message "second"

  @MS-MQRR/3.1.4.7/R62 @MS-MQDMPR/3.1.7.3.2/R10
  Scenario: A receive skips the message another handle's receive holds locked
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has opened the queue a second time with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 7
    Then the message "first" is returned
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 8 on the second handle
    Then the message "second" is returned

  @MS-MQRR/3.1.4.7/R54 @MS-MQRR/3.1.4.7/R55 @MS-MQRR/3.1.4.7/R58 @MS-MQRR/3.1.4.7/R61 @MS-MQRR/3.1.4.7/R67
  Scenario: A receive that finds no message still leaves its PendingRequestEntry, with no message
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 4
    Then the call returns MQ_ERROR_IO_TIMEOUT
    When the client calls R_EndReceive with RR_ACK for request 4
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  @MS-MQRR/3.1.4.7/R54 @MS-MQRR/3.1.4.7/R56 @MS-MQRR/3.1.4.7/R57
  Scenario: Each receive is a PendingRequestEntry of its own, keyed by dwRequestId
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "a" as request 1
    And the client has received "b" as request 2
    When the client calls R_EndReceive with RR_NACK for request 1
    Then the call succeeds
    And a peek finds the message "a"
    When the client calls R_EndReceive with RR_ACK for request 2
    Then the call succeeds
    And a peek finds the message "a"

  # A queue deleted while a client holds a handle to it (MS-MQDMPR 3.1.7.1.4: the descriptors
  # keep no queue): a receive through the handle finds nothing to receive from, an error the
  # method returns as a failure HRESULT.
  @MS-MQRR/3.1.4.7/R47
  Scenario: A receive through a handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the queue is deleted through SUT control
    And the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 2
    Then the call returns a failure HRESULT

  # ------------------------------------------------------------------ cursors

  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R71 @MS-MQRR/3.1.4.7/R72 @MS-MQRR/3.1.4.7/R73 @MS-MQRR/3.1.4.7/R74 @MS-MQRR/3.1.4.7/R75 @MS-MQRR/3.1.4.7/R7
  Scenario: A cursor peeks the message at its position and PEEK_NEXT moves it on
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "c" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the call returns MQ_ERROR_IO_TIMEOUT
    And a peek finds the message "a"

  @MS-MQRR/3.1.4.7/R54 @MS-MQRR/3.1.4.7/R62 @MS-MQRR/3.1.4.7/R65 @MS-MQRR/3.1.4.7/R7
  Scenario: MQ_ACTION_RECEIVE on a cursor receives the message at the cursor and moves the cursor on
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE on the cursor as request 3
    Then the message "b" is returned
    And a peek on the cursor finds the message "c"
    And a peek finds the message "a"
    When the client calls R_EndReceive with RR_ACK for request 3
    Then the call succeeds

  @MS-MQRR/3.1.4.7/R7 @MS-MQRR/3.1.4.7/R65 @MS-MQRR/3.1.4.7/R71
  Scenario: Two cursors on one handle move independently
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has created a second cursor
    And the client has peeked "a" on the cursor
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the second cursor
    Then the message "a" is returned
    And a peek on the cursor finds the message "b"

  # MS-MQDMPR 3.2.7.2 and 3.2.7.4: a cursor that has read a message (Read) whose position is no
  # longer Available answers AlreadyReceived, and Peek Message (3.1.7.1.15) and Dequeue Message
  # (3.1.7.1.10) return MQ_ERROR_MESSAGE_ALREADY_RECEIVED; the cursor stays where it was.
  @MS-MQRR/3.1.4.7/R7 @MS-MQDMPR/3.2.7.2/R26 @MS-MQDMPR/3.2.7.2/R27 @MS-MQDMPR/3.1.7.1.15/R16
  @MS-MQDMPR/3.2.7.4/R29 @MS-MQDMPR/3.1.7.1.10/R17
  Scenario: A cursor whose message a receive without the cursor took answers MQ_ERROR_MESSAGE_ALREADY_RECEIVED
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 2
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the call returns MQ_ERROR_MESSAGE_ALREADY_RECEIVED
    When the client calls R_EndReceive with RR_ACK for request 2
    Then the call succeeds
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the call returns MQ_ERROR_MESSAGE_ALREADY_RECEIVED
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE on the cursor as request 3
    Then the call returns MQ_ERROR_MESSAGE_ALREADY_RECEIVED
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned

  # A cursor whose message left the queue moves on from where that message was (MS-MQDMPR
  # 3.2.7.3: Seek Available Message Position forward from the cursor's position). The list is
  # in Priority order, then arrival order (3.1.1.2 R11): a message that arrives with a higher
  # Priority goes before that place, behind the cursor, and MQ_ACTION_PEEK_NEXT does not find it.
  @MS-MQRR/3.1.4.7/R7 @MS-MQDMPR/3.1.1.2/R11 @MS-MQDMPR/3.2.7.3/R9 @MS-MQDMPR/3.2.7.3/R14
  Scenario: A message that arrives ahead of where the cursor's received message was is behind the cursor
    Given a queue with a message "m" of priority 3
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has peeked "m" on the cursor
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 2
    Then the message "m" is returned
    When the client calls R_EndReceive with RR_ACK for request 2
    Then the call succeeds
    When a message "q" of priority 4 arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the call returns MQ_ERROR_IO_TIMEOUT
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 3
    Then the message "q" is returned

  # ------------------------------------------------------------------ lookup identifiers

  @MS-MQRR/3.1.4.7/R76 @MS-MQRR/3.1.4.7/R77 @MS-MQRR/3.1.4.7/R78 @MS-MQRR/3.1.4.7/R79 @MS-MQRR/3.1.4.7/R80 @MS-MQRR/3.1.4.7/R17
  Scenario: MQ_LOOKUP_PEEK_CURRENT reads the message the LookupId names and leaves it
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "b"
    Then the message "b" is returned
    And the pSequenceId is the one noted for "b"
    And a peek finds the message "a"
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "b"
    Then the message "b" is returned

  @MS-MQRR/3.1.4.7/R81 @MS-MQRR/3.1.4.7/R82 @MS-MQRR/3.1.4.7/R83 @MS-MQRR/3.1.4.7/R84 @MS-MQRR/3.1.4.7/R85
  Scenario: MQ_LOOKUP_PEEK_NEXT reads the message after the one the LookupId names
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "a"
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "b"
    Then the message "c" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "c"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  @MS-MQRR/3.1.4.7/R86 @MS-MQRR/3.1.4.7/R87 @MS-MQRR/3.1.4.7/R88 @MS-MQRR/3.1.4.7/R89 @MS-MQRR/3.1.4.7/R90
  Scenario: MQ_LOOKUP_PEEK_PREV reads the message before the one the LookupId names
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_PREV and the LookupId of "c"
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_PREV and the LookupId of "b"
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_PREV and the LookupId of "a"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "b"
    Then the message "b" is returned
    And a peek finds the message "a"

  @MS-MQRR/3.1.4.7/R76 @MS-MQRR/3.1.4.7/R109 @MS-MQRR/3.1.4.7/R47
  Scenario Outline: A LookupId that names no message is not found
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with <action> and an unknown LookupId
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And a peek finds the message "a"

    Examples:
      | action                    |
      | MQ_LOOKUP_PEEK_CURRENT    |
      | MQ_LOOKUP_RECEIVE_CURRENT |

  @MS-MQRR/3.1.4.7/R91 @MS-MQRR/3.1.4.7/R92 @MS-MQRR/3.1.4.7/R93 @MS-MQRR/3.1.4.7/R94 @MS-MQRR/3.1.4.7/R95 @MS-MQRR/3.1.4.7/R96 @MS-MQRR/3.1.4.7/R110
  Scenario: MQ_LOOKUP_RECEIVE_CURRENT receives the message the LookupId names
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_CURRENT and the LookupId of "b" as request 5
    Then the message "b" is returned
    And the pSequenceId is the one noted for "b"
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "a"
    Then the message "c" is returned

  @MS-MQRR/3.1.4.7/R91 @MS-MQRR/3.1.4.7/R96 @MS-MQRR/3.1.4.9/R6 @MS-MQRR/3.1.4.9/R19 @MS-MQRR/3.1.4.9/R22
  Scenario: A message received by its LookupId stays locked until R_EndReceive, and RR_NACK gives it back
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_CURRENT and the LookupId of "b" as request 6
    Then the message "b" is returned
    When the client calls R_EndReceive with RR_NACK for request 6
    Then the call returns MQ_OK
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "b"
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_CURRENT and the LookupId of "b" as request 7
    Then the message "b" is returned
    When the client calls R_EndReceive with RR_ACK for request 7
    Then the call returns MQ_OK
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "b"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  @MS-MQRR/3.1.4.7/R97 @MS-MQRR/3.1.4.7/R98 @MS-MQRR/3.1.4.7/R99 @MS-MQRR/3.1.4.7/R100 @MS-MQRR/3.1.4.7/R101 @MS-MQRR/3.1.4.7/R102
  Scenario: MQ_LOOKUP_RECEIVE_NEXT receives the message after the one the LookupId names
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_NEXT and the LookupId of "a" as request 5
    Then the message "b" is returned
    And a peek finds the message "a"
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "a"
    Then the message "c" is returned

  @MS-MQRR/3.1.4.7/R103 @MS-MQRR/3.1.4.7/R104 @MS-MQRR/3.1.4.7/R105 @MS-MQRR/3.1.4.7/R106 @MS-MQRR/3.1.4.7/R107 @MS-MQRR/3.1.4.7/R108
  Scenario: MQ_LOOKUP_RECEIVE_PREV receives the message before the one the LookupId names
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_PREV and the LookupId of "c" as request 5
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_PREV and the LookupId of "c"
    Then the message "a" is returned

  # ------------------------------------------------------------------ output parameters

  @MS-MQRR/3.1.4.7/R17
  Scenario: pSequenceId is the message's lookup identifier, the same for a peek and a receive
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the pSequenceId is the one noted for "a"
    And the pSequenceId fits in 7 bytes and is nonzero
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 2
    Then the pSequenceId is the one noted for "a"

  @MS-MQRR/3.1.4.7/R16 @MS-MQRR/3.1.4.7/R111
  Scenario: pdwArriveTime is the time the message arrived, in seconds since 1970
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 1
    Then the pdwArriveTime is the time the message arrived, in seconds since 1970 UTC

  @MS-MQRR/3.1.4.7/R18 @MS-MQRR/3.1.4.7/R19 @MS-MQRR/3.1.4.7/R20 @MS-MQRR/3.1.4.7/R21 @MS-MQRR/3.1.4.7/R22 @MS-MQRR/3.1.4.7/R23 @MS-MQRR/3.1.4.7/R24 @MS-MQRR/3.1.4.7/R28 @MS-MQRR/3.1.4.7/R29 @MS-MQRR/3.1.4.7/R30 @MS-MQRR/3.1.4.7/R31 @MS-MQRR/3.1.4.7/R45
  Scenario Outline: A body that fits in dwMaxBodySize comes back in one stFullPacket section
    Given a queue with a message of 64 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with <action> and dwMaxBodySize <max>
    Then the packet comes back whole in one stFullPacket section

    Examples:
      | action                 | max   |
      | MQ_ACTION_PEEK_CURRENT | 64    |
      | MQ_ACTION_PEEK_CURRENT | 65536 |
      | MQ_ACTION_RECEIVE      | 64    |

  @MS-MQRR/3.1.4.7/R18 @MS-MQRR/3.1.4.7/R22 @MS-MQRR/3.1.4.7/R23 @MS-MQRR/3.1.4.7/R24 @MS-MQRR/3.1.4.7/R32 @MS-MQRR/3.1.4.7/R33 @MS-MQRR/3.1.4.7/R34 @MS-MQRR/3.1.4.7/R36 @MS-MQRR/3.1.4.7/R37 @MS-MQRR/3.1.4.7/R38 @MS-MQRR/3.1.4.7/R39 @MS-MQRR/3.1.4.7/R40 @MS-MQRR/3.1.4.7/R41 @MS-MQRR/3.1.4.7/R43 @MS-MQRR/3.1.4.7/R44 @MS-MQRR/3.1.4.7/R45
  Scenario Outline: A body longer than dwMaxBodySize is cut, and the trailers follow in a second section
    Given a queue with a message of 64 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with <action> and dwMaxBodySize <max>
    Then the packet comes back in a first section with <max> body bytes and a second section with the trailers

    Examples:
      | action                 | max |
      | MQ_ACTION_PEEK_CURRENT | 63  |
      | MQ_ACTION_PEEK_CURRENT | 16  |
      | MQ_ACTION_PEEK_CURRENT | 0   |
      | MQ_ACTION_RECEIVE      | 8   |

  @MS-MQRR/3.1.4.7/R15
  Scenario: dwMaxCompoundMessageSize is ignored for a binary message
    Given a queue with a message of 64 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT, dwMaxBodySize 65536 and dwMaxCompoundMessageSize 0
    Then the packet comes back whole in one stFullPacket section

  @MS-MQRR/3.1.4.7/R13 @MS-MQRR/3.1.4.7/R25 @MS-MQRR/3.1.4.7/R26 @MS-MQRR/3.1.4.7/R27 @MS-MQRR/3.1.4.7/R28 @MS-MQRR/3.1.4.7/R29 @MS-MQRR/3.1.4.7/R30 @MS-MQRR/3.1.4.7/R31
  Scenario: dwMaxBodySize is ignored for an SRMP message: dwMaxCompoundMessageSize decides
    Given a queue with an SRMP message of 64 body bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT, dwMaxBodySize 0 and dwMaxCompoundMessageSize 65536
    Then the packet comes back whole in one stFullPacket section

  @MS-MQRR/3.1.4.7/R25 @MS-MQRR/3.1.4.7/R26 @MS-MQRR/3.1.4.7/R27 @MS-MQRR/3.1.4.7/R32 @MS-MQRR/3.1.4.7/R33 @MS-MQRR/3.1.4.7/R35 @MS-MQRR/3.1.4.7/R36 @MS-MQRR/3.1.4.7/R37 @MS-MQRR/3.1.4.7/R38 @MS-MQRR/3.1.4.7/R39 @MS-MQRR/3.1.4.7/R40 @MS-MQRR/3.1.4.7/R42 @MS-MQRR/3.1.4.7/R43 @MS-MQRR/3.1.4.7/R44
  Scenario Outline: An SRMP message whose CompoundMessageHeader exceeds dwMaxCompoundMessageSize is cut there
    Given a queue with an SRMP message of 64 body bytes
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has peeked the whole SRMP packet
    When the client calls R_StartReceive with <action>, dwMaxBodySize 65536 and dwMaxCompoundMessageSize <max>
    Then the SRMP packet comes back in a stSrmpFirstSection with the headers and <max> bytes of the CompoundMessageHeader, and a stSrmpSecondSection with the trailers

    Examples:
      | action                 | max |
      | MQ_ACTION_PEEK_CURRENT | 40  |
      | MQ_ACTION_PEEK_CURRENT | 0   |
      | MQ_ACTION_RECEIVE      | 100 |

  @MS-MQRR/3.1.4.7/R45
  Scenario Outline: The first section's TimeToReachQueue is the message's SentTime plus its TimeToReachQueue
    Given a queue with a message sent at <sent> that may take <ttrq> seconds to reach its queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with <action> and dwMaxBodySize <max>
    Then the first section's BaseHeader.TimeToReachQueue is <sent> + <ttrq>, the absolute expiry

    Examples:
      | sent       | ttrq       | action                 | max   |
      | 1767225600 | 345600     | MQ_ACTION_PEEK_CURRENT | 65536 |
      | 1767225600 | 60         | MQ_ACTION_RECEIVE      | 4     |
      | 4000000000 | 1000000000 | MQ_ACTION_PEEK_CURRENT | 65536 |

  # ------------------------------------------------------------------ waiting (ulTimeout)

  @MS-MQRR/3.1.4.7/R54 @MS-MQRR/3.1.4.7/R62 @MS-MQRR/3.1.4.7/R64 @MS-MQRR/3.1.4.7/R66 @MS-MQRR/3.1.4.7/R67
  Scenario: A receive with a timeout waits for a message to arrive
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 3
    Then the started request 3 is still waiting
    When a message "late" arrives in the queue
    Then the started request 3 returns the message "late"
    When the client calls R_EndReceive with RR_ACK for request 3
    Then the call succeeds
    And a peek finds no message

  @MS-MQRR/3.1.4.7/R64 @MS-MQRR/3.1.4.7/R109 @MS-MQRR/3.1.4.7/R47
  Scenario: A receive whose timeout passes with no message returns MQ_ERROR_IO_TIMEOUT
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 300 as request 3
    Then the started request 3 returns MQ_ERROR_IO_TIMEOUT
    And it answered no sooner than 300 ms after it started

  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R70
  Scenario: A peek with a timeout waits for a message and leaves it in the queue
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT and ulTimeout 10000 as request 1
    And a message "late" arrives in the queue
    Then the started request 1 returns the message "late"
    And a peek finds the message "late"

  @MS-MQRR/3.1.4.7/R70
  Scenario: A peek whose timeout passes with no message returns MQ_ERROR_IO_TIMEOUT
    Given an empty queue
    And the client has opened the queue with PEEK_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT and ulTimeout 200 as request 1
    Then the started request 1 returns MQ_ERROR_IO_TIMEOUT
    And it answered no sooner than 200 ms after it started

  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R71 @MS-MQDMPR/3.1.7.1.15/R25
  Scenario: PEEK_CURRENT on a cursor of an empty queue waits for the message that arrives
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor and ulTimeout 10000 as request 1
    And a message "m" arrives in the queue
    Then the started request 1 returns the message "m"
    And a peek finds the message "m"

  # The waiting peek puts the cursor in WaitPeek (MS-MQDMPR 3.2.7.2 R12); the message that
  # arrives moves it to Read and makes it rest on that message (3.2.7.5 R4, R7), so PEEK_CURRENT
  # returns the same message again and PEEK_NEXT the one after it.
  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R71 @MS-MQRR/3.1.4.7/R72 @MS-MQDMPR/3.2.7.2/R12
  @MS-MQDMPR/3.2.7.5/R4 @MS-MQDMPR/3.2.7.5/R7 @MS-MQDMPR/3.2.7.2/R22 @MS-MQDMPR/3.2.7.3/R19
  Scenario: A cursor whose PEEK_CURRENT waited for a message rests on it
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor and ulTimeout 10000 as request 1
    And a message "m" arrives in the queue
    Then the started request 1 returns the message "m"
    When a message "n" arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "m" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "n" is returned

  # A peek through a cursor whose timeout passed: MS-MQDMPR 3.2.7.6 moves to End only a cursor
  # whose receive waited (WaitReceive); a cursor whose peek waited keeps its place, so its next
  # PEEK_CURRENT finds the message that arrived after the timeout, and its next PEEK_NEXT the
  # message after the one it rests on.
  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R70 @MS-MQRR/3.1.4.7/R71 @MS-MQDMPR/3.2.7.6/R3
  Scenario: A cursor whose PEEK_CURRENT timed out peeks the message that arrives afterwards
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor and ulTimeout 200 as request 1
    Then the started request 1 returns MQ_ERROR_IO_TIMEOUT
    When a message "m" arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "m" is returned

  # A cursor whose receive waited is given the message that arrives (MS-MQDMPR 3.2.7.5 R4, R7):
  # it leaves WaitReceive and rests there, so the next call through it is served.
  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R70 @MS-MQDMPR/3.2.7.5/R4 @MS-MQDMPR/3.2.7.5/R7
  Scenario: A cursor whose receive waited for a message serves the next call
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE on the cursor and ulTimeout 10000 as request 1
    And a message "m" arrives in the queue
    Then the started request 1 returns the message "m"
    When a message "n" arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_RECEIVE on the cursor as request 2
    Then the message "n" is returned

  # A cursor whose receive waited and timed out is moved to End (MS-MQDMPR 3.2.7.6 R3, R4) and
  # leaves its WaitReceive state: the next call through it is served, not refused as an illegal
  # cursor action.
  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R70 @MS-MQDMPR/3.2.7.6/R3 @MS-MQDMPR/3.2.7.6/R4
  Scenario: A cursor whose receive timed out is at the end of the queue
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE on the cursor and ulTimeout 200 as request 1
    Then the started request 1 returns MQ_ERROR_IO_TIMEOUT
    When a message "m" arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the call returns MQ_ERROR_IO_TIMEOUT

  @MS-MQRR/3.1.4.7/R70 @MS-MQRR/3.1.4.7/R72 @MS-MQRR/3.1.4.7/R74 @MS-MQDMPR/3.2.7.6/R3
  Scenario: A cursor whose PEEK_NEXT timed out goes on with PEEK_NEXT
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor and ulTimeout 200 as request 1
    Then the started request 1 returns MQ_ERROR_IO_TIMEOUT
    When a message "b" arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "b" is returned

  # A cursor whose message left the queue, with the message before it, steps on from where it
  # was: its next PEEK_NEXT finds the message after them (MS-MQDMPR 3.2.7.3).
  @MS-MQRR/3.1.4.7/R72 @MS-MQRR/3.1.4.7/R74 @MS-MQDMPR/3.2.7.3/R19
  Scenario: PEEK_NEXT from a cursor whose message and the one before it were received peeks the message after them
    Given a queue with messages "a, b, c"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_CURRENT and the LookupId of "b" as request 1
    Then the message "b" is returned
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call succeeds
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 2
    Then the message "a" is returned
    When the client calls R_EndReceive with RR_ACK for request 2
    Then the call succeeds
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "c" is returned

  # Like the PEEK_CURRENT that waited, the cursor then rests on the message it was given
  # (MS-MQDMPR 3.2.7.5 R4, R7).
  @MS-MQRR/3.1.4.7/R72 @MS-MQRR/3.1.4.7/R74 @MS-MQRR/3.1.4.7/R75 @MS-MQDMPR/3.2.7.5/R4
  @MS-MQDMPR/3.2.7.5/R7
  Scenario: PEEK_NEXT on a cursor at the last message waits for the next one
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor and ulTimeout 10000 as request 1
    And a message "b" arrives in the queue
    Then the started request 1 returns the message "b"
    When a message "c" arrives in the queue
    And the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the message "b" is returned
    When the client calls R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor
    Then the message "c" is returned

  # A second call through a cursor whose first call still waits: no rule of MS-MQDMPR 3.2 takes a
  # cursor out of WaitPeek or WaitReceive but the message or the timeout the first call waits
  # for. Whatever the server makes of the second call (an illegal cursor action, or a peek or
  # receive of its own that finds the queue empty with ulTimeout 0), it answers it with a
  # returned failure, and the first call still gets the message that arrives.
  @MS-MQRR/3.1.4.7/R47 @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R71 @MS-MQDMPR/3.2.7.5/R4
  @MS-MQDMPR/3.2.7.5/R6
  Scenario Outline: A second call through a cursor whose first call waits is answered, and the first still gets the message
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with <first> on the cursor and ulTimeout 10000 as request 1
    And the client calls R_StartReceive with <second> on the cursor as request 2
    Then the call returns a failure HRESULT
    And the started request 1 is still waiting
    When a message "m" arrives in the queue
    Then the started request 1 returns the message "m"

    Examples:
      | first                  | second                 |
      | MQ_ACTION_PEEK_CURRENT | MQ_ACTION_PEEK_CURRENT |
      | MQ_ACTION_PEEK_CURRENT | MQ_ACTION_PEEK_NEXT    |
      | MQ_ACTION_PEEK_CURRENT | MQ_ACTION_RECEIVE      |
      | MQ_ACTION_RECEIVE      | MQ_ACTION_PEEK_CURRENT |
      | MQ_ACTION_RECEIVE      | MQ_ACTION_PEEK_NEXT    |
      | MQ_ACTION_RECEIVE      | MQ_ACTION_RECEIVE      |

  @MS-MQRR/3.1.4.7/R62 @MS-MQRR/3.1.4.7/R64 @MS-MQRR/3.1.4.7/R66
  Scenario: Waiting receives on one handle are served in the order they started
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 1
    And the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 2
    And a message "one" arrives in the queue
    Then the started request 1 returns the message "one"
    And the started request 2 is still waiting
    When a message "two" arrives in the queue
    Then the started request 2 returns the message "two"

  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R70
  Scenario: A waiting peek and a waiting receive both see the message that arrives
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT and ulTimeout 10000 as request 1
    And the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 2
    And a message "m" arrives in the queue
    Then the started request 1 returns the message "m"
    And the started request 2 returns the message "m"

  # A peek through a cursor that waits is not a destructive read either (MS-MQDMPR 3.1.7.1.15
  # R22): Message Position Available goes on past it to the receive waiting behind it
  # (3.1.7.2.2), which gets the same message.
  @MS-MQRR/3.1.4.7/R68 @MS-MQRR/3.1.4.7/R70 @MS-MQRR/3.1.4.7/R71 @MS-MQDMPR/3.1.7.1.15/R22
  @MS-MQDMPR/3.1.7.2.2/R10
  Scenario: A PEEK_CURRENT waiting on a cursor and a waiting receive both see the message that arrives
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor and ulTimeout 10000 as request 1
    And the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 2
    And a message "m" arrives in the queue
    Then the started request 1 returns the message "m"
    And the started request 2 returns the message "m"

  # The same for PEEK_NEXT (3.1.7.1.14 R20): two cursors at the last message both wait for the
  # next one, and both get it.
  @MS-MQRR/3.1.4.7/R72 @MS-MQRR/3.1.4.7/R74 @MS-MQRR/3.1.4.7/R75 @MS-MQDMPR/3.1.7.1.14/R20
  @MS-MQDMPR/3.1.7.2.2/R10
  Scenario: Two cursors' PEEK_NEXT waiting at the last message both see the message that arrives
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has created a second cursor
    And the client has peeked "a" on the cursor
    And the client has peeked "a" on the second cursor
    When the client starts R_StartReceive with MQ_ACTION_PEEK_NEXT on the cursor and ulTimeout 10000 as request 1
    And the client starts R_StartReceive with MQ_ACTION_PEEK_NEXT on the second cursor and ulTimeout 10000 as request 2
    And a message "b" arrives in the queue
    Then the started request 1 returns the message "b"
    And the started request 2 returns the message "b"

  # ------------------------------------------------------------------ another handle's values

  @MS-MQRR/3.1.4.7/R7 @MS-MQRR/3.1.4.7/R53 @MS-MQRR/3.1.4.7/R47 @MS-MQRR/3.1.4.4/R3 @MS-MQRR/3.1.4.5/R12
  Scenario Outline: A cursor of another handle is refused, or read on its own queue, never on the handle's
    Given a queue holding "a, b"
    And another queue holding "x, y"
    And the client holds a cursor on <owner>
    And the client holds a cursor on <other>
    When the client <verb> with the cursor of <owner> through the handle of <other>
    Then the call is refused, or served at that cursor with "<at cursor>"
    And peeking <other> returns "<first>"
    And where it was refused, peeking through the cursor of <owner> returns "<at cursor>"

    Examples: a cursor of another queue
      | owner           | verb       | other           | at cursor | first |
      | the other queue | peeks      | the queue       | x         | a     |
      | the other queue | peeks next | the queue       | x         | a     |
      | the other queue | receives   | the queue       | x         | a     |
      | the queue       | receives   | the other queue | a         | x     |

    Examples: a cursor of another handle on the same queue
      | owner                        | verb       | other     | at cursor | first |
      | a second handle on the queue | peeks      | the queue | a         | a     |
      | a second handle on the queue | peeks next | the queue | a         | a     |

  @MS-MQRR/3.1.4.7/R76 @MS-MQRR/3.1.4.7/R81 @MS-MQRR/3.1.4.7/R86 @MS-MQRR/3.1.4.7/R91 @MS-MQRR/3.1.4.7/R97 @MS-MQRR/3.1.4.7/R103 @MS-MQRR/3.1.4.7/R109 @MS-MQDMPR/3.1.7.3.3/R4 @MS-MQDMPR/3.1.7.3.3/R5 @MS-MQDMPR/3.1.7.3.3/R6
  Scenario Outline: The LookupId of another queue's message names no message of this queue
    Given a queue holding "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And another queue holding "x"
    And the client knows the lookup identifiers of the messages in the other queue
    When a message "b" arrives in the queue
    And the client calls R_StartReceive with <action> and the LookupId of "x"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And a peek finds the message "a"
    And peeking the other queue returns "x"

    Examples:
      | action                    |
      | MQ_LOOKUP_PEEK_CURRENT    |
      | MQ_LOOKUP_PEEK_NEXT       |
      | MQ_LOOKUP_PEEK_PREV       |
      | MQ_LOOKUP_RECEIVE_CURRENT |
      | MQ_LOOKUP_RECEIVE_NEXT    |
      | MQ_LOOKUP_RECEIVE_PREV    |

  # ------------------------------------------------------------------ lookup identifiers above 2^56

  @MS-MQDMPR/3.1.7.1.9/R11 @MS-MQDMPR/3.1.7.1.9/R12 @MS-MQRR/3.1.4.7/R17 @MS-MQDMPR/3.1.7.3.3/R4 @MS-MQDMPR/3.1.7.3.3/R5 @MS-MQDMPR/3.1.7.3.3/R6 @MS-MQRR/3.1.4.7/R76 @MS-MQRR/3.1.4.7/R81 @MS-MQRR/3.1.4.7/R103 @MS-MQRR/3.1.4.9/R14
  Scenario: A transactional message's lookup identifier is above 2^56: pSequenceId is its lower 7 bytes, LookupId the whole
    Given a transactional queue holding transactional messages "t1, t2, t3"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has found the whole lookup identifier of each message of the queue
    Then the lookup identifier of "t2" is above 2^56, its high-order byte 0x07 - Priority
    When the client peeks at "t2" by its lookup identifier without its high-order byte
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    When the client peeks at "t2" by its lookup identifier
    Then the message "t2" is returned
    And its pSequenceId is the lower 7 bytes of the lookup identifier of "t2"
    And the pSequenceId fits in 7 bytes and is nonzero
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_NEXT and the LookupId of "t1"
    Then the message "t2" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_PREV and the LookupId of "t3" as request 4
    Then the message "t2" is returned
    And its pSequenceId is the lower 7 bytes of the lookup identifier of "t2"
    When the client calls R_EndReceive with RR_ACK for request 4
    Then the call returns MQ_OK
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 5
    Then the message "t1" is returned
    And its pSequenceId is the lower 7 bytes of the lookup identifier of "t1"

  # MS-MQDMPR 3.1.7.2.7: when a message's Time-To-Be-Received timer expires (started when it
  # was enqueued, 3.1.7.1.9), a message outside a transaction is deleted from its queue.
  @MS-MQDMPR/3.1.7.2.7/R10 @MS-MQDMPR/3.1.7.2.7/R11
  Scenario: A message whose time to be received has run out is gone from its queue
    Given a queue holding "brief", each message with a time to be received of 2 seconds,
    Then peeking the queue returns "brief"
    When the client waits 3 seconds
    Then peeking the queue finds no message

  # A transactional message whose Time-To-Be-Received timer expires is Locked for the
  # transaction that sent it and its Dequeue recorded there (MS-MQDMPR 3.1.7.2.7 R3-R9): it is
  # gone from what a peek finds as well, however the server then disposes of it.
  @MS-MQDMPR/3.1.7.2.7/R3 @MS-MQDMPR/3.1.7.2.7/R4
  Scenario: A transactional message whose time to be received has run out is gone from what a peek finds
    Given a transactional queue holding transactional messages "brief", each with a time to be received of 2 seconds,
    Then peeking the queue returns "brief"
    When the client waits 3 seconds
    Then peeking the queue finds no message

  # The Dequeue of that message is recorded in the transaction that sent it (R9) and in no
  # other: a transaction of the client's that is aborted meanwhile does not give it back.
  @MS-MQDMPR/3.1.7.2.7/R3 @MS-MQDMPR/3.1.7.2.7/R9
  Scenario: A transactional message whose time to be received has run out stays gone when a transaction of the client's is aborted
    Given a transactional queue holding transactional messages "brief", each with a time to be received of 2 seconds,
    And another transactional queue holding "held"
    And the client has enlisted transaction "T"
    When the client receives in transaction "T" from the other queue
    And the client waits 3 seconds
    And transaction "T" is aborted
    Then peeking the queue finds no message

  # MS-MQDMPR 3.1.2.4: "If the TimeToBeReceived ADM attribute value is equal to 0x00000000, the
  # timer expires immediately" (only 0xFFFFFFFF, infinity, starts none).
  @MS-MQDMPR/3.1.7.2.7/R10 @MS-MQDMPR/3.1.7.2.7/R11
  Scenario: A message whose time to be received is 0 is gone from its queue at once
    Given a queue holding "instant", each message with a time to be received of 0 seconds,
    When the client waits 1 second
    Then peeking the queue finds no message

  # MS-MQDMPR 3.1.7.3.3 (Seek Available Message Position With Id), for a peek: a message a
  # receive holds (Locked, until R_EndReceive) is refused with MQ_ERROR_TRANSACTION_USAGE
  # (R30, R31, R34, R35); one purged meanwhile (PurgePending) is not found (R38, R39).
  @MS-MQDMPR/3.1.7.3.3/R30 @MS-MQDMPR/3.1.7.3.3/R31 @MS-MQDMPR/3.1.7.3.3/R34 @MS-MQDMPR/3.1.7.3.3/R35
  Scenario: A peek by lookup identifier at a message a two-phase receive holds is refused with MQ_ERROR_TRANSACTION_USAGE
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 5
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "a"
    Then the call returns MQ_ERROR_TRANSACTION_USAGE

  # The same for a receive: Seek Available Message Position With Id gives only an Available
  # position (R28, R29) and, for a receive, sets no status for any other (a hole the documents
  # leave); Read Message By Lookup Identifier (3.1.7.1.13) then has no position to take. Whatever status a
  # server chooses, the call fails and the message stays with the receive that holds it.
  @MS-MQDMPR/3.1.7.3.3/R23 @MS-MQDMPR/3.1.7.3.3/R28 @MS-MQDMPR/3.1.7.3.3/R29
  Scenario: A receive by lookup identifier of a message a two-phase receive holds fails and leaves the message to that receive
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 5
    Then the message "a" is returned
    When the client calls R_StartReceive with MQ_LOOKUP_RECEIVE_CURRENT and the LookupId of "a" as request 6
    Then the call returns a failure HRESULT
    When the client calls R_EndReceive with RR_ACK for request 5
    Then the call returns MQ_OK
    And a peek finds the message "b"

  @MS-MQDMPR/3.1.7.3.3/R30 @MS-MQDMPR/3.1.7.3.3/R38 @MS-MQDMPR/3.1.7.3.3/R39
  Scenario: A peek by lookup identifier at a message purged while a two-phase receive held it finds no message
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has noted the lookup identifiers of the messages
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 5
    Then the message "a" is returned
    When the client calls R_PurgeQueue
    And the client calls R_StartReceive with MQ_LOOKUP_PEEK_CURRENT and the LookupId of "a"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  # The timer of a waiting receive is set to ulTimeout (3.1.2.1): once it has expired the call
  # is over, and a message that arrives afterwards stays in the queue.
  @MS-MQRR/3.1.2.1/R1 @MS-MQRR/3.1.2.1/R2 @MS-MQRR/3.1.4.7/R64
  Scenario: A message that arrives after a receive's timeout has passed stays in the queue
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 200 as request 3
    And the client waits 0.5 seconds
    And a message "late" arrives in the queue
    Then the started request 3 returns MQ_ERROR_IO_TIMEOUT
    And a peek finds the message "late"
