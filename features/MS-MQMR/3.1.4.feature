Feature: MS-MQMR 3.1.4 Message Processing Events and Sequencing Rules
  The server asks the RPC runtime for a strict NDR data consistency check at target level 6.0
  and to reject a NULL unique or full pointer with a nonzero conformant value. Its methods do
  not throw exceptions: a request the method refuses is answered with a failure HRESULT.

  @MS-MQMR/3.1.4/R1
  Scenario Outline: A stub whose array conformance disagrees with cp is rejected by the RPC runtime
    When the client sends R_QMMgmtGetInfo with cp <cp> and array conformances <props> and <vars>
    Then the RPC runtime rejects the qmmgmt call

    Examples:
      | cp | props | vars |
      | 2  | 1     | 1    |
      | 1  | 2     | 1    |
      | 1  | 1     | 2    |

  @MS-MQMR/3.1.4/R2
  Scenario: A NULL blob pointer with a nonzero size is rejected by the RPC runtime
    When the client sends R_QMMgmtGetInfo whose apVar[0] is a VT_BLOB of 4 octets with a NULL pointer
    Then the RPC runtime rejects the qmmgmt call

  @MS-MQMR/3.1.4/R4 @MS-MQMR/3.1.4.1/R14 @MS-MQMR/3.1.4.2/R3
  Scenario: Refused requests are answered with a failure HRESULT, not an exception
    Given the client has noted the connection state of the queue manager
    And a private queue "A" with messages "one"
    And a queue "X" that does not exist
    When the client asks a MGMT_SESSION object for PROPID_MGMT_MSMQ_CONNECTED
    Then the qmmgmt method returns a failure HRESULT without an exception
    When the client asks the machine for property identifier 99
    Then the qmmgmt method returns a failure HRESULT without an exception
    When the client asks queue "X" for PROPID_MGMT_QUEUE_PATHNAME
    Then the qmmgmt method returns a failure HRESULT without an exception
    When the client calls R_QMMgmtAction "FOO" on the machine
    Then the qmmgmt method returns a failure HRESULT without an exception
    When the client calls R_QMMgmtAction "PAUSE" on queue "A"
    Then the qmmgmt method returns a failure HRESULT without an exception
    When the client calls R_QMMgmtAction "CONNECT" on a MGMT_SESSION object
    Then the qmmgmt method returns a failure HRESULT without an exception
