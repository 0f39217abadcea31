Feature: MS-MQRR 3.1.4.4 R_CreateCursor (Opnum 4)
  The R_CreateCursor method creates a cursor and returns a handle to it. The handle can be
  used in subsequent calls to the R_StartReceive (Opnum 7) method or the R_CloseCursor
  (Opnum 5) method.

  @MS-MQRR/3.1.4.4/R5 @MS-MQRR/3.1.4.4/R6 @MS-MQRR/3.1.4.4/R9 @MS-MQRR/3.1.4.4/R10 @MS-MQRR/3.1.4.4/R12 @MS-MQRR/3.1.4.4/R13 @MS-MQRR/3.1.4.4/R14 @MS-MQRR/3.1.4.4/R15
  Scenario: Creating a cursor on an open handle returns MQ_OK and a cursor handle
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_CreateCursor
    Then the call returns MQ_OK
    And the returned cursor handle is nonzero
    And a peek on the cursor finds the message "a"

  @MS-MQRR/3.1.4.4/R5 @MS-MQRR/3.1.4.4/R12 @MS-MQRR/3.1.4.4/R14
  Scenario: Each call creates a cursor of its own
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client calls R_CreateCursor again
    Then the call returns MQ_OK
    And the two cursor handles differ

  @MS-MQRR/3.1.4.4/R12 @MS-MQRR/3.1.4.4/R15
  Scenario: A handle opened with PEEK_ACCESS may have cursors
    Given a queue with messages "a"
    And the client has opened the queue with PEEK_ACCESS
    When the client calls R_CreateCursor
    Then the call returns MQ_OK
    And a peek on the cursor finds the message "a"

  @MS-MQRR/3.1.4.4/R3 @MS-MQRR/3.1.4.4/R7 @MS-MQRR/3.1.4.4/R10 @MS-MQRR/3.1.4.4/R11
  Scenario: A handle closed with R_CloseQueue is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has closed the queue
    When the client calls R_CreateCursor
    Then the call fails

  @MS-MQRR/3.1.4.4/R7 @MS-MQRR/3.1.4.4/R10 @MS-MQRR/3.1.4.4/R11
  Scenario: A handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the queue is deleted through SUT control
    And the client calls R_CreateCursor
    Then the call returns a failure HRESULT

  @MS-MQRR/3.1.4.4/R4 @MS-MQRR/3.1.4.4/R7 @MS-MQRR/3.1.4.4/R11
  Scenario: A NULL handle is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_CreateCursor with a NULL handle
    Then the call fails
