Feature: MS-MQRR 3.1.6.2 Queue Context Handles Rundown Routine
  When a client goes away, the RPC runtime runs down its queue context handles: the server
  closes the queue and ends every pending receive of the handle with Dequeue Message End
  (iDeleteMessage false), so a message the client received and never acknowledged becomes
  available to other clients.

  @MS-MQRR/3.1.6.2/R1 @MS-MQRR/3.1.6.2/R2 @MS-MQRR/3.1.6.2/R4 @MS-MQRR/3.1.6.2/R5
  @MS-MQRR/3.1.6.2/R6 @MS-MQRR/3.1.6.2/R7 @MS-MQRR/3.1.6.2/R8 @MS-MQRR/3.1.6.2/R9
  @MS-MQRR/3.1.6.2/R10 @MS-MQRR/3.1.6.2/R11 @MS-MQRR/3.1.6.2/R12 @MS-MQRR/3.1.6.2/R13
  @MS-MQRR/3.1.6.2/R14
  Scenario: A message received and not acknowledged goes to another client after a disconnect
    Given a queue holding "one, two"
    And the client holds a receive handle on the queue
    And a second client holds a receive handle on the queue
    And the second client has received "one" without ending the receive
    When the second client's connection fails
    Then peeking the queue returns "one"
    When the client receives from the queue
    Then the message "one" is returned
    When the client ends the receive with RR_ACK
    Then the call returns MQ_OK
    And peeking the queue returns "two"

  @MS-MQRR/3.1.6.2/R6 @MS-MQRR/3.1.6.2/R7 @MS-MQRR/3.1.6.2/R8 @MS-MQRR/3.1.6.2/R11
  @MS-MQRR/3.1.6.2/R12
  Scenario: Every pending receive of the handle is ended
    Given a queue holding "one, two, three"
    And the client holds a receive handle on the queue
    And a second client holds a receive handle on the queue
    And the second client has received "one" without ending the receive
    And the second client has received "two" without ending the receive
    When the second client's connection fails
    Then peeking the queue returns "one"
    When the client receives from the queue
    Then the message "one" is returned
    When the client receives from the queue
    Then the message "two" is returned

  # The rundown closes the queue (Close Queue), which ends the handle's waiting reads (MS-MQDMPR
  # 3.1.7.1.6): a receive that waited when its client went away takes no message that comes
  # after.
  @MS-MQRR/3.1.6.2/R1 @MS-MQRR/3.1.6.2/R2 @MS-MQRR/3.1.6.2/R4
  Scenario: A receive still waiting when its client's connection fails takes no message that arrives later
    Given a queue holding ""
    And the client holds a receive handle on the queue
    And a second client holds a receive handle on the queue
    And the second client has started a receive that waits for a message
    When the second client's connection fails
    And a message "later" arrives in the queue
    Then peeking the queue returns "later"

  # The rundown covers every handle of the client, each with its cursors (the reference runs a
  # rundown down in parts: a handle with more cursors than a part has them closed first).
  @MS-MQRR/3.1.6.2/R1 @MS-MQRR/3.1.6.2/R2 @MS-MQRR/3.1.6.2/R6 @MS-MQRR/3.1.6.2/R11
  Scenario: Every handle of a client that goes away is run down, cursors and all
    Given a queue holding "one, two"
    And another queue holding "x, y"
    And the client holds a receive handle on the queue
    And the client holds a receive handle on the other queue
    And a second client holds a receive handle on the queue
    And the second client has received "one" without ending the receive
    And the second client has made 40 cursors on its handle to the queue
    And the second client holds a receive handle on the other queue with 40 cursors
    And the second client has received "x" from the other queue without ending the receive
    When the second client's connection fails
    Then peeking the queue returns "one"
    And peeking the other queue returns "x" once the server has run the second client down

  # A client that goes away with a message received and not acknowledged and a receive still
  # waiting: the waiting receive ends with the connection, and the rundown still returns the
  # received message to the queue.
  @MS-MQRR/3.1.6.2/R1 @MS-MQRR/3.1.6.2/R4 @MS-MQRR/3.1.6.2/R6 @MS-MQRR/3.1.6.2/R7
  @MS-MQRR/3.1.6.2/R8 @MS-MQRR/3.1.6.2/R11 @MS-MQRR/3.1.6.2/R12
  Scenario: A message received and not acknowledged comes back though a receive of the client was still waiting
    Given a queue holding "one"
    And the client holds a receive handle on the queue
    And a second client holds a receive handle on the queue
    And the second client has received "one" without ending the receive
    And the second client has started a receive that waits for a message
    When the second client's connection fails
    Then peeking the queue returns "one"

  # A receive that found no message leaves a pending request that holds none (R6, R7: no
  # message to end); the pending requests after it are ended all the same.
  @MS-MQRR/3.1.6.2/R6 @MS-MQRR/3.1.6.2/R7 @MS-MQRR/3.1.6.2/R8 @MS-MQRR/3.1.6.2/R11
  @MS-MQRR/3.1.6.2/R12
  Scenario: A message received and not acknowledged comes back though an earlier receive of the client found none
    Given a queue holding ""
    And the client holds a receive handle on the queue
    And a second client holds a receive handle on the queue
    And the second client's receive has found no message within 0 milliseconds
    And a message "one" has arrived in the queue
    And the second client has received "one" without ending the receive
    When the second client's connection fails
    Then peeking the queue returns "one"

  # Each context handle is run down on its own (C706 5.1.6): a handle whose queue was deleted
  # finds no OpenQueueDescriptor (R3) and the client's other handles are run down all the same.
  @MS-MQRR/3.1.6.2/R1 @MS-MQRR/3.1.6.2/R2 @MS-MQRR/3.1.6.2/R3 @MS-MQRR/3.1.6.2/R6
  @MS-MQRR/3.1.6.2/R8 @MS-MQRR/3.1.6.2/R11
  Scenario: A handle whose queue was deleted does not keep the client's other handles from being run down
    Given a queue holding "one"
    And another queue holding "x, y"
    And the client holds a receive handle on the other queue
    And a second client holds a receive handle on the queue
    And the second client holds a receive handle on the other queue with 0 cursors
    And the second client has received "x" from the other queue without ending the receive
    When the queue is deleted through SUT control
    And the second client's connection fails
    Then peeking the other queue returns "x" once the server has run the second client down
