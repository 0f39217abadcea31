Feature: MS-MQRR 3.1.6.1 RPC Failure Event
  When RPC detects a connection failure with a client that holds a
  QUEUE_CONTEXT_HANDLE_SERIALIZE handle, the server closes the handle's cursors and closes the
  queue (Close Queue), so the handle no longer holds the queue: its share mode stops denying
  other clients.

  @MS-MQRR/3.1.6.1/R1 @MS-MQRR/3.1.6.1/R2 @MS-MQRR/3.1.6.1/R3 @MS-MQRR/3.1.6.1/R4
  @MS-MQRR/3.1.6.1/R5 @MS-MQRR/3.1.6.1/R6 @MS-MQRR/3.1.6.1/R7 @MS-MQRR/3.1.6.1/R8
  @MS-MQRR/3.1.6.1/R9
  Scenario: A client whose connection fails no longer holds the queue it opened
    Given a queue with messages "one"
    And a second client holds a receive handle on the queue with MQ_DENY_SHARE and a cursor
    When the client opens the queue for receive
    Then the call throws MQ_ERROR_SHARING_VIOLATION
    When the second client's connection fails
    And the client opens the queue for receive
    Then the call succeeds
    And peeking the queue returns "one"
