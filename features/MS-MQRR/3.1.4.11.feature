Feature: MS-MQRR 3.1.4.11 R_OpenQueueForMove (Opnum 11)
  The R_OpenQueueForMove method opens a queue and returns a QUEUE_CONTEXT_HANDLE_SERIALIZE
  handle and a move context that can be given as the destination (ullContextTo) of a later
  R_MoveMessage. The client sets dwAccess to MQ_MOVE_ACCESS and dwShareMode to MQ_DENY_NONE.
  Failures are thrown as RPC exceptions, and the client treats all of them alike: where the
  section names no status for a refusal, any thrown failure conforms.

  @MS-MQRR/3.1.4.11/R3 @MS-MQRR/3.1.4.11/R5 @MS-MQRR/3.1.4.11/R23 @MS-MQRR/3.1.4.11/R24
  @MS-MQRR/3.1.4.11/R27 @MS-MQRR/3.1.4.11/R29 @MS-MQRR/3.1.4.11/R30 @MS-MQRR/3.1.4.11/R31
  @MS-MQRR/3.1.4.11/R32 @MS-MQRR/3.1.4.11/R33 @MS-MQRR/3.1.4.11/R34 @MS-MQRR/3.1.4.11/R35
  Scenario: A subqueue opens for move and its move context is a move destination
    Given a queue holding "one" with subqueues "retry"
    And the client holds a receive handle on the queue
    When the client opens subqueue "retry" for move with dwAccess MQ_MOVE_ACCESS and dwShareMode MQ_DENY_NONE
    Then the call returned a context handle and a nonzero move context
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_OK
    And peeking subqueue "retry" returns "one"

  @MS-MQRR/3.1.4.11/R3 @MS-MQRR/3.1.4.11/R29 @MS-MQRR/3.1.4.11/R33 @MS-MQRR/3.1.4.11/R34
  Scenario: A subqueue name of the full 32 characters MS-MQMQ 2.1.1 allows opens for move
    Given a queue holding "one" with subqueues "abcdefghijklmnopqrstuvwxyz012345"
    And the client holds a receive handle on the queue
    When the client opens subqueue "abcdefghijklmnopqrstuvwxyz012345" for move with dwAccess MQ_MOVE_ACCESS and dwShareMode MQ_DENY_NONE
    Then the call returned a context handle and a nonzero move context
    When the client moves "one" from the queue to subqueue "abcdefghijklmnopqrstuvwxyz012345"
    Then the call returns MQ_OK
    And peeking subqueue "abcdefghijklmnopqrstuvwxyz012345" returns "one"

  @MS-MQRR/3.1.4.11/R3 @MS-MQRR/3.1.4.11/R5 @MS-MQRR/3.1.4.11/R27 @MS-MQRR/3.1.4.11/R29
  @MS-MQRR/3.1.4.11/R33 @MS-MQRR/3.1.4.11/R34 @MS-MQRR/3.1.4.11/R35
  Scenario: A queue opens for move and takes a message back from its subqueue
    Given a queue holding "one" with subqueues "retry"
    And the client has moved "one" from the queue to subqueue "retry"
    When the client opens the queue for move with dwAccess MQ_MOVE_ACCESS and dwShareMode MQ_DENY_NONE
    Then the call returned a context handle and a nonzero move context
    When the client moves "one" from subqueue "retry" to the queue
    Then the call returns MQ_OK
    And peeking the queue returns "one"

  @MS-MQRR/3.1.4.11/R7 @MS-MQRR/3.1.4.11/R23 @MS-MQRR/3.1.4.11/R32 @MS-MQRR/3.1.4.11/R35
  Scenario: Two handles open for move on one queue each have a move context of their own
    Given a queue holding "one" with subqueues "retry, poison"
    When the client opens subqueue "retry" for move with dwAccess MQ_MOVE_ACCESS and dwShareMode MQ_DENY_NONE
    And the client opens subqueue "poison" for move with dwAccess MQ_MOVE_ACCESS and dwShareMode MQ_DENY_NONE
    Then the two move handles have different move contexts
    When the client moves "one" from the queue to subqueue "retry"
    Then the call returns MQ_OK
    And peeking subqueue "retry" returns "one"
    And peeking subqueue "poison" finds no message

  @MS-MQRR/3.1.4.11/R6
  Scenario Outline: A dwAccess other than MQ_MOVE_ACCESS is refused
    Given a queue holding "one" with subqueues "retry"
    When the client opens subqueue "retry" for move with dwAccess <dwAccess> and dwShareMode MQ_DENY_NONE
    Then the call fails

    Examples:
      | dwAccess       |
      | RECEIVE_ACCESS |
      | PEEK_ACCESS    |
      | 0x00000000     |
      | 0x00000005     |

  @MS-MQRR/3.1.4.11/R7
  Scenario Outline: A dwShareMode other than MQ_DENY_NONE is refused
    Given a queue holding "one" with subqueues "retry"
    When the client opens subqueue "retry" for move with dwAccess MQ_MOVE_ACCESS and dwShareMode <dwShareMode>
    Then the call fails

    Examples:
      | dwShareMode   |
      | MQ_DENY_SHARE |
      | 0x00000002    |

  @MS-MQRR/3.1.4.11/R5
  Scenario Outline: A queue format R_OpenQueueForMove does not take is refused
    Given a queue holding "one" with subqueues "retry"
    When the client opens <format> for move
    Then the call fails

    Examples:
      | format                    |
      | a MULTICAST format name   |
      | a DL format name          |

  @MS-MQRR/3.1.4.11/R4
  Scenario: A NULL queue format is refused
    Given a queue holding "one" with subqueues "retry"
    When the client opens a NULL queue format for move
    Then the call fails

  @MS-MQRR/3.1.4.11/R28
  Scenario: A queue that does not exist is not found
    Given a queue holding "one" with subqueues "retry"
    When the client opens a queue that does not exist for move with dwAccess MQ_MOVE_ACCESS and dwShareMode MQ_DENY_NONE
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

  @MS-MQRR/3.1.4.11/R9 @MS-MQRR/3.1.4.11/R13
  Scenario Outline: The server ignores pClientId
    Given a queue holding "one" with subqueues "retry"
    When the client opens subqueue "retry" for move with pClientId <pClientId> and fNonRoutingServer <fNonRoutingServer>
    Then the call returned a context handle and a nonzero move context

    Examples:
      | pClientId     | fNonRoutingServer |
      | GUID_NULL     | TRUE              |
      | a random GUID | TRUE              |
      | GUID_NULL     | FALSE             |

  @MS-MQRR/3.1.4.11/R10
  Scenario: A NULL pClientId from a client that is not a routing server is refused
    Given a queue holding "one" with subqueues "retry"
    When the client opens subqueue "retry" for move with pClientId NULL and fNonRoutingServer TRUE
    Then the call fails

  @MS-MQRR/3.1.4.11/R13
  Scenario: A routing server's NULL pClientId is ignored
    Given a queue holding "one" with subqueues "retry"
    When the client opens subqueue "retry" for move with pClientId NULL and fNonRoutingServer FALSE
    Then the call returned a context handle and a nonzero move context

  @MS-MQRR/3.1.4.11/R15 @MS-MQRR/3.1.4.11/R17 @MS-MQRR/3.1.4.11/R19 @MS-MQRR/3.1.4.11/R22
  Scenario Outline: The server ignores the client's version numbers
    Given a queue holding "one" with subqueues "retry"
    When the client opens subqueue "retry" for move as version <version> with fWorkgroup <fWorkgroup>
    Then the call returned a context handle and a nonzero move context

    Examples:
      | version       | fWorkgroup |
      | 0.0.0         | FALSE      |
      | 6.1.7601      | TRUE       |
      | 255.255.65535 | TRUE       |
