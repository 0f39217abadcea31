Feature: MS-MQRR 2.2 Common Data Types
  The server indicates to its RPC runtime that it supports both the NDR and the NDR64 transfer
  syntaxes: a client may bind with either. (Offered both at once in two presentation contexts,
  a runtime accepts one and rejects the other, as MS-RPCE allows: each is bound on its own.)

  @MS-MQRR/2.2/R1
  Scenario Outline: A bind proposing <syntax> alone is accepted
    When the client binds RemoteRead over ncacn_ip_tcp proposing <syntax> in separate presentation contexts
    Then the target accepts every presentation context with the transfer syntax proposed in it

    Examples:
      | syntax |
      | NDR    |
      | NDR64  |
