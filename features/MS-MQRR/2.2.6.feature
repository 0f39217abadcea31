Feature: MS-MQRR 2.2.6 SectionBuffer
  A SectionBuffer represents a fragment or section of a Message Packet. R_StartReceive and
  R_StartTransactionalReceive fragment a Message Packet into an array of one or more
  SectionBuffer structures; a packet is split in two only when a subset of the message body
  is returned, and the first section always holds the body up to the size requested.

  @MS-MQRR/2.2.6/R1 @MS-MQRR/2.2.6/R2 @MS-MQRR/2.2.6/R3 @MS-MQRR/2.2.6/R5 @MS-MQRR/2.2.6/R6
  Scenario: A whole packet is one stFullPacket section whose SectionSizeAlloc equals its SectionSize
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT
    Then the packet comes back whole in one stFullPacket section

  @MS-MQRR/2.2.6/R1 @MS-MQRR/2.2.6/R2 @MS-MQRR/2.2.6/R3 @MS-MQRR/2.2.6/R4 @MS-MQRR/2.2.6/R5 @MS-MQRR/2.2.6/R6
  Scenario Outline: In a cut packet, SectionSizeAlloc - SectionSize of the first section is the body not transferred
    Given a queue with a message of <size> bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT and dwMaxBodySize <max>
    Then the packet comes back in a first section with <max> body bytes and a second section with the trailers

    Examples:
      | size | max  |
      | 32   | 31   |
      | 32   | 4    |
      | 4096 | 1000 |
      | 4096 | 0    |

  @MS-MQRR/2.2.6/R2 @MS-MQRR/2.2.6/R3
  Scenario: A body that exactly fills dwMaxBodySize is not cut
    Given a queue with a message of 32 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE and dwMaxBodySize 32
    Then the packet comes back whole in one stFullPacket section
