Feature: MS-MQRR 2.2.4 Queue Context Handles
  A queue context handle is an RPC context handle corresponding to an open queue. Both
  QUEUE_CONTEXT_HANDLE_NOSERIALIZE (2.2.4.1) and QUEUE_CONTEXT_HANDLE_SERIALIZE (2.2.4.2)
  MUST NOT be type_strict but MUST be strict: a handle is valid only in the association (the
  connections of one association group) it was created in, and a SERIALIZE handle from
  R_OpenQueue may be passed where a NOSERIALIZE handle is expected.

  @MS-MQRR/2.2.4.1/R1 @MS-MQRR/2.2.4.2/R1
  Scenario: The handle R_OpenQueue returns serves every method, on every connection of its association group
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has a second connection in the same association group
    When the client calls R_CreateCursor from the second connection
    Then the call returns MQ_OK
    When the client calls R_StartReceive with MQ_ACTION_PEEK_CURRENT from the second connection
    Then the message "one" is returned
    When the client calls R_CloseQueue from the second connection
    Then the call returns MQ_OK

  @MS-MQRR/2.2.4.1/R1
  Scenario: A QUEUE_CONTEXT_HANDLE_NOSERIALIZE handle is refused in another association
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has a connection in another association group
    When the client calls R_StartReceive with MQ_ACTION_RECEIVE from the connection in another association group
    Then the call fails
    When the client calls R_CreateCursor from the connection in another association group
    Then the call fails
    When the client calls R_PurgeQueue from the connection in another association group
    Then the call fails
    And a peek finds the message "one"

  @MS-MQRR/2.2.4.2/R1
  Scenario: A QUEUE_CONTEXT_HANDLE_SERIALIZE handle is refused in another association
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has a connection in another association group
    When the client calls R_CloseQueue from the connection in another association group
    Then the call fails
    And a peek finds the message "one"
    When the client calls R_CloseQueue
    Then the call returns MQ_OK

  @MS-MQRR/2.2.4.1/R1
  Scenario: Several calls may be pending on one QUEUE_CONTEXT_HANDLE_NOSERIALIZE handle
    Given an empty queue
    And the client has opened the queue with RECEIVE_ACCESS
    When the client starts R_StartReceive with MQ_ACTION_PEEK_CURRENT and ulTimeout 10000 as request 1
    And the client starts R_StartReceive with MQ_ACTION_RECEIVE and ulTimeout 10000 as request 2
    And the client calls R_CreateCursor
    Then the call returns MQ_OK
    When a message "m" arrives in the queue
    Then the started request 1 returns the message "m"
    And the started request 2 returns the message "m"

  @MS-MQRR/2.2.4.1/R1
  Scenario: A bind that names an association group the target never issued cannot use the group's handles
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    When a new connection binds naming an association group the target never issued and calls R_StartReceive with MQ_ACTION_RECEIVE and the client's handle
    Then the target puts that connection in another association group than the one named
    And that call is refused with a fault
    And a peek finds the message "one"

  @MS-MQRR/2.2.4.1/R1
  Scenario: A connection from the same machine that names the client's association group joins it
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    When a new connection binds naming the client's association group and calls R_StartReceive with MQ_ACTION_PEEK_CURRENT and the client's handle
    Then the target puts that connection in the client's association group
    And that call returns the message "one"

  # MS-RPCE 3.3.1.5.7: a server ties a join to its client; NTLM names the caller only after the
  # bind (rpc_auth_3), so a server may refuse such a join at the bind or at every call.
  @MS-MQRR/2.2.4.1/R1
  Scenario: A connection that names the client's association group but authenticates as someone else cannot use the group's handles
    Given a queue with messages "one"
    And the client has opened the queue with RECEIVE_ACCESS
    When "reader" binds naming the client's association group and calls R_StartReceive with MQ_ACTION_RECEIVE and the client's handle
    Then the server refuses it: the group's handles are not that caller's (MS-MQRR/2.2.4.1/R1)
    And a peek finds the message "one"
