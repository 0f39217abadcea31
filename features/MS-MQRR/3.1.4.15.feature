Feature: MS-MQRR 3.1.4.15 R_EndTransactionalReceive (Opnum 15)
  The R_EndTransactionalReceive method completes a receive started by
  R_StartTransactionalReceive. The request is looked up by {phContext, dwRequestId}; Dequeue
  Message End runs as transactional, so the message stays with the transaction, whose commit
  removes it and whose abort makes it available again, whatever dwAck said.

  @MS-MQRR/3.1.4.15/R4 @MS-MQRR/3.1.4.15/R6 @MS-MQRR/3.1.4.15/R7 @MS-MQRR/3.1.4.15/R10
  @MS-MQRR/3.1.4.15/R12 @MS-MQRR/3.1.4.15/R14 @MS-MQRR/3.1.4.15/R15 @MS-MQRR/3.1.4.15/R17
  @MS-MQRR/3.1.4.15/R19 @MS-MQRR/3.1.4.15/R20 @MS-MQRR/3.1.4.15/R21 @MS-MQRR/3.1.4.15/R22
  @MS-MQRR/3.1.4.15/R23 @MS-MQRR/3.1.4.15/R24
  Scenario: RR_ACK does not remove the message: a transaction that aborts gives it back
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue
    Then the message "one" is returned
    When the client ends the transactional receive with RR_ACK
    Then the call returns MQ_OK
    When transaction "T1" is aborted
    Then peeking the queue returns "one"

  @MS-MQRR/3.1.4.15/R6 @MS-MQRR/3.1.4.15/R7 @MS-MQRR/3.1.4.15/R10 @MS-MQRR/3.1.4.15/R19
  @MS-MQRR/3.1.4.15/R22 @MS-MQRR/3.1.4.15/R24
  Scenario: After RR_ACK the commit removes the message
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue
    And the client ends the transactional receive with RR_ACK
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking the queue returns "two"

  @MS-MQRR/3.1.4.15/R6 @MS-MQRR/3.1.4.15/R8 @MS-MQRR/3.1.4.15/R10 @MS-MQRR/3.1.4.15/R19
  @MS-MQRR/3.1.4.15/R22 @MS-MQRR/3.1.4.15/R23 @MS-MQRR/3.1.4.15/R24
  Scenario: After RR_NACK the message is available again once its transaction aborts
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client has enlisted transaction "T2"
    When the client receives in transaction "T1" from the queue
    And the client ends the transactional receive with RR_NACK
    Then the call returns MQ_OK
    When transaction "T1" is aborted
    And the client receives in transaction "T2" from the queue
    Then the message "one" is returned

  @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R13
  Scenario: A handle with no pending receive is refused
    Given a transactional queue holding "one"
    And the client holds a receive handle on the queue
    When the client ends the transactional receive with RR_ACK
    Then the call returns MQ_ERROR_INVALID_HANDLE

  @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R14
  Scenario: A request the handle never started is refused
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue
    And the client ends a transactional receive it never started with RR_ACK
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    When the client ends the transactional receive with RR_ACK
    Then the call returns MQ_OK

  @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R14 @MS-MQRR/3.1.4.15/R17 @MS-MQRR/3.1.4.15/R18
  Scenario: A request whose message is gone answers MQ_ERROR_MESSAGE_NOT_FOUND
    Given a transactional queue holding "one, two"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1"
    When transaction "T1" is aborted
    And the client receives "one" from the queue and acknowledges it
    And the client ends the first transactional receive with RR_ACK
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  @MS-MQRR/3.1.4.15/R6 @MS-MQRR/3.1.4.15/R11
  Scenario Outline: A dwAck other than RR_ACK or RR_NACK is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    When the client receives in transaction "T1" from the queue
    And the client ends the transactional receive with dwAck <dwAck>
    Then the call fails

    Examples:
      | dwAck |
      | 0     |
      | 3     |

  @MS-MQRR/3.1.4.15/R4 @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R13
  Scenario: A closed queue handle is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1"
    When the client ends the first transactional receive through a closed handle
    Then the call fails

  @MS-MQRR/3.1.4.15/R5 @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R13
  Scenario: A NULL queue handle is refused
    Given a transactional queue holding "one"
    And the client has enlisted transaction "T1"
    And the client has received "one" in transaction "T1"
    When the client ends the first transactional receive through a NULL handle
    Then the call fails

  @MS-MQRR/3.1.4.15/R3 @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R13
  Scenario: A transactional receive pending on another queue's handle is not ended through a handle with none
    Given a transactional queue holding "a"
    And another transactional queue holding "x, y"
    And the client has enlisted transaction "T1"
    And the client has received "x" from the other queue as request 3 in transaction "T1"
    When the client ends transactional request 3 with RR_ACK through the handle of the queue
    Then the call returns MQ_ERROR_INVALID_HANDLE
    When the client ends transactional request 3 with RR_ACK through the handle of the other queue
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking the other queue returns "y"

  @MS-MQRR/3.1.4.15/R3 @MS-MQRR/3.1.4.15/R11 @MS-MQRR/3.1.4.15/R14
  Scenario: A transactional receive pending on another queue's handle is not ended through a handle with pending receives of its own
    Given a transactional queue holding "a"
    And another transactional queue holding "x, y"
    And the client has enlisted transaction "T1"
    And the client has received "x" from the other queue as request 3 in transaction "T1"
    And the client has received "a" in transaction "T1"
    When the client ends transactional request 3 with RR_ACK through the handle of the queue
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    When the client ends transactional request 3 with RR_ACK through the handle of the other queue
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking the other queue returns "y"
