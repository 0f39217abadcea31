Feature: MS-MQRR 2.2.7 SectionType
  The SectionType enumeration defines the available SectionBuffer types: stFullPacket (0),
  stBinaryFirstSection (1), stBinarySecondSection (2), stSrmpFirstSection (3) and
  stSrmpSecondSection (4). A binary message comes back as stFullPacket, or as
  stBinaryFirstSection followed by stBinarySecondSection.

  @MS-MQRR/2.2.6/R1 @MS-MQRR/3.1.4.7/R29
  Scenario: A binary message returned whole is stFullPacket
    Given a queue with a message of 16 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT and dwMaxBodySize 16
    Then the packet comes back whole in one stFullPacket section

  @MS-MQRR/2.2.6/R1 @MS-MQRR/3.1.4.7/R34 @MS-MQRR/3.1.4.7/R41
  Scenario: A binary message returned cut is stBinaryFirstSection then stBinarySecondSection
    Given a queue with a message of 16 bytes
    And the client has opened the queue with RECEIVE_ACCESS
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT and dwMaxBodySize 8
    Then the packet comes back in a first section with 8 body bytes and a second section with the trailers
