Feature: MS-MQRR 3.1.4.14 R_SetUserAcknowledgementClass (Opnum 14)
  The R_SetUserAcknowledgementClass method sets the acknowledgment class of a message that a
  transaction received: a class other than 0x0000 makes the transaction's commit acknowledge
  the receive as rejected (DequeueReason NackReceiveRejected). It is called after
  R_StartTransactionalReceive and R_EndTransactionalReceive, before the transaction ends.

  @MS-MQRR/3.1.4.14/R4 @MS-MQRR/3.1.4.14/R8 @MS-MQRR/3.1.4.14/R10 @MS-MQRR/3.1.4.14/R11
  @MS-MQRR/3.1.4.14/R13 @MS-MQRR/3.1.4.14/R15 @MS-MQRR/3.1.4.14/R17 @MS-MQRR/3.1.4.14/R18
  Scenario: A message received in a transaction is marked as rejected
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When the client sets the acknowledgement class of "one" to 0xC004
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking the queue returns "two"

  @MS-MQRR/3.1.4.14/R8 @MS-MQRR/3.1.4.14/R13 @MS-MQRR/3.1.4.14/R15 @MS-MQRR/3.1.4.14/R17
  @MS-MQRR/3.1.4.14/R18
  Scenario: A class of 0x0000 leaves the acknowledgment as it is
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When the client sets the acknowledgement class of "one" to 0x0000
    Then the call returns MQ_OK
    When transaction "T1" is aborted
    Then peeking the queue returns "one"

  @MS-MQRR/3.1.4.14/R15 @MS-MQRR/3.1.4.14/R16
  Scenario: A message no transaction holds is refused
    Given a transactional queue holding "one, two"
    And the client knows the lookup identifiers of the messages in the queue
    When the client sets the acknowledgement class of "one" to 0xC004
    Then the call returns MQ_ERROR_TRANSACTION_USAGE
    And peeking the queue returns "one"

  # R15 looks for the operation of the message named, not for any operation: a message no
  # transaction holds is refused while another one is held in a transaction.
  @MS-MQRR/3.1.4.14/R15 @MS-MQRR/3.1.4.14/R16
  Scenario: A message no transaction holds is refused while another message is held in a transaction
    Given a transactional queue holding "one, two"
    And the client knows the lookup identifiers of the messages in the queue
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When the client sets the acknowledgement class of "two" to 0xC004
    Then the call returns MQ_ERROR_TRANSACTION_USAGE
    When transaction "T1" is committed
    Then peeking the queue returns "two"

  @MS-MQRR/3.1.4.14/R13 @MS-MQRR/3.1.4.14/R14
  Scenario: A lookup identifier the queue never held is not found
    Given a transactional queue holding "one"
    And the client holds a receive handle on the queue
    When the client sets the acknowledgement class of an unknown lookup identifier to 0xC004
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  @MS-MQRR/3.1.4.14/R4 @MS-MQRR/3.1.4.14/R9 @MS-MQRR/3.1.4.14/R11 @MS-MQRR/3.1.4.14/R12
  Scenario: A closed queue handle is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When the client sets the acknowledgement class of "one" to 0xC004 through a closed handle
    Then the call fails

  @MS-MQRR/3.1.4.14/R5 @MS-MQRR/3.1.4.14/R9 @MS-MQRR/3.1.4.14/R12
  Scenario: A NULL queue handle is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When the client sets the acknowledgement class of "one" to 0xC004 through a NULL handle
    Then the call fails

  @MS-MQRR/3.1.4.14/R3 @MS-MQRR/3.1.4.14/R13 @MS-MQRR/3.1.4.14/R14
  Scenario: The LookupId of a message received from another queue is not found through this queue's handle
    Given a transactional queue holding "a"
    And another transactional queue holding "x"
    And the client has enlisted transaction "T1"
    And the client has received "x" from the other queue as request 2 in transaction "T1"
    When the client sets the acknowledgement class of "x" to 0xC004
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  # A queue deleted while a client holds a handle to it (MS-MQDMPR 3.1.7.1.4: the descriptors
  # keep no queue): phContext names no open queue any more, an error the method returns as a
  # failure HRESULT.
  @MS-MQRR/3.1.4.14/R9 @MS-MQRR/3.1.4.14/R12
  Scenario: A queue handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1" and ended the receive with RR_ACK
    When the queue is deleted through SUT control
    And the client sets the acknowledgement class of "one" to 0xC004
    Then the call returns a failure HRESULT
