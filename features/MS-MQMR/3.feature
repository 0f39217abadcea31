Feature: MS-MQMR 3 Protocol Details
  The client MUST have administrator privileges on the server machine; the server uses the
  caller's identity, which the RPC runtime gives it, for its access checks.

  @MS-MQMR/3/R1
  Scenario: qmmgmt answers an administrator and refuses a caller who is not one
    When "reader" asks R_QMMgmtGetInfo for the machine's active queues
    Then the server refuses it: access denied (MS-MQMR/3/R1)
    When "administrator" asks R_QMMgmtGetInfo for the machine's active queues
    Then the server allows it (MS-MQMR/3/R1)
