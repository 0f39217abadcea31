Feature: MS-MQRR 2.1 Transport
  RemoteRead runs over RPC over TCP/IP (ncacn_ip_tcp), and the server listens on it (3.1.3).

  @MS-MQRR/2.1/R1 @MS-MQRR/3.1.3/R1
  Scenario: The server listens for RemoteRead over ncacn_ip_tcp
    When the client binds RemoteRead over ncacn_ip_tcp proposing NDR in separate presentation contexts
    Then the target accepts every presentation context with the transfer syntax proposed in it
