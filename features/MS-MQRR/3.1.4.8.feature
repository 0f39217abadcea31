Feature: MS-MQRR 3.1.4.8 R_CancelReceive (Opnum 8)
  The R_CancelReceive method cancels a pending call to the R_StartReceive (Opnum 7) method or
  the R_StartTransactionalReceive (Opnum 13) method. A client that waits in R_StartReceive on
  one connection cancels it over another connection of the same binding (association group).

  @MS-MQRR/3.1.4.8/R6 @MS-MQRR/3.1.4.8/R8 @MS-MQRR/3.1.4.8/R9 @MS-MQRR/3.1.4.8/R10 @MS-MQRR/3.1.4.8/R11 @MS-MQRR/3.1.4.8/R12 @MS-MQRR/3.1.4.8/R13 @MS-MQRR/3.1.4.8/R16
  Scenario: A waiting receive is cancelled from a second connection of the same association group
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has a second connection in the same association group
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 5
    And the client calls R_CancelReceive for request 5 from the second connection
    Then the call returns MQ_OK
    And the started request 5 returns MQ_ERROR_OPERATION_CANCELLED

  @MS-MQRR/3.1.4.8/R6 @MS-MQRR/3.1.4.8/R11 @MS-MQRR/3.1.4.8/R13 @MS-MQRR/3.1.4.8/R16
  Scenario: Only the receive with the dwRequestId given is cancelled
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 1
    And the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 2
    And the client calls R_CancelReceive for request 2
    Then the call returns MQ_OK
    And the started request 2 returns MQ_ERROR_OPERATION_CANCELLED
    And the started request 1 is still waiting
    When a message "m" arrives in the queue
    Then the started request 1 returns the message "m"

  @MS-MQRR/3.1.4.8/R15 @MS-MQRR/3.1.4.8/R16
  Scenario: A cancelled receive leaves no pending request to end, and no message locked
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 5
    And the client calls R_CancelReceive for request 5
    Then the started request 5 returns MQ_ERROR_OPERATION_CANCELLED
    When the client calls R_EndReceive with RR_ACK for request 5
    Then the call returns MQ_ERROR_INVALID_HANDLE
    When a message "m" arrives in the queue
    Then a peek finds the message "m"

  @MS-MQRR/3.1.4.8/R7 @MS-MQRR/3.1.4.8/R11 @MS-MQRR/3.1.4.8/R14
  Scenario: Cancelling a request that is not waiting fails
    Given a queue with messages "m"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_CancelReceive for request 9
    Then the call fails
    And a peek finds the message "m"

  @MS-MQRR/3.1.4.8/R7 @MS-MQRR/3.1.4.8/R14
  Scenario: Cancelling a receive that has completed fails and leaves its message locked
    Given a queue with messages "m, n"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "m" as request 3
    When the client calls R_CancelReceive for request 3
    Then the call fails
    And a peek finds the message "n"
    When the client calls R_EndReceive with RR_NACK for request 3
    Then the call returns MQ_OK
    And a peek finds the message "m"

  @MS-MQRR/3.1.4.8/R7 @MS-MQRR/3.1.4.8/R14
  Scenario: A receive that timed out can no longer be cancelled
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 200 as request 4
    Then the started request 4 returns MQ_ERROR_IO_TIMEOUT
    When the client calls R_CancelReceive for request 4
    Then the call fails

  @MS-MQRR/3.1.4.8/R3 @MS-MQRR/3.1.4.8/R7 @MS-MQRR/3.1.4.8/R9 @MS-MQRR/3.1.4.8/R10
  Scenario: A handle closed with R_CloseQueue is refused
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has closed the queue
    When the client calls R_CancelReceive for request 1
    Then the call fails

  @MS-MQRR/3.1.4.8/R4 @MS-MQRR/3.1.4.8/R7 @MS-MQRR/3.1.4.8/R10
  Scenario: A NULL handle is refused, and the waiting receive goes on waiting
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 1
    And the client calls R_CancelReceive for request 1 with a NULL handle
    Then the call fails
    And the started request 1 is still waiting
    When a message "m" arrives in the queue
    Then the started request 1 returns the message "m"

  @MS-MQRR/3.1.4.8/R9 @MS-MQRR/3.1.4.8/R10
  Scenario: A handle whose queue was deleted is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the queue is deleted through SUT control
    And the client calls R_CancelReceive for request 1
    Then the call returns a failure HRESULT

  @MS-MQRR/3.1.4.8/R2 @MS-MQRR/3.1.4.8/R7 @MS-MQRR/3.1.4.8/R9 @MS-MQRR/3.1.4.8/R11 @MS-MQRR/3.1.4.8/R12 @MS-MQRR/3.1.4.8/R13 @MS-MQRR/3.1.4.8/R14 @MS-MQDMPR/3.1.7.1.17/R3 @MS-MQDMPR/3.1.7.1.17/R11
  Scenario: A receive waiting on another queue's handle is not cancelled through this one
    Given a queue holding "a"
    And another empty queue
    When the client starts a receive on the other queue with ulTimeout 10000 as request 5
    And the client cancels request 5 with the handle of the queue
    Then the call fails
    And the receive started on the other queue is still waiting
    When a message "m" arrives in the other queue
    Then the receive started on the other queue returns the message "m"
    And peeking the queue returns "a"

  @MS-MQRR/3.1.4.8/R5 @MS-MQRR/3.1.4.8/R6 @MS-MQRR/3.1.4.8/R11 @MS-MQRR/3.1.4.8/R12 @MS-MQRR/3.1.4.8/R13 @MS-MQRR/3.1.4.8/R15 @MS-MQRR/3.1.4.8/R16 @MS-MQDMPR/3.1.7.1.17/R3 @MS-MQDMPR/3.1.7.1.17/R5
  Scenario: The same dwRequestId waiting on two queues: the cancel through one handle ends that receive only
    Given an empty queue
    And another empty queue
    When the client starts a receive on the queue with ulTimeout 10000 as request 5
    And the client starts a receive on the other queue with ulTimeout 10000 as request 5
    And the client cancels request 5 with the handle of the other queue
    Then the call returns MQ_OK
    And the receive started on the other queue returns MQ_ERROR_OPERATION_CANCELLED
    And the receive started on the queue is still waiting
    When a message "m" arrives in the queue
    Then the receive started on the queue returns the message "m"

  @MS-MQRR/3.1.4.8/R2 @MS-MQRR/3.1.4.8/R11 @MS-MQRR/3.1.4.8/R12 @MS-MQRR/3.1.4.8/R13 @MS-MQDMPR/3.1.7.1.17/R3 @MS-MQDMPR/3.1.7.1.17/R5
  Scenario: A receive waiting through one handle is cancelled through another handle of the queue only as the text reads
    Given an empty queue
    When the client starts a receive on the queue with ulTimeout 10000 as request 5
    And the client cancels request 5 through a second handle on the queue, which has no receive waiting with it
    Then where the cancel failed, the receive started on the queue still waits; where it returned MQ_OK, that receive returns MQ_ERROR_OPERATION_CANCELLED
    When a message "m" arrives in the queue
    Then where it still waited, the receive started on the queue returns the message "m"; else a peek finds it
