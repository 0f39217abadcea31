Feature: MS-MQMR 3 Protocol Details
  The client MUST have administrator privileges on the server machine; the server uses the
  caller's identity, which the RPC runtime gives it, for its access checks.

  @MS-MQMR/3/R1
  Scenario: qmmgmt answers an administrator and refuses a caller who is not one
    When "reader" asks R_QMMgmtGetInfo for the machine's active queues
    Then the server refuses it: access denied (MS-MQMR/3/R1)
    When "administrator" asks R_QMMgmtGetInfo for the machine's active queues
    Then the server allows it (MS-MQMR/3/R1)

  # The rpc_auth_3 that completes an NTLM handshake names the security context of the bind it
  # completes (MS-RPCE 2.2.2.10, 2.2.2.11 auth_context_id); one naming another context
  # completes none, and the caller has not proved who it is: its signed calls are refused, a
  # fault or a closed connection, never served as the administrator's.
  @MS-MQMR/3/R1
  Scenario: A caller whose rpc_auth_3 names another security context than its bind's is not served as the administrator
    When "administrator", whose rpc_auth_3 names another security context than its bind's, asks R_QMMgmtGetInfo for the machine's active queues
    Then the server does not carry it out: it answers with a fault or closes the connection (MS-MQMR/3/R1)
