Feature: MS-MQRR 3.1.4.9 R_EndReceive (Opnum 9)
  The client invokes the R_EndReceive method to advise the server that the message packet
  returned by the R_StartReceive (Opnum 7) method has been received (RR_ACK) or that it is to
  stay in the queue (RR_NACK).

  @MS-MQRR/3.1.4.9/R6 @MS-MQRR/3.1.4.9/R7 @MS-MQRR/3.1.4.9/R10 @MS-MQRR/3.1.4.9/R12 @MS-MQRR/3.1.4.9/R14 @MS-MQRR/3.1.4.9/R15 @MS-MQRR/3.1.4.9/R17 @MS-MQRR/3.1.4.9/R19 @MS-MQRR/3.1.4.9/R20 @MS-MQRR/3.1.4.9/R21 @MS-MQRR/3.1.4.9/R22 @MS-MQRR/3.1.4.9/R23
  Scenario: RR_ACK removes the received message from the queue
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 1
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns MQ_OK
    And a peek finds the message "second"

  @MS-MQRR/3.1.4.9/R6 @MS-MQRR/3.1.4.9/R8 @MS-MQRR/3.1.4.9/R10 @MS-MQRR/3.1.4.9/R19 @MS-MQRR/3.1.4.9/R22 @MS-MQRR/3.1.4.9/R23
  Scenario: RR_NACK keeps the message in the queue for the next reader
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 7
    When the client calls R_EndReceive with RR_NACK for request 7
    Then the call returns MQ_OK
    And a peek finds the message "first"
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 8
    Then the message "first" is returned

  @MS-MQRR/3.1.4.9/R16
  Scenario: R_EndReceive on a handle whose queue was deleted returns a failure, not an RPC fault
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "a" as request 1
    When the queue is deleted through SUT control
    And the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns a failure HRESULT

  @MS-MQRR/3.1.4.9/R7 @MS-MQRR/3.1.4.9/R14
  Scenario: A receive is ended once: the second R_EndReceive for it fails
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 1
    And the client has received "second" as request 2
    And the client has called R_EndReceive with RR_ACK for request 1
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    When the client calls R_EndReceive with RR_NACK for request 2
    Then the call returns MQ_OK
    And a peek finds the message "second"

  @MS-MQRR/3.1.4.9/R11 @MS-MQRR/3.1.4.9/R14
  Scenario: A dwRequestId with no pending request on the handle is refused
    Given a queue with messages "first"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 1
    When the client calls R_EndReceive with RR_ACK for request 2
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns MQ_OK
    And a peek finds no message

  @MS-MQRR/3.1.4.9/R11 @MS-MQRR/3.1.4.9/R13
  Scenario: A handle with no pending request at all gets MQ_ERROR_INVALID_HANDLE
    Given a queue with messages "first"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns MQ_ERROR_INVALID_HANDLE
    And a peek finds the message "first"

  @MS-MQRR/3.1.4.9/R13
  Scenario: A peek leaves no pending request to end
    Given a queue with messages "first"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has called R_StartReceive with MQ_ACTION_PEEK_CURRENT as request 1
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns MQ_ERROR_INVALID_HANDLE
    And a peek finds the message "first"

  @MS-MQRR/3.1.4.9/R17 @MS-MQRR/3.1.4.9/R18
  Scenario: A pending request whose receive found no message ends with MQ_ERROR_MESSAGE_NOT_FOUND
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has called R_StartReceive with MQ_ACTION_RECEIVE as request 3
    When the client calls R_EndReceive with RR_ACK for request 3
    Then the call returns MQ_ERROR_MESSAGE_NOT_FOUND

  @MS-MQRR/3.1.4.9/R6 @MS-MQRR/3.1.4.9/R11
  Scenario Outline: A dwAck other than RR_ACK or RR_NACK is refused, and the message stays locked
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 1
    When the client calls R_EndReceive with <ack> for request 1
    Then the call fails
    And a peek finds the message "second"
    When the client calls R_EndReceive with RR_NACK for request 1
    Then the call returns MQ_OK

    Examples:
      | ack        |
      | 0x00000000 |
      | 0x00000003 |
      | 0xFFFFFFFF |

  @MS-MQRR/3.1.4.9/R4 @MS-MQRR/3.1.4.9/R11
  Scenario: A handle closed with R_CloseQueue is refused
    Given a queue with messages "first"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 1
    And the client has closed the queue
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call fails

  @MS-MQRR/3.1.4.9/R5 @MS-MQRR/3.1.4.9/R11
  Scenario: A NULL handle is refused
    Given a queue with messages "first, second"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "first" as request 1
    When the client calls R_EndReceive with RR_ACK for request 1 with a NULL handle
    Then the call fails
    When the client calls R_EndReceive with RR_NACK for request 1
    Then the call returns MQ_OK
    And a peek finds the message "first"

  @MS-MQRR/3.1.4.9/R3 @MS-MQRR/3.1.4.9/R11 @MS-MQRR/3.1.4.9/R13
  Scenario: A receive pending on another queue's handle is not ended through a handle with none
    Given a queue holding "a"
    And another queue holding "x, y"
    And the client has received "x" from the other queue as request 3
    When the client ends request 3 with RR_ACK through the handle of the queue
    Then the call returns MQ_ERROR_INVALID_HANDLE
    And peeking the other queue returns "y"
    When the client ends request 3 with RR_NACK through the handle of the other queue
    Then the call returns MQ_OK
    And peeking the other queue returns "x"

  @MS-MQRR/3.1.4.9/R3 @MS-MQRR/3.1.4.9/R11 @MS-MQRR/3.1.4.9/R14
  Scenario: A receive pending on another queue's handle is not ended through a handle with pending receives of its own
    Given a queue holding "a"
    And another queue holding "x, y"
    And the client has received "a" through the queue as request 1
    And the client has received "x" from the other queue as request 3
    When the client ends request 3 with RR_ACK through the handle of the queue
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    And peeking the other queue returns "y"
    When the client ends request 1 with RR_NACK through the handle of the queue
    Then the call returns MQ_OK
    And peeking the queue returns "a"
    When the client ends request 3 with RR_ACK through the handle of the other queue
    Then the call returns MQ_OK
    And peeking the other queue returns "y"

  @MS-MQRR/3.1.4.9/R3 @MS-MQRR/3.1.4.9/R9 @MS-MQRR/3.1.4.9/R14 @MS-MQRR/3.1.4.9/R17 @MS-MQRR/3.1.4.9/R19 @MS-MQRR/3.1.4.9/R22
  Scenario: The same dwRequestId pending on two handles: each handle ends its own receive
    Given a queue holding "a, b"
    And another queue holding "x, y"
    And the client has received "a" through the queue as request 3
    And the client has received "x" from the other queue as request 3
    When the client ends request 3 with RR_ACK through the handle of the other queue
    Then the call returns MQ_OK
    And peeking the other queue returns "y"
    And peeking the queue returns "b"
    When the client ends request 3 with RR_NACK through the handle of the queue
    Then the call returns MQ_OK
    And peeking the queue returns "a"
    And peeking the other queue returns "y"
