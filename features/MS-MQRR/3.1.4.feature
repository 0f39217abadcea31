Feature: MS-MQRR 3.1.4 Message Processing Events and Sequencing Rules
  The server has its RPC runtime perform a strict NDR data consistency check: a request whose
  stub does not hold the method's [in] parameters is refused by the runtime with a fault and
  never reaches the method.

  @MS-MQRR/3.1.4/R1
  Scenario Outline: A request whose stub is cut short is refused with a fault
    When the client sends R_OpenQueue with a stub cut to <size> octets
    Then the target answers with a fault, not a response

    Examples:
      | size |
      | 0    |
      | 3    |
      | 17   |
