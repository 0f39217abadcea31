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

  # A caller who does not authenticate has an identity too, the anonymous one: a target that
  # lets such callers in checks them against a queue's access list as it checks anyone else.
  # Not applicable where the target requires authentication (anonymous callers cannot bind).
  @MS-MQRR/2.1/R3
  Scenario: An anonymous caller the queue's access list lets only peek cannot open it to receive
    Given a queue that "anonymous" may peek and nothing more, with messages "guarded"
    When "anonymous" opens the queue with RECEIVE_ACCESS
    Then the server refuses it: access denied (MS-MQRR/2.1/R3)
    When "anonymous" opens the queue with PEEK_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "anonymous" peeks the first message
    Then the peek returns the message "guarded" (MS-MQRR/2.1/R3)

  # MS-MQMQ 2.2.24: MQSEC_RECEIVE_MESSAGE is MQSEC_DELETE_MESSAGE | MQSEC_PEEK_MESSAGE, so the
  # right to receive includes the right to peek. (The anonymous example is not applicable where
  # the target requires authentication, the reader's where the target file names no identities.)
  @MS-MQRR/2.1/R3
  Scenario Outline: A caller the queue's access list lets receive may open it to peek
    Given a queue that "<caller>" may receive from and nothing more, with messages "received"
    When "<caller>" opens the queue with PEEK_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "<caller>" peeks the first message
    Then the peek returns the message "received" (MS-MQRR/2.1/R3)

    Examples:
      | caller    |
      | anonymous |
      | reader    |

  @MS-MQRR/2.1/R3
  Scenario: An anonymous caller the queue's access list does not let purge leaves every message
    Given a queue that "anonymous" may peek and receive from and nothing more, with messages "kept"
    When "anonymous" opens the queue with RECEIVE_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "anonymous" purges the queue
    Then the server refuses it: access denied (MS-MQRR/2.1/R3)
    When "anonymous" peeks the first message
    Then the peek returns the message "kept" (MS-MQRR/2.1/R3)

  # MS-RPCE 2.2.2.13: Windows clients put a verification trailer after the stub of their first
  # request, inside what the security provider signs or seals.
  @MS-MQRR/2.1/R1 @MS-MQRR/2.1/R3
  Scenario: An authenticated client whose first request carries a verification trailer is served
    Given a queue that "reader" may only peek and "administrator" may receive from, with messages "guarded"
    When "administrator", whose first request carries a verification trailer as Windows clients send it, opens the queue with RECEIVE_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "administrator" peeks the first message
    Then the server allows it (MS-MQRR/2.1/R3)

  # The identity a server uses is the one the RPC runtime proved (MS-RPCE 3.3.3.4.3): at packet
  # integrity and privacy every request carries the caller's signature (MS-NLMP 3.4.4), and a
  # request whose signature does not verify is not the caller's. Any refusal will do, a fault
  # or a closed connection; what may not happen is the purge. The runtime's checks are MS-RPCE's,
  # which 2.1/R1 makes this protocol's; the access check itself is 2.1/R3's SHOULD.
  @MS-MQRR/2.1/R1 @MS-MQRR/2.1/R3
  Scenario: A request whose signature was altered on its way is not carried out
    Given a queue that "administrator" may peek, receive from and purge and nothing more, with messages "kept"
    When "administrator" opens the queue with RECEIVE_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "administrator" purges the queue, the request's signature altered on its way
    Then the server does not carry it out: it answers with a fault or closes the connection (MS-MQRR/2.1/R1)
    When "administrator" opens the queue with PEEK_ACCESS
    And "administrator" peeks the first message
    Then the peek returns the message "kept" (MS-MQRR/2.1/R1)

  # A request's verifier names the security context it was signed in (MS-RPCE 2.2.2.11
  # auth_context_id); one naming another context than the one its bind set up is not the
  # caller's, even signed as sent. Any refusal will do, as above.
  @MS-MQRR/2.1/R1 @MS-MQRR/2.1/R3
  Scenario: A request whose verifier names another security context than its bind's is not carried out
    Given a queue that "administrator" may peek, receive from and purge and nothing more, with messages "kept"
    When "administrator" opens the queue with RECEIVE_ACCESS
    Then the server allows it (MS-MQRR/2.1/R3)
    When "administrator" purges the queue, the request's verifier naming another security context than its bind's
    Then the server does not carry it out: it answers with a fault or closes the connection (MS-MQRR/2.1/R1)
    When "administrator" opens the queue with PEEK_ACCESS
    And "administrator" peeks the first message
    Then the peek returns the message "kept" (MS-MQRR/2.1/R1)

  # Packet privacy (MS-RPCE 2.2.1.1.8) is above any minimum level a server sets (MS-MQRR
  # 3.1.4.2 <19>): requests and answers sealed, and the same access checks.
  @MS-MQRR/2.1/R1 @MS-MQRR/2.1/R3
  Scenario: A client that seals its calls is served, and its sealed request altered on its way is not carried out
    Given a queue that "administrator" may peek, receive from and purge and nothing more, with messages "sealed"
    When "administrator", sealing its calls (packet privacy), opens the queue with RECEIVE_ACCESS
    Then the server allows it (MS-MQRR/2.1/R1, MS-MQRR/2.1/R3)
    When "administrator" peeks the first message
    Then the peek returns the message "sealed" (MS-MQRR/2.1/R1)
    When "administrator" purges the queue, the request's signature altered on its way
    Then the server does not carry it out: it answers with a fault or closes the connection (MS-MQRR/2.1/R1)
    When "administrator", sealing its calls (packet privacy), opens the queue with PEEK_ACCESS
    And "administrator" peeks the first message
    Then the peek returns the message "sealed" (MS-MQRR/2.1/R1)

  # C706 12.6.4.9: a request may name an object (PFC_OBJECT_UUID, the object field after the
  # opnum). RemoteRead defines none, and a server dispatches such a request as any other; at
  # packet privacy the object stays outside what is sealed (MS-RPCE 2.2.2.11).
  @MS-MQRR/2.1/R1
  Scenario: A sealed request that names an object is served
    When "administrator", sealing its calls (packet privacy), calls R_GetServerPort naming an object
    Then R_GetServerPort returns the port the target listens on (MS-MQRR/2.1/R1)

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

  # MS-RPCE 2.2.2.13: a command marked SEC_VT_MUST_PROCESS_COMMAND that the server does not
  # support, or an rpc_sec_vt_header2 that does not match the request (2.2.2.13.3), makes the
  # server reject the request: with a fault whose status is never 0 (3.3.3.5.1), or by
  # closing the connection.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario Outline: A verification trailer the server must refuse is not run
    When the client binds RemoteRead and calls R_GetServerPort with a verification trailer the server must refuse: <trailer>
    Then the target refuses the call with a fault whose status is not 0, or closes the connection

    Examples:
      | trailer                                             |
      | a command the server must process and does not know |
      | a header naming another opnum than the request's    |

  # A call refused for its trailer is over (C706 12.6.4.7: the fault ends it) and holds
  # nothing: however many were refused, the connection serves the next call.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R6
  Scenario: A connection whose calls were refused for their verification trailers goes on serving
    When the client binds RemoteRead and calls R_GetServerPort 70 times with a verification trailer the server must refuse, then once without one
    Then each of them is refused with a fault whose status is not 0 and the last call returns the port, or the connection closes

  # A call the server will not run while others wait (a limit of its own on the calls in
  # flight) is refused with a fault; one it runs is answered: either way it is answered.
  @MS-MQRR/2.1/R1
  Scenario: A call made while 64 receives of its connection wait is answered
    Given a queue holding ""
    When a new connection opens the queue, starts 64 receives that wait, and calls R_GetServerPort
    Then R_GetServerPort is answered, with the port or a fault whose status is not 0, or the connection closes

  # C706 12.6.4.1, 12.6.4.2: a client adds presentation contexts to its association with
  # alter_context; the server answers with an alter_context_resp, a result for each context.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A presentation context added with alter_context is accepted and carries calls
    When the client binds RemoteRead, adds a second presentation context with alter_context and calls R_GetServerPort on it
    Then the target accepts the added context in an alter_context_resp
    And the target answers with the port it listens on, not a fault

  # C706 12.6.4.3, 12.6.4.4: a bind_ack carries one result per presentation context proposed, in
  # order; one whose abstract syntax (interface and version) the server does not offer is a
  # provider_rejection with reason abstract_syntax_not_supported (12.6.3.1), and the association
  # goes on with the contexts accepted.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A presentation context for an interface the server does not offer is rejected beside RemoteRead's
    When the client binds proposing RemoteRead and an interface the server does not offer, each in a presentation context of its own
    Then the target accepts RemoteRead's presentation context and rejects the other's abstract syntax
    And the target answers with the port it listens on, not a fault

  # A PDU whose header frames it (C706 12.6.3.1) but whose body stops short of the fixed fields
  # of its type is malformed: the server sends a fault, or closes the connection when it cannot
  # (MS-RPCE 3.3.3.5.1), and a bind it cannot read gets a bind_nak (C706 12.6.4.4) or the same
  # close; it never answers as if the PDU were whole, and other connections go on being served.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario Outline: A PDU whose body stops short of its fixed fields is refused, and the server goes on serving
    When a new connection <how> whose body stops short of its fixed fields
    Then the target refuses it with a fault or a bind_nak, or closes the connection
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

    Examples:
      | pdu     | how                                          |
      | request | binds RemoteRead and sends a request PDU     |
      | bind    | sends a bind PDU                             |

  # A request in an RPC version the server does not speak is malformed: a fault, or the
  # connection closed (MS-RPCE 3.3.3.5.1); a bind_nak answers binds only (C706 12.6.4.5).
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A request in RPC version 4.0 is refused with a fault or a closed connection, and the server goes on serving
    When a new connection binds RemoteRead and sends a request PDU in RPC version 4.0
    Then the target refuses it with a fault or a bind_nak, or closes the connection
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  # C706 12.6.4.5: a bind in an RPC protocol version the server does not speak is rejected with
  # a bind_nak whose reason is protocol_version_not_supported and which lists the versions it
  # does (5.0, the connection-oriented protocol of C706 12).
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A bind in RPC version 4.0 is rejected with a bind_nak that names 5.0, and the server goes on serving
    When a new connection sends a bind PDU in RPC version 4.0
    Then the target answers with a bind_nak for protocol_version_not_supported that names version 5.0
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  # MS-RPCE 3.3.3.5.3: a bind or alter_context whose auth_type names a security provider the
  # server does not have MUST get authentication_type_not_recognized, in the bind_nak of a bind
  # (reason 8, 2.2.2.5) or a fault for an alter_context (a bind_nak answers binds only, C706
  # 12.6.4.5). No server has the auth_type these send (none of 2.2.1.1.7's).
  # C706 12.6.3.1: a bind_ack or alter_context_resp answers each presentation context proposed,
  # in order, accepting or rejecting it; of two proposing RemoteRead in two transfer syntaxes a
  # server accepts one (MS-RPCE 3.3.1.5.6), one p_cont_id proposed twice is accepted once at
  # most, and a live context is not changed by an alter_context.
  @MS-MQRR/2.1/R1 @MS-MQRR/2.2/R1
  Scenario Outline: Every presentation context proposed gets its result
    When a new connection sends <what>
    Then the target answers with one result for each presentation context proposed<accepting>

    Examples:
      | what                                                                                       | accepting                             |
      | a bind proposing RemoteRead in NDR and in NDR64, each in a presentation context of its own | , accepting RemoteRead in one of them |
      | a bind proposing RemoteRead twice under one p_cont_id                                      | , accepting RemoteRead in one of them |
      | an alter_context that proposes its bound p_cont_id again for qmmgmt                        |                                       |

  # C706 12.6.4.9: a call's fragments begin with the one that has PFC_FIRST_FRAG; a last
  # fragment for a call no first fragment began is malformed (MS-RPCE 3.3.3.5.1: a fault, or
  # the connection closed), never left unanswered.
  @MS-MQRR/2.1/R1
  Scenario: A last request fragment without its first is refused, and the server goes on serving
    When a new connection binds RemoteRead and sends the last fragment of a request whose first fragment it never sent
    Then the target refuses it with a fault or a bind_nak, or closes the connection
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  # MS-RPCE 3.3.1.5.2.1: a client that has sent its bind on a connection begins a security
  # context on it with an alter_context, and the server MUST answer with an alter_context_resp
  # (a fault only in error): here an NTLM NEGOTIATE after a bind without authentication, whose
  # answer carries NTLM's CHALLENGE. Inconclusive where the target file names no identities.
  @MS-MQRR/2.1/R1 @MS-MQRR/2.1/R3
  Scenario: A security context begun with an alter_context after a bind without one is answered with the challenge
    When a new connection binds RemoteRead without authentication and sends an alter_context carrying an NTLM NEGOTIATE
    Then the target answers with an alter_context_resp whose verifier carries an NTLM CHALLENGE for that security context

  @MS-MQRR/2.1/R1
  Scenario: A bind naming an unknown security provider is rejected with a bind_nak, and the server goes on serving
    When a new connection sends a bind whose verifier names an authentication type no security provider has
    Then the target answers with a bind_nak for authentication_type_not_recognized
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  @MS-MQRR/2.1/R1
  Scenario: An alter_context naming an unknown security provider is refused with a fault
    When a new connection sends an alter_context after its bind whose verifier names an authentication type no security provider has
    Then the target refuses it with a fault or a bind_nak, or closes the connection

  # MS-RPCE 3.3.1.5.3: a presentation context whose transfer syntax is 6CB71C2C-9812-4540-...
  # offers bind time features (2.2.2.14), as Windows clients bind; a server answers it with
  # negotiate_ack granting features among those offered, or, knowing no such negotiation,
  # rejects it; RemoteRead's own context is accepted beside it either way.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario Outline: A bind time feature negotiation beside RemoteRead's context is answered with negotiate_ack or a rejection
    When the client binds proposing RemoteRead and, in a presentation context of its own, a bind time feature negotiation offering <bits>
    Then the target accepts RemoteRead's presentation context and answers the other with negotiate_ack granting only features offered, or rejects it
    And the target answers with the port it listens on, not a fault

    Examples:
      | bits |
      | 0x03 |
      | 0x01 |

  # C706 12.6.4.9: every fragment of a request carries the call's opnum. A middle fragment that
  # names another is a protocol error: the call gets one fault (MS-RPCE 3.3.3.5.1; or the
  # connection closes), its last fragment is no call of its own, and the next call is served.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A fragmented request whose fragments name different opnums gets one fault, and the connection goes on
    When the client sends a request in three fragments whose second names another opnum than its first, then calls R_GetServerPort on the same connection
    Then the target answers the broken call with one fault, then answers R_GetServerPort, or closes the connection

  # C706 12.6.4.1: an alter_context alters an association, so one before any bind is refused
  # (a fault, or the connection closed: MS-RPCE 3.3.3.5.1); a second bind on an association
  # already bound is a protocol error in bind (MS-RPCE 2.2.2.5), refused with a bind_nak or the
  # close. Neither is accepted, and other connections go on being served.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario Outline: A bind or alter_context out of its turn is refused, and the server goes on serving
    When a new connection sends <what>
    Then the target refuses it with a fault or a bind_nak, or closes the connection
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

    Examples:
      | what                                           |
      | an alter_context PDU before any bind           |
      | a second bind PDU after its first was accepted |

  # C706 12.6.4.6 (co_cancel) and 12.6.4.8 (orphaned) name a call by its call_id; for one in
  # progress on no call there is nothing to cancel, and the association goes on.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A co_cancel and an orphaned naming no call in progress leave the connection serving
    When the client binds RemoteRead, sends a co_cancel and an orphaned for a call it never made, and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  # C706 12.6.3: several calls may be outstanding on one association; written in one send, the
  # server reads them together.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1 @MS-MQRR/3.1.4.1/R6
  Scenario: Calls written together in one send are all answered, and so is the call after them
    When the client binds RemoteRead, sends 4 R_GetServerPort requests in one segment, reads their answers and calls R_GetServerPort again
    Then every answer is the port it listens on

  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A client that takes a second between connecting and binding is served
    When a connection waits 1 second, then binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

  # C706 12.6.4.9: a request's p_cont_id names a presentation context the association
  # negotiated; a request on another cannot be run.
  @MS-MQRR/2.1/R1
  Scenario: A request on a presentation context that was never negotiated is refused with a fault
    When the client binds RemoteRead and sends a request on presentation context 7, which it never negotiated
    Then the target answers with a fault, not a response

  # C706 14.1: each PDU says in its drep how its integers are ordered, and the receiver makes
  # right. A server whose stubs read only little-endian NDR may refuse a big-endian request
  # with a fault (MS-RPCE 3.3.3.5.1: its status is never 0); either way the call is answered
  # once and the connection goes on.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A request in big-endian NDR is answered with the port or a fault, and the connection goes on serving
    When a new connection binds RemoteRead and calls R_GetServerPort in big-endian NDR, then in little-endian NDR
    Then the target answers the big-endian call once, with the port it listens on or a fault whose status is not 0, and then the little-endian one with the port

  # C706 14.1 and 12.6.3.1: a PDU's integers are in the order its drep announces, and the
  # receiver makes it right; a bind is answered with a bind_ack or a bind_nak (12.6.4.3-5).
  # Whether the context is accepted is not asked: C706's u_int32 if_version and MS-RPCE
  # 2.2.2.7's RPC_VERSION order a big-endian version differently.
  @MS-MQRR/2.1/R1
  Scenario: A bind in big-endian NDR is answered with a bind_ack or a bind_nak
    When a new connection sends a bind for RemoteRead in big-endian NDR
    Then the target answers it with a bind_ack or a bind_nak for its call_id

  # C706 12.6.4.9: a second first fragment for a call whose fragments are still coming is a
  # protocol error; the call is answered once (a fault, or run as a restart), or the
  # connection closed (MS-RPCE 3.3.3.5.1), and the next call is served.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario: A whole request that restarts a call still under reassembly is answered once, and the next call is served
    When the client sends the first fragment of call 2, then a whole request with the same call_id, then calls R_GetServerPort as call 3
    Then the target answers call 2 once, with a fault whose status is not 0 or the port, and call 3 with the port, or closes the connection

  # A PDU of a type no connection-oriented PDU has is malformed (C706 12.6; MS-RPCE 3.3.3.5.1:
  # a fault, or the connection closed); a bind or an alter_context that proposes no
  # presentation context is answered (C706 12.6.4.1-5), or its connection closed. None is left
  # unanswered, and the server goes on serving others.
  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.4.1/R1
  Scenario Outline: A PDU the server cannot serve is answered or its connection closed, and the server goes on serving
    When a new connection <what>
    Then the target answers it or closes the connection; it does not leave it unanswered
    When another connection binds RemoteRead and calls R_GetServerPort
    Then the target answers with the port it listens on, not a fault

    Examples:
      | what                                                                               |
      | binds RemoteRead and sends a PDU of PTYPE 20, which no connection-oriented PDU has |
      | sends a bind that proposes no presentation context                                 |
      | binds RemoteRead and sends an alter_context that proposes no presentation context  |
