Feature: MS-MQMR 2.2 Common Data Types
  The Queue Manager Management Protocol supports the NDR transfer syntax only.

  @MS-MQMR/2.2/R1
  Scenario: A bind that offers only NDR64 is refused
    When the client binds the qmmgmt interface offering only the NDR64 transfer syntax
    Then the server refuses the presentation context

  @MS-MQMR/2.2/R1 @MS-MQMR/2.1/R1
  Scenario: A bind that offers NDR is accepted with NDR
    When the client binds the qmmgmt interface offering only the NDR transfer syntax
    Then the server accepts the presentation context with NDR
