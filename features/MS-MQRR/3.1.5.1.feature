Feature: MS-MQRR 3.1.5.1 Pending Request Cleanup Timer Event
  When the Pending Request Cleanup Timer of a pending request expires, the server ends the
  receive with Dequeue Message End (iDeleteMessage false), so the message is available again,
  and removes the PendingRequestEntry. The timer's duration is implementation-dependent
  (3.1.2.2; Windows: 5 minutes): the suite shortens it through SUT control, or waits the
  duration MQCONFORM_CLEANUP_TIMER gives; without either the scenario is inconclusive.

  @MS-MQRR/3.1.5.1/R1 @MS-MQRR/3.1.5.1/R2 @MS-MQRR/3.1.5.1/R3 @MS-MQRR/3.1.5.1/R4
  @MS-MQRR/3.1.5.1/R5 @MS-MQRR/3.1.5.1/R6 @MS-MQRR/3.1.5.1/R7 @MS-MQRR/3.1.5.1/R8 @MS-MQRR/3.1.4.7/R60
  Scenario: A received message that is never acknowledged returns to the queue
    Given a queue holding "one, two"
    And the Pending Request Cleanup Timer of the target is short
    And the client holds a receive handle on the queue
    When the client receives from the queue
    Then the message "one" is returned
    When the Pending Request Cleanup Timer expires
    Then peeking the queue returns "one"
    When the client ends the receive with RR_ACK
    Then the call returns MQ_ERROR_INVALID_HANDLE

  @MS-MQRR/3.1.4.13/R81 @MS-MQRR/3.1.5.1/R1 @MS-MQRR/3.1.5.1/R2
  @MS-MQRR/3.1.5.1/R8
  Scenario: A request of a transactional receive that is never ended times out too
    Given a transactional queue holding "one, two"
    And the Pending Request Cleanup Timer of the target is short
    And the client has enlisted transaction "T1"
    And the client holds a receive handle on the queue
    When the client receives in transaction "T1" from the queue
    Then the message "one" is returned
    When the Pending Request Cleanup Timer expires
    And the client ends the transactional receive with RR_ACK
    Then the call returns MQ_ERROR_INVALID_HANDLE

  # The timer's event removes the request's PendingRequestEntry (R8) and nothing else: another
  # handle's request on the queue stays, and the handle whose only request it was has none left,
  # so R_EndReceive through it finds no entry for the handle (3.1.4.9 R13).
  @MS-MQRR/3.1.5.1/R8 @MS-MQRR/3.1.4.9/R13
  Scenario: The request the timer ended is gone while another handle's request stays
    Given a queue holding "a, b"
    And the client has received "a" through a second handle on the queue as request 1
    And the Pending Request Cleanup Timer of the target is short
    And the client holds a receive handle on the queue
    When the client receives from the queue
    Then the message "b" is returned
    When the Pending Request Cleanup Timer expires
    And the client ends the receive with RR_ACK
    Then the call returns MQ_ERROR_INVALID_HANDLE
    When the client ends request 1 with RR_ACK through the handle of a second handle on the queue
    Then the call returns MQ_OK

  # R8 removes the entry the timer ended from the PendingRequestTable itself, not only from what
  # the handle lists: the handle still has request 1, so R_EndReceive passes the check for any
  # entry (3.1.4.9 R13) and looks request 2 up (R14), which must find nothing; the message it
  # named is Available again and stays.
  @MS-MQRR/3.1.5.1/R8 @MS-MQRR/3.1.4.9/R14
  Scenario: A request the timer ended is not found through a handle that has another request
    Given a queue with messages "a, b"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "a" as request 1
    And the Pending Request Cleanup Timer of the target is short
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE as request 2
    Then the message "b" is returned
    When the Pending Request Cleanup Timer expires
    And the client calls R_EndReceive with RR_ACK for request 2
    Then the call returns MQ_ERROR_INVALID_PARAMETER
    And a peek finds the message "b"
    When the client calls R_EndReceive with RR_ACK for request 1
    Then the call returns MQ_OK
    And a peek finds the message "b"

  # A request whose receive found no message holds none (3.1.4.7 adds its entry before it
  # reads): when its timer expires there is no message to end (R3-R7 find none), the entry is
  # removed (R8), and the queue serves the next receive as before.
  @MS-MQRR/3.1.5.1/R2 @MS-MQRR/3.1.5.1/R3 @MS-MQRR/3.1.5.1/R8 @MS-MQRR/3.1.4.9/R13
  Scenario: The timer of a request whose receive found no message ends no message and removes the request
    Given a queue holding ""
    And the Pending Request Cleanup Timer of the target is short
    And the client holds a receive handle on the queue
    When the client's receive from the queue finds no message within 0 milliseconds
    And the Pending Request Cleanup Timer expires
    And the client ends the receive with RR_ACK
    Then the call returns MQ_ERROR_INVALID_HANDLE
    When a message "one" arrives in the queue
    And the client receives "one" from the queue and acknowledges it
    Then peeking the queue finds no message

  # Choice 5 (errata cleanup-timer-vs-waiting-receive): a receive that waits longer than the
  # timer has its entry removed (R8) before any message comes; when one comes, the receive
  # locks it and its entry is added again, so the timer still returns the message to the queue
  # (a server whose timer starts only when the message is received does the same).
  @MS-MQRR/3.1.5.1/R1 @MS-MQRR/3.1.5.1/R2 @MS-MQRR/3.1.4.7/R60 @MS-MQRR/3.1.4.7/R67
  Scenario: A receive that waited past the cleanup timer gets its message, and the timer still returns it to the queue
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    And the Pending Request Cleanup Timer of the target is short
    When the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 60000 as request 5
    And the Pending Request Cleanup Timer expires
    And a message "one" arrives in the queue
    Then the started request 5 returns the message "one"
    When the Pending Request Cleanup Timer expires
    Then a peek finds the message "one"
