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

  # A queue manager that held many handles at once and then lost most of them keeps serving
  # the rest: each stays valid until it is closed (R11), however its table shrinks.
  @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R15 @MS-MQRR/3.1.4.7/R31
  Scenario: A server that held 1,100 handles at once serves the 100 left after the rest are closed
    Given a queue with messages "one"
    And the client has opened the queue 1100 times with PEEK_ACCESS
    When the client closes all but 100 of those handles
    Then a peek through each handle left finds the message "one"

  @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R12 @MS-MQRR/3.1.4.3/R15
  Scenario: Closing a handle opened with MQ_DENY_SHARE lets others open the queue
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS and MQ_DENY_SHARE
    When the client calls R_CloseQueue
    Then the call returns MQ_OK
    When the client calls R_OpenQueue with RECEIVE_ACCESS and MQ_DENY_NONE
    Then the returned context handle is not NULL

  @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R12 @MS-MQRR/3.1.4.3/R13 @MS-MQRR/3.1.4.3/R14 @MS-MQRR/3.1.4.3/R15 @MS-MQDMPR/3.1.7.1.6/R9 @MS-MQDMPR/3.1.7.1.6/R10 @MS-MQDMPR/3.1.7.1.6/R11 @MS-MQDMPR/3.1.7.1.6/R12 @MS-MQDMPR/3.1.7.1.6/R13
  Scenario: Closing a handle a receive waits on ends the receive, and the close returns MQ_OK
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts a receive on the queue with ulTimeout 3000 as request 5
    And the client closes the queue while a receive waits on it
    Then the call returns MQ_OK
    And the returned context handle is NULL
    And the receive started on the queue returns MQ_ERROR_OPERATION_CANCELLED, or MQ_ERROR_IO_TIMEOUT at its ulTimeout where R_CloseQueue waited for it
    When a message "m" arrives in the queue
    Then peeking the queue returns "m"

  @MS-MQRR/3.1.4.3/R11 @MS-MQRR/3.1.4.3/R13 @MS-MQRR/3.1.4.3/R15 @MS-MQDMPR/3.1.7.1.6/R9 @MS-MQDMPR/3.1.7.1.6/R10 @MS-MQDMPR/3.1.7.1.17/R5
  Scenario: Closing one handle ends only its own waiting receive
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts a receive on the queue with ulTimeout 10000 as request 1
    And the client starts a receive on a second handle on the queue with ulTimeout 3000 as request 2
    And the client closes a second handle on the queue while a receive waits on it
    Then the call returns MQ_OK
    And the receive started on a second handle on the queue returns MQ_ERROR_OPERATION_CANCELLED, or MQ_ERROR_IO_TIMEOUT at its ulTimeout where R_CloseQueue waited for it
    And the receive started on the queue is still waiting
    When a message "m" arrives in the queue
    Then the receive started on the queue returns the message "m"

  @MS-MQRR/3.1.4.3/R13 @MS-MQRR/3.1.4.3/R15 @MS-MQRR/3.1.4.9/R14 @MS-MQRR/3.1.4.9/R19
  Scenario: Closing one handle removes its own pending requests only
    Given a queue holding "a, b, c"
    And the client has received "a" through the queue as request 1
    And the client has received "b" through a second handle on the queue as request 1
    When the client closes a second handle on the queue
    Then the call returns MQ_OK
    When the client ends request 1 with RR_ACK through the handle of the queue
    Then the call returns MQ_OK

  # A queue deleted while a client holds a handle to it (MS-MQDMPR 3.1.7.1.4: the descriptors
  # keep no queue): R_CloseQueue finds no open queue for the handle, an error it returns as a
  # failure HRESULT (MS-MQRR 3.1.4.3 R7, R10).
  @MS-MQRR/3.1.4.3/R7 @MS-MQRR/3.1.4.3/R10
  Scenario: R_CloseQueue on a handle whose queue was deleted gets a returned failure, not an RPC fault
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the queue is deleted through SUT control
    And the client calls R_CloseQueue
    Then the call returns a failure HRESULT

  # R_CloseQueue sets pphContext to NULL only when it returns MQ_OK (R5): after a failed close
  # the handle is still the association's (MS-MQRR 2.2.4.2: strict), and a later call through
  # it reaches the method, which finds no open queue and returns a failure HRESULT.
  @MS-MQRR/3.1.4.3/R5 @MS-MQRR/3.1.4.3/R7 @MS-MQRR/3.1.4.3/R10 @MS-MQRR/3.1.4.4/R7 @MS-MQRR/3.1.4.4/R11 @MS-MQRR/2.2.4.2/R1
  Scenario: A handle R_CloseQueue failed to close still reaches the methods
    Given a queue with messages "a"
    And the client has opened the queue with RECEIVE_ACCESS
    When the queue is deleted through SUT control
    And the client calls R_CloseQueue
    Then the call returns a failure HRESULT
    When the client calls R_CreateCursor
    Then the call returns a failure HRESULT
