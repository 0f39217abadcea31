Feature: MS-MQRR 3.1.4.6 R_PurgeQueue (Opnum 6)
  The R_PurgeQueue method removes all messages from the queue.

  @MS-MQRR/3.1.4.6/R10 @MS-MQRR/3.1.4.6/R11 @MS-MQRR/3.1.4.6/R13
  Scenario: A handle opened with receive access purges the queue
    Given a queue with messages "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_PurgeQueue
    Then a peek finds no message

  @MS-MQRR/3.1.4.6/R14
  Scenario: A handle opened with peek access may not purge
    Given a queue with messages "one"
    And the client has opened the queue with PEEK_ACCESS
    When the client calls R_PurgeQueue
    Then a peek finds the message "one"

  @MS-MQRR/3.1.4.6/R5 @MS-MQRR/3.1.4.6/R7 @MS-MQRR/3.1.4.6/R8 @MS-MQRR/3.1.4.6/R9 @MS-MQRR/3.1.4.6/R10 @MS-MQRR/3.1.4.6/R11 @MS-MQRR/3.1.4.6/R12 @MS-MQRR/3.1.4.6/R13
  Scenario: R_PurgeQueue returns MQ_OK and the queue goes on taking messages
    Given a queue with messages "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_PurgeQueue
    Then the call returns MQ_OK
    And a peek finds no message
    When a message "three" arrives in the queue
    Then a peek finds the message "three"

  @MS-MQRR/3.1.4.6/R3 @MS-MQRR/3.1.4.6/R10 @MS-MQRR/3.1.4.6/R14
  Scenario: A handle opened with peek access gets STATUS_ACCESS_DENIED
    Given a queue with messages "one"
    And the client has opened the queue with PEEK_ACCESS
    When the client calls R_PurgeQueue
    Then the call returns STATUS_ACCESS_DENIED

  @MS-MQRR/3.1.4.6/R11 @MS-MQRR/3.1.4.6/R12 @MS-MQRR/3.1.4.6/R13
  Scenario: A purged message under a pending receive is gone when the receive ends, even with RR_NACK
    Given a queue with messages "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "one" as request 1
    When the client calls R_PurgeQueue
    Then the call returns MQ_OK
    And a peek finds no message
    When the client calls R_EndReceive with RR_NACK for request 1
    Then a peek finds no message

  # A cursor resting on a message the purge deleted (Message Position Deleted sets the position
  # Deleted, MS-MQDMPR 3.1.7.2.1): it is not Available, so a peek or a receive at the cursor
  # (MS-MQDMPR 3.2.7.2, 3.2.7.4: AlreadyReceived) finds no message there and fails.
  @MS-MQRR/3.1.4.6/R11 @MS-MQDMPR/3.1.7.2.1/R4 @MS-MQDMPR/3.2.7.2/R26 @MS-MQDMPR/3.2.7.4/R29
  Scenario: A cursor whose message was purged neither peeks nor receives it
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client calls R_PurgeQueue
    Then the call returns MQ_OK
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the call returns a failure HRESULT
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE on the cursor as request 2
    Then the call returns a failure HRESULT
    And a peek finds no message

  # A purge marks a message a transaction holds PurgePending (it stays Locked for the
  # transaction); Transaction Abort deletes a PurgePending message rather than making it
  # Available again (MS-MQDMPR 3.1.4.5 R7, R8).
  @MS-MQRR/3.1.4.6/R11 @MS-MQDMPR/3.1.4.5/R7 @MS-MQDMPR/3.1.4.5/R8 @MS-MQMR/3.1.4.1/R40
  Scenario: A message purged while a transaction held it is gone when the transaction aborts
    Given a transactional queue holding "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1"
    When the client calls R_PurgeQueue
    Then the call returns MQ_OK
    When transaction "T1" is aborted
    Then a peek finds no message
    And PROPID_MGMT_QUEUE_MESSAGE_COUNT of the queue is 0

  @MS-MQRR/3.1.4.6/R3 @MS-MQRR/3.1.4.6/R6 @MS-MQRR/3.1.4.6/R8 @MS-MQRR/3.1.4.6/R9
  Scenario: A handle closed with R_CloseQueue is refused
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has closed the queue
    When the client calls R_PurgeQueue
    Then the call fails

  @MS-MQRR/3.1.4.6/R4 @MS-MQRR/3.1.4.6/R6 @MS-MQRR/3.1.4.6/R9
  Scenario: A NULL handle is refused
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_PurgeQueue with a NULL handle
    Then the call fails
    And a peek finds the message "one"

  # A queue deleted while a client holds a handle to it (MS-MQDMPR 3.1.7.1.4: the descriptors
  # keep no queue): the handle names no open queue any more, an error R_PurgeQueue returns as a
  # failure HRESULT (MS-MQRR 3.1.4.6 R6-R9).
  @MS-MQRR/3.1.4.6/R6 @MS-MQRR/3.1.4.6/R9
  Scenario: R_PurgeQueue through a handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the queue is deleted through SUT control
    And the client calls R_PurgeQueue
    Then the call returns a failure HRESULT
