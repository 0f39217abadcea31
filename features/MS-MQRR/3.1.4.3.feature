Feature: MS-MQRR 3.1.4.3 R_CloseQueue (Opnum 3)
  The R_CloseQueue method closes a QUEUE_CONTEXT_HANDLE_SERIALIZE handle that was previously
  opened by using a call to the R_OpenQueue (Opnum 2) method or the R_OpenQueueForMove
  (Opnum 11) method.

  @MS-MQRR/3.1.4.3/R5 @MS-MQRR/3.1.4.3/R6 @MS-MQRR/3.1.4.3/R8 @MS-MQRR/3.1.4.3/R9 @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R12 @MS-MQRR/3.1.4.3/R14 @MS-MQRR/3.1.4.3/R15
  Scenario: Closing an open handle returns MQ_OK and sets the handle to NULL
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_CloseQueue
    Then the call returns MQ_OK
    And the returned context handle is NULL

  @MS-MQRR/3.1.4.3/R3 @MS-MQRR/3.1.4.3/R7 @MS-MQRR/3.1.4.3/R9 @MS-MQRR/3.1.4.3/R10
  Scenario: A handle closed already is refused
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has closed the queue
    When the client calls R_CloseQueue
    Then the call fails

  @MS-MQRR/3.1.4.3/R4 @MS-MQRR/3.1.4.3/R7 @MS-MQRR/3.1.4.3/R10
  Scenario: A NULL handle is refused
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_CloseQueue with a NULL handle
    Then the call fails
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R15
  Scenario: A closed handle can no longer be used, and the queue opens again
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has closed the queue
    When the client calls R_CreateCursor
    Then the call fails
    When the client calls R_OpenQueue with RECEIVE_ACCESS
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R12 @MS-MQRR/3.1.4.3/R15
  Scenario: Closing a handle opened with MQ_DENY_SHARE lets others open the queue
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS and MQ_DENY_SHARE
    When the client calls R_CloseQueue
    Then the call returns MQ_OK
    When the client calls R_OpenQueue with RECEIVE_ACCESS and MQ_DENY_NONE
    Then the returned context handle is not NULL
