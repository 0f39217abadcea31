Feature: MS-MQRR 2.2.3 QUEUE_FORMAT
  Only a subset of the QUEUE_FORMAT_TYPE enumeration is supported by this protocol: UNKNOWN,
  PUBLIC, PRIVATE, DIRECT, MACHINE and SUBQUEUE; with DIRECT, only the TCP and OS protocol
  address specifications. R_OpenQueue accepts PUBLIC, PRIVATE, DIRECT, MACHINE and SUBQUEUE
  (MS-MQRR 3.1.4.2, pQueueFormat): a format of another type is an invalid parameter, one of
  these types that names no queue of the server is not found.

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A queue format of a type R_OpenQueue does not accept is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with a queue format of type <type>
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | type      |
      | UNKNOWN   |
      | CONNECTOR |
      | DL        |
      | MULTICAST |

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24
  Scenario Outline: A queue format of an accepted type is looked up, and one that names no queue is not found
    Given a queue with messages "one"
    When the client calls R_OpenQueue with a <type> queue format that names no queue
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

    Examples:
      | type     |
      | PUBLIC   |
      | PRIVATE  |
      | DIRECT   |
      | MACHINE  |
      | SUBQUEUE |

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R26 @MS-MQRR/3.1.4.2/R30
  Scenario: A DIRECT format name with the OS protocol opens the queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=OS format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R26 @MS-MQRR/3.1.4.2/R30
  Scenario: A DIRECT format name with the TCP protocol and the server's address opens the queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=TCP format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R26 @MS-MQDMPR/3.1.7.1.5/R48
  Scenario: A DIRECT format name that spells the computer and queue names in another case opens that queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=OS format name in another case
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A DIRECT queue format whose string breaks the direct format name grammar is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the DIRECT string "<direct>"
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | direct                             |
      | OS:<computer>\private$\two words   |
      | TCP:300.1.2.3\<queue>              |

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R25 @MS-MQDMPR/3.1.7.1.5/R36 @MS-MQDMPR/3.1.7.1.5/R38
  Scenario: The DIRECT=HTTP format name of a local queue is not opened for receive
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=HTTP format name
    Then the call fails

  # The queue journal holds a copy of each message received from a journaled queue
  # (spec/errata.yaml queue-journal: the reading the suite holds to).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.3/R8
  @MS-MQDMPR/3.1.7.2.1/R5
  Scenario: The queue journal of a journaled queue opens for peek and holds the message received
    Given a journaled queue with messages "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "one" as request 1
    And the client has called R_EndReceive with RR_ACK for request 1
    When the client calls R_OpenQueue on the queue's journal with PEEK_ACCESS
    Then the returned context handle is not NULL
    And a peek finds the message "one"
