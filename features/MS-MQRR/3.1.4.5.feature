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

  @MS-MQRR/3.1.4.5/R3 @MS-MQRR/3.1.4.5/R9 @MS-MQRR/3.1.4.5/R11 @MS-MQRR/3.1.4.5/R12 @MS-MQRR/3.1.4.5/R13
  Scenario Outline: A cursor is closed only through the handle it was created on
    Given a queue holding "a"
    And another queue holding "x"
    And the client holds a cursor on <owner>
    And the client holds a cursor on <other>
    When the client closes the cursor of <owner> with the handle of <other>
    Then the call fails
    And peeking through the cursor of <owner> returns "<first>"

    Examples:
      | owner                        | other           | first |
      | the other queue              | the queue       | x     |
      | the queue                    | the other queue | a     |
      | a second handle on the queue | the queue       | a     |

  @MS-MQRR/3.1.4.5/R12 @MS-MQRR/3.1.4.5/R14 @MS-MQRR/3.1.4.5/R16 @MS-MQDMPR/3.1.7.1.2/R3 @MS-MQDMPR/3.1.7.1.2/R4 @MS-MQDMPR/3.1.7.1.2/R5 @MS-MQDMPR/3.1.6.3/R3 @MS-MQDMPR/3.1.6.3/R5
  Scenario: Closing the cursor a receive waits on: the close returns MQ_OK, the receive waits out its ulTimeout
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has created a cursor
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE on the cursor and ulTimeout 1500 as request 1
    And the client calls R_CloseCursor
    Then the call returns MQ_OK
    And the started request 1 is still waiting
    When a message "m" arrives in the queue
    Then the started request 1 returns MQ_ERROR_IO_TIMEOUT
    And it answered no sooner than 1500 ms after it started
    And a peek finds the message "m"
