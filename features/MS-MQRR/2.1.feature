Feature: MS-MQRR 2.1 Transport
  RemoteRead runs over RPC over TCP/IP (ncacn_ip_tcp), and the server listens on it (3.1.3).

  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.3/R1
  Scenario: The server listens for RemoteRead over ncacn_ip_tcp
    When the client binds RemoteRead over ncacn_ip_tcp proposing NDR in separate presentation contexts
    Then the target accepts every presentation context with the transfer syntax proposed in it

  @MS-MQRR/2.1/R1
  Scenario Outline: A request for an operation number RemoteRead does not have is refused by the RPC runtime
    When the client sends a RemoteRead request with opnum <opnum>
    Then the target answers with the fault nca_op_rng_error

    Examples:
      | opnum |
      | 16    |
      | 200   |

  @MS-MQRR/2.1/R1
  Scenario: A request that carries a verification trailer after its stub, as Windows clients send it, is run
    When the client binds RemoteRead and calls R_GetServerPort with a verification trailer after the stub, as Windows clients send it
    Then the target answers with the port it listens on, not a fault

  @MS-MQRR/2.1/R3
  Scenario: The server checks the caller's identity when a queue is opened
    Given a queue that "reader" may only peek and "administrator" may receive from, with messages "guarded"
    When "reader" opens the queue with RECEIVE_ACCESS
    Then the server refuses it: access denied (MS-MQRR/2.1/R3)
    When "reader" opens the queue with PEEK_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "reader" peeks the first message
    Then the server allows it (MS-MQRR/2.1/R3)
    When "administrator" opens the queue with RECEIVE_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)

  # Several calls outstanding on one connection (C706 12.6.3), whose answers (2 MB each, some
  # 500 fragments) are more than the connection's buffers hold while the client does not read,
  # and then reads slowly.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.7/R31
  Scenario: Answers a client reads late come whole and in order
    Given a queue with a message of 2000000 bytes
    When a new connection opens the queue and sends 3 peeks of it before reading any answer
    Then each peek returns the whole message

  # One client's unfinished PDU (C706 12.6.3.1) must not hold up the others.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A client stopped in the middle of a PDU does not keep another from being served
    When a connection sends the first 10 octets of a bind PDU and stops
    And another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  # MS-RPCE 2.2.2.13: only a command marked SEC_VT_MUST_PROCESS_COMMAND that the server does not
  # support makes it reject the request; 2.2.2.13.2: a server MUST ignore bitmask bits it does
  # not understand.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario Outline: A verification trailer with what the server may pass over is run
    When the client binds RemoteRead and calls R_GetServerPort with a verification trailer that carries <command>
    Then the target answers with the port it listens on, not a fault

    Examples:
      | command                                      |
      | a command the server need not process        |
      | a bitmask bit the server does not understand |
