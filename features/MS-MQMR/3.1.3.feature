Feature: MS-MQMR 3.1.3 Initialization
  Software that utilizes qmmgmt establishes an RPC connection before it uses this protocol.

  @MS-MQMR/3.1.3/R1 @MS-MQMR/3.1.4.1/R9
  Scenario: A client that has established an RPC connection can use the protocol at once
    Given the client has noted the connection state of the queue manager
    When the client establishes a new RPC connection to the qmmgmt interface
    And the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
