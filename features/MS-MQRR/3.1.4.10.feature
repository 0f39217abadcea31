Feature: MS-MQRR 3.1.4.10 R_MoveMessage (Opnum 10)
  The R_MoveMessage method moves a message from one queue to another. The source and
  destination queues must be related: the destination is a subqueue of the source, or the
  source is a subqueue of the destination, or the two are subqueues of the same queue. With a
  transaction identifier the move is provisional until the transaction's outcome; with a zero
  XACTUOW it is done at once.

  @MS-MQRR/3.1.4.10/R1 @MS-MQRR/3.1.4.10/R4 @MS-MQRR/3.1.4.10/R12 @MS-MQRR/3.1.4.10/R14
  @MS-MQRR/3.1.4.10/R15 @MS-MQRR/3.1.4.10/R17 @MS-MQRR/3.1.4.10/R21 @MS-MQRR/3.1.4.10/R24
  @MS-MQRR/3.1.4.10/R29 @MS-MQRR/3.1.4.10/R30 @MS-MQRR/3.1.4.10/R31 @MS-MQRR/3.1.4.10/R33
  Scenario: A message moves from a queue to one of its subqueues
    Given a queue holding "one, two" with subqueues "retry"
    And the client holds a receive handle on the queue
    And the client holds a move handle on subqueue "retry"
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_OK
    And peeking the queue returns "two"
    And peeking subqueue "retry" returns "one"

  @MS-MQRR/3.1.4.10/R1 @MS-MQRR/3.1.4.10/R12 @MS-MQRR/3.1.4.10/R20 @MS-MQRR/3.1.4.10/R24
  @MS-MQRR/3.1.4.10/R29 @MS-MQRR/3.1.4.10/R30 @MS-MQRR/3.1.4.10/R31 @MS-MQRR/3.1.4.10/R33
  Scenario: A message moves back from a subqueue to its queue
    Given a queue holding "one" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client moves "one" from subqueue "retry" to the queue
    Then the call returns MQ_OK
    And peeking subqueue "retry" finds no message
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.10/R1 @MS-MQRR/3.1.4.10/R12 @MS-MQRR/3.1.4.10/R22 @MS-MQRR/3.1.4.10/R29
  @MS-MQRR/3.1.4.10/R31 @MS-MQRR/3.1.4.10/R33
  Scenario: A message moves between two subqueues of the same queue
    Given a queue holding "one" with subqueues "retry, poison"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client moves "one" from subqueue "retry" to subqueue "poison"
    Then the call returns MQ_OK
    And peeking subqueue "retry" finds no message
    And peeking subqueue "poison" returns "one"

  @MS-MQRR/3.1.4.10/R4 @MS-MQRR/3.1.4.10/R13 @MS-MQRR/3.1.4.10/R15 @MS-MQRR/3.1.4.10/R16
  Scenario: A source handle that was closed is refused
    Given a queue holding "one" with subqueues "retry"
    And the client holds a move handle on subqueue "retry"
    When the client moves "one" from a closed handle on the queue to subqueue "retry"
    Then the call fails
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.10/R4 @MS-MQRR/3.1.4.10/R13 @MS-MQRR/3.1.4.10/R16
  Scenario Outline: A source handle not opened with RECEIVE_ACCESS moves nothing
    Given a queue holding "one" with subqueues "retry"
    And the client holds a move handle on subqueue "retry"
    When the client moves "one" from <source> handle on the queue to subqueue "retry"
    Then the call fails
    And peeking the queue returns "one"
    And peeking subqueue "retry" finds no message

    Examples:
      | source                 |
      | a PEEK_ACCESS          |
      | an R_OpenQueueForMove  |

  @MS-MQRR/3.1.4.10/R5 @MS-MQRR/3.1.4.10/R13 @MS-MQRR/3.1.4.10/R16
  Scenario: A NULL source handle is refused
    Given a queue holding "one" with subqueues "retry"
    And the client holds a move handle on subqueue "retry"
    When the client moves "one" from a NULL handle on the queue to subqueue "retry"
    Then the call fails
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.10/R7 @MS-MQRR/3.1.4.10/R17 @MS-MQRR/3.1.4.10/R18
  Scenario: A move context of zero is refused
    Given a queue holding "one" with subqueues "retry"
    And the client holds a receive handle on the queue
    When the client moves "one" from the queue to a move context of zero
    Then the call returns MQ_ERROR_INVALID_HANDLE
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.10/R17 @MS-MQRR/3.1.4.10/R18
  Scenario Outline: A destination that is not a queue opened for move is refused
    Given a queue holding "one" with subqueues "retry"
    And the client holds a receive handle on the queue
    When the client moves "one" from the queue to <destination>
    Then the call returns MQ_ERROR_INVALID_HANDLE
    And peeking the queue returns "one"

    Examples:
      | destination                                                 |
      | a move context the server never returned                    |
      | the move context of a closed move handle on subqueue "retry" |

  @MS-MQRR/3.1.4.10/R17 @MS-MQRR/3.1.4.10/R18 @MS-MQRR/3.1.4.11/R35 @MS-MQRR/2.2.4.2/R1
  Scenario: A move context is refused in another association group
    Given a queue holding "one" with subqueues "retry"
    When a connection in another association group moves "one" from its own receive handle on the queue to the move context of the client's move handle on subqueue "retry"
    Then the call returns MQ_ERROR_INVALID_HANDLE
    And peeking the queue returns "one"
    And peeking subqueue "retry" finds no message

  @MS-MQRR/3.1.4.10/R1 @MS-MQRR/3.1.4.10/R19 @MS-MQRR/3.1.4.10/R20 @MS-MQRR/3.1.4.10/R21
  @MS-MQRR/3.1.4.10/R22
  Scenario Outline: Queues that are not related answer STATUS_INVALID_PARAMETER
    Given a queue holding "one" with subqueues "retry"
    And another queue holding "other" with subqueues "retry"
    When the client moves "one" from the queue to <destination>
    Then the call returns STATUS_INVALID_PARAMETER
    And peeking the queue returns "one"

    Examples:
      | destination                         |
      | the other queue                     |
      | subqueue "retry" of the other queue |

  @MS-MQRR/3.1.4.10/R1 @MS-MQRR/3.1.4.10/R19 @MS-MQRR/3.1.4.10/R22
  Scenario: A subqueue of another queue is not related to a subqueue of this one
    Given a queue holding "one" with subqueues "retry"
    And another queue holding "other" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client moves "one" from subqueue "retry" to subqueue "retry" of the other queue
    Then the call returns STATUS_INVALID_PARAMETER
    And peeking subqueue "retry" returns "one"

  @MS-MQRR/3.1.4.10/R10 @MS-MQRR/3.1.4.10/R23
  Scenario: A transaction is refused when the destination is not transactional
    Given a queue holding "one" with subqueues "retry"
    And the client has enlisted transaction "T1"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    Then the call returns MQ_ERROR_TRANSACTION_USAGE
    And peeking the queue returns "one"
    And peeking subqueue "retry" finds no message

  @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R25
  Scenario: A lookup identifier the source queue never held is not found
    Given a queue holding "one" with subqueues "retry"
    When the client moves an unknown lookup identifier from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R25
  Scenario: A message received and acknowledged is no longer found
    Given a queue holding "one, two" with subqueues "retry"
    And the client has received "one" from the queue and acknowledged it
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking subqueue "retry" finds no message

  # MS-MQDMPR 3.1.4.4: committing a transaction deletes the positions it dequeued
  @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R25 @MS-MQDMPR/3.1.4.4/R10 @MS-MQDMPR/3.1.4.4/R11
  Scenario: A message received in a transaction that was committed is no longer found
    Given a transactional queue holding "one, two" with subqueues "retry"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When transaction "T1" is committed
    And the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking subqueue "retry" finds no message

  @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R25
  Scenario: A message already moved is no longer in the source queue
    Given a queue holding "one, two" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking subqueue "retry" returns "one"

  @MS-MQRR/3.1.4.10/R26
  Scenario: A message received in a transaction is locked under it
    Given a transactional queue holding "one" with subqueues "retry"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1"
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION

  @MS-MQRR/3.1.4.10/R26 @MS-MQRR/3.1.4.10/R27
  Scenario: A message another transaction moves is locked under it
    Given a transactional queue holding "one" with subqueues "retry, poison"
    And the client has enlisted transaction "T1"
    And the client has enlisted transaction "T2"
    And the client has moved "one" from the queue to subqueue "retry" in transaction "T1"
    When the client moves "one" from the queue to subqueue "poison" in transaction "T2"
    Then the call returns MQ_ERROR_MESSAGE_LOCKED_UNDER_TRANSACTION

  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R28
  Scenario: A transaction the server does not know is refused
    Given a transactional queue holding "one" with subqueues "retry"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T9"
    Then the call returns MQ_ERROR_TRANSACTION_SEQUENCE
    And peeking the queue returns "one"

  # A transaction that has committed or aborted leaves the TransactionCollection (MS-MQDMPR
  # 3.1.4.4 R22, 3.1.4.5 R19): a move in it afterwards names a transaction the server does not
  # know (R27, R28), and moves nothing.
  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R28 @MS-MQDMPR/3.1.4.4/R22 @MS-MQDMPR/3.1.4.5/R19
  Scenario Outline: A transaction that has ended is not known to a later move
    Given a transactional queue holding "one, two" with subqueues "retry"
    And the client has enlisted transaction "T1"
    And the client has moved "one" from the queue to subqueue "retry" in transaction "T1"
    When transaction "T1" is <ended>
    And the client moves "two" from the queue to subqueue "retry" in transaction "T1"
    Then the call returns MQ_ERROR_TRANSACTION_SEQUENCE
    And peeking the queue returns "<first>"
    And peeking subqueue "retry" <retry>

    Examples:
      | ended     | first | retry          |
      | committed | two   | returns "one"  |
      | aborted   | one   | finds no message |

  @MS-MQRR/3.1.4.10/R12 @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29 @MS-MQRR/3.1.4.10/R30
  @MS-MQRR/3.1.4.10/R31 @MS-MQRR/3.1.4.10/R32 @MS-MQRR/3.1.4.10/R33
  Scenario: A move in a transaction takes effect when the transaction commits
    Given a transactional queue holding "one" with subqueues "retry"
    And the client has enlisted transaction "T1"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    Then the call returns MQ_OK
    And peeking subqueue "retry" finds no message
    And peeking the queue finds no message
    When transaction "T1" is committed
    Then peeking subqueue "retry" returns "one"
    And peeking the queue finds no message

  @MS-MQRR/3.1.4.10/R22 @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29
  Scenario: A message a committed move put in a subqueue is found there by its LookupId and moves on
    Given a transactional queue holding "one, two" with subqueues "retry, poison"
    And the client has enlisted transaction "T1"
    And the client has enlisted transaction "T2"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    And transaction "T1" is committed
    And the client moves "one" from subqueue "retry" to subqueue "poison" in transaction "T2"
    Then the call returns MQ_OK
    When transaction "T2" is committed
    Then peeking subqueue "poison" returns "one"
    And peeking subqueue "retry" finds no message

  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29 @MS-MQRR/3.1.4.10/R32
  Scenario: A move in a transaction that aborts leaves the message where it was
    Given a transactional queue holding "one" with subqueues "retry"
    And the client has enlisted transaction "T1"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    Then the call returns MQ_OK
    When transaction "T1" is aborted
    Then peeking the queue returns "one"
    And peeking subqueue "retry" finds no message

  @MS-MQRR/3.1.4.10/R8 @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R25
  Scenario: The LookupId of another queue's message is not found in the source queue
    Given a queue holding "one" with subqueues "retry"
    And another queue holding "other"
    And the client knows the lookup identifiers of the messages in the other queue
    When the client moves "other" from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking subqueue "retry" finds no message
    And peeking the other queue returns "other"
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.10/R1 @MS-MQRR/3.1.4.10/R6 @MS-MQRR/3.1.4.10/R19 @MS-MQRR/3.1.4.10/R20 @MS-MQRR/3.1.4.10/R21 @MS-MQRR/3.1.4.10/R22
  Scenario: The move context of a subqueue of another queue is refused with this queue's handle
    Given a queue holding "one" with subqueues "retry"
    And another queue holding "other"
    When the client moves "other" from the other queue to subqueue "retry"
    Then the call returns STATUS_INVALID_PARAMETER
    And peeking the other queue returns "other"
    And peeking subqueue "retry" finds no message

  # A queue deleted while a client holds a handle to it (MS-MQDMPR 3.1.7.1.4: the descriptors
  # keep no queue): phContextFrom names no open queue any more, an error R_MoveMessage returns
  # as a failure HRESULT.
  @MS-MQRR/3.1.4.10/R4 @MS-MQRR/3.1.4.10/R13
  Scenario: A source handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a queue holding "one" with subqueues "retry"
    And the client holds a receive handle on the queue
    And the client holds a move handle on subqueue "retry"
    And the client knows the lookup identifiers of the messages in the queue
    When the queue is deleted through SUT control
    And the client moves "one" from the queue to subqueue "retry"
    Then the call returns a failure HRESULT

  # A subqueue that a message entered without a transaction indexes its messages by LookupId;
  # a message a committed move puts there afterwards (MS-MQDMPR 3.1.4.4 R17) is found by its
  # LookupId as well as the one before it.
  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29 @MS-MQDMPR/3.1.4.4/R17 @MS-MQDMPR/3.1.4.4/R18
  Scenario: A message a committed move put in a subqueue beside one moved there plainly is found by its LookupId
    Given a transactional queue holding "one, two" with subqueues "retry"
    And the client knows the lookup identifiers of the messages in the queue
    And the client has enlisted transaction "T1"
    And the client has moved "two" from the queue to subqueue "retry"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking subqueue "retry" by the lookup identifier of "one" returns it
    And peeking subqueue "retry" by the lookup identifier of "two" returns it

  # A subqueue whose only messages came by committed moves: receiving them removes them
  # (Message Position Deleted, MS-MQDMPR 3.1.7.2.1) as from any queue.
  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29 @MS-MQDMPR/3.1.4.4/R17 @MS-MQDMPR/3.1.7.2.1/R5
  Scenario: Messages a committed move put in a subqueue are received from it and leave it
    Given a transactional queue holding "one, two" with subqueues "retry"
    And the client has enlisted transaction "T1"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    And the client moves "two" from the queue to subqueue "retry" in transaction "T1"
    And transaction "T1" is committed
    And the client receives "one" from subqueue "retry" and acknowledges it
    Then peeking subqueue "retry" returns "two"
    When the client receives "two" from subqueue "retry" and acknowledges it
    Then peeking subqueue "retry" finds no message
    And peeking the queue finds no message

  # The moved message's storage leaves the source's TotalBytes for the subqueue's (MS-MQDMPR
  # 3.1.1.2; errata total-bytes: Move Message and a committed move set the position Deleted
  # without Message Position Deleted, which is where the count would fall).
  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  @MS-MQMR/3.1.4.1/R40 @MS-MQDMPR/3.1.4.4/R16
  Scenario: A message a committed move took to a subqueue takes its bytes along
    Given a transactional queue holding "one, two" with subqueues "retry"
    And the client has read PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of the queue
    And the client has enlisted transaction "T1"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    And transaction "T1" is committed
    Then PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of the queue and of subqueue "retry" add up to what the queue held, subqueue "retry" holding some
    And PROPID_MGMT_QUEUE_MESSAGE_COUNT of the queue is 1
    And PROPID_MGMT_QUEUE_MESSAGE_COUNT of subqueue "retry" is 1

  @MS-MQRR/3.1.4.10/R29 @MS-MQMR/3.1.4.1/R20 @MS-MQMR/3.1.4.1/R27
  Scenario: A message moved to a subqueue takes its bytes along
    Given a queue holding "one, two" with subqueues "retry"
    And the client has read PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of the queue
    When the client moves "one" from the queue to subqueue "retry"
    Then PROPID_MGMT_QUEUE_BYTES_IN_QUEUE of the queue and of subqueue "retry" add up to what the queue held, subqueue "retry" holding some

  # A message moved back into its queue is that queue's again: a peek by its LookupId finds it
  # there (MS-MQDMPR 3.1.1.12: the LookupIdentifier identifies one message in the
  # MessagePositionList), not the position the first move left Deleted.
  @MS-MQRR/3.1.4.10/R29 @MS-MQRR/3.1.4.10/R31 @MS-MQRR/3.1.4.7/R76 @MS-MQDMPR/3.1.7.3.3/R4
  @MS-MQDMPR/3.1.7.3.3/R24 @MS-MQDMPR/3.1.7.3.3/R28 @MS-MQDMPR/3.1.7.3.3/R29
  Scenario: A message moved back from a subqueue is found in its queue by its LookupId
    Given a queue holding "one" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client moves "one" from subqueue "retry" to the queue
    Then the call returns MQ_OK
    And peeking the queue by the lookup identifier of "one" returns it

  # A subqueue whose only messages came by committed moves (MS-MQDMPR 3.1.4.4 R17): each is found
  # there by its own LookupId, and no other message answers for it.
  @MS-MQRR/3.1.4.10/R27 @MS-MQRR/3.1.4.10/R29 @MS-MQDMPR/3.1.4.4/R17 @MS-MQRR/3.1.4.7/R76
  @MS-MQDMPR/3.1.7.3.3/R4 @MS-MQDMPR/3.1.7.3.3/R24 @MS-MQDMPR/3.1.7.3.3/R29
  Scenario: Messages only committed moves put in a subqueue are each found there by their LookupId
    Given a transactional queue holding "one, two" with subqueues "retry"
    And the client knows the lookup identifiers of the messages in the queue
    And the client has enlisted transaction "T1"
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    And the client moves "two" from the queue to subqueue "retry" in transaction "T1"
    And transaction "T1" is committed
    Then peeking subqueue "retry" by the lookup identifier of "one" returns it
    And peeking subqueue "retry" by the lookup identifier of "two" returns it

  # A message that arrives in a queue after a move took another out of it is found there by
  # its LookupId (MS-MQDMPR 3.1.7.1.9 R12-R13: Enqueue Message gives it its LookupIdentifier
  # and puts it in the queue's MessagePositionList), as is the one that was there before.
  @MS-MQRR/3.1.4.10/R29 @MS-MQRR/3.1.4.7/R76 @MS-MQDMPR/3.1.7.1.9/R12 @MS-MQDMPR/3.1.7.1.9/R13
  @MS-MQDMPR/3.1.7.3.3/R4
  Scenario: A message that arrives after a move out of its queue is found there by its LookupId
    Given a queue holding "one, two" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When a message "three" arrives in the queue
    Then peeking the queue by the lookup identifier of "three" returns it
    And peeking the queue by the lookup identifier of "two" returns it
    And peeking subqueue "retry" by the lookup identifier of "one" returns it

  # Moving another message out of the queue does not bring back the first one moved: it is
  # still not in the source queue (errata move-message-lookup-identifier: a position Move
  # Message left Deleted does not count), and it stays where it went.
  @MS-MQRR/3.1.4.10/R24 @MS-MQRR/3.1.4.10/R25
  Scenario: A message already moved is still not in the source queue after another one moves
    Given a queue holding "one, two, three" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    And the client has moved "two" from the queue to subqueue "retry"
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND
    And peeking subqueue "retry" returns "one"
