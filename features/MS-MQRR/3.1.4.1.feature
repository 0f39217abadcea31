Feature: MS-MQRR 3.1.4.1 R_GetServerPort (Opnum 0)
  The R_GetServerPort method returns the RPC endpoint port for the client to use in
  subsequent method calls on the RemoteRead interface.

  @MS-MQRR/3.1.4.1/R1 @MS-MQRR/3.1.4.1/R6
  Scenario: The server returns the nonzero TCP port of the RemoteRead interface
    When the client calls R_GetServerPort
    Then the returned port is a nonzero TCP port
