Feature: MS-MQRR 3.1.4.6 R_PurgeQueue (Opnum 6)
  The R_PurgeQueue method removes all messages from the queue.

  @MS-MQRR/3.1.4.6/R10 @MS-MQRR/3.1.4.6/R11 @MS-MQRR/3.1.4.6/R13
  Scenario: A handle opened with receive access purges the queue
    Given a queue with messages "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_PurgeQueue
    Then a peek finds no message

  @MS-MQRR/3.1.4.6/R14
  Scenario: A handle opened with peek access may not purge
    Given a queue with messages "one"
    And the client has opened the queue with PEEK_ACCESS
    When the client calls R_PurgeQueue
    Then a peek finds the message "one"
