Feature: MS-MQMR 2.1 Transport
  This protocol uses RPC over TCP with the interface UUID of section 1.9,
  41208ee0-e970-11d1-9b9e-00e02c064c39, version 1.0.

  @MS-MQMR/2.1/R1 @MS-MQMR/3.1.3/R1
  Scenario: The qmmgmt interface answers on the UUID of section 1.9
    Given the client has noted the connection state of the queue manager
    When the client binds the interface 41208ee0-e970-11d1-9b9e-00e02c064c39 version 1.0
    And the client asks the machine for PROPID_MGMT_MSMQ_CONNECTED
    Then R_QMMgmtGetInfo returns MQ_OK with the values the documents give
