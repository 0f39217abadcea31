Feature: MS-MQRR 3.1.4.5 R_CloseCursor (Opnum 5)
  The R_CloseCursor method closes the handle for a previously created cursor.

  @MS-MQRR/3.1.4.5/R8 @MS-MQRR/3.1.4.5/R10 @MS-MQRR/3.1.4.5/R11 @MS-MQRR/3.1.4.5/R12 @MS-MQRR/3.1.4.5/R14 @MS-MQRR/3.1.4.5/R15 @MS-MQRR/3.1.4.5/R16
  Scenario: Closing a cursor returns MQ_OK, and the cursor can no longer be used
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client calls R_CloseCursor
    Then the call returns MQ_OK
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT on the cursor
    Then the call fails
    And a peek finds the message "a"

  @MS-MQRR/3.1.4.5/R7 @MS-MQRR/3.1.4.5/R9 @MS-MQRR/3.1.4.5/R12 @MS-MQRR/3.1.4.5/R13
  Scenario: A cursor closed already is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has closed the cursor
    When the client calls R_CloseCursor
    Then the call fails

  @MS-MQRR/3.1.4.5/R7 @MS-MQRR/3.1.4.5/R9 @MS-MQRR/3.1.4.5/R13
  Scenario: A cursor handle R_CreateCursor never returned is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_CloseCursor with hCursor 0x7777
    Then the call fails

  @MS-MQRR/3.1.4.5/R12 @MS-MQRR/3.1.4.5/R14 @MS-MQRR/3.1.4.5/R16
  Scenario: Closing one cursor leaves the other cursors of the handle
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a second cursor
    And the client has created a cursor
    And the client has peeked "a" on the cursor
    When the client calls R_CloseCursor
    Then the call returns MQ_OK
    And a peek on the second cursor finds the message "a"

  @MS-MQRR/3.1.4.5/R4 @MS-MQRR/3.1.4.5/R9 @MS-MQRR/3.1.4.5/R13
  Scenario: A cursor of a handle closed with R_CloseQueue is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    And the client has closed the queue
    When the client calls R_CloseCursor
    Then the call fails

  @MS-MQRR/3.1.4.5/R5 @MS-MQRR/3.1.4.5/R9 @MS-MQRR/3.1.4.5/R13
  Scenario: A NULL queue handle is refused
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client calls R_CloseCursor with a NULL handle
    Then the call fails
    And a peek on the cursor finds the message "a"
