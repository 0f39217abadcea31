Feature: MS-MQRR 3.1.4.12 R_QMEnlistRemoteTransaction (Opnum 12)
  The R_QMEnlistRemoteTransaction method propagates a distributed atomic transaction context to
  the server: the server enlists in the transaction and creates a Transaction with the
  identifier pTransactionId, which later R_StartTransactionalReceive and R_MoveMessage calls
  name. cbPropagationToken is the size of pbPropagationToken; pQueueFormat should be ignored.

  @MS-MQRR/3.1.4.12/R1 @MS-MQRR/3.1.4.12/R6 @MS-MQRR/3.1.4.12/R11 @MS-MQRR/3.1.4.12/R13
  @MS-MQRR/3.1.4.12/R14 @MS-MQRR/3.1.4.12/R15 @MS-MQRR/3.1.4.12/R16 @MS-MQRR/3.1.4.12/R17
  Scenario: The server enlists in the transaction and knows it by its identifier
    Given a transactional queue holding "one, two"
    When the client enlists transaction "T1" with a propagation token
    Then the call returns MQ_OK
    When the client receives in transaction "T1" from the queue
    Then the message "one" is returned
    When the client ends the transactional receive with RR_ACK
    And transaction "T1" is committed
    Then peeking the queue returns "two"

  @MS-MQRR/3.1.4.12/R1 @MS-MQRR/3.1.4.12/R15 @MS-MQRR/3.1.4.12/R16 @MS-MQRR/3.1.4.12/R17
  Scenario: A transaction the server enlisted in can move a message
    Given a transactional queue holding "one" with subqueues "retry"
    When the client enlists transaction "T1" with a propagation token
    Then the call returns MQ_OK
    When the client moves "one" from the queue to subqueue "retry" in transaction "T1"
    Then the call returns MQ_OK
    When transaction "T1" is committed
    Then peeking subqueue "retry" returns "one"

  @MS-MQRR/3.1.4.12/R9 @MS-MQRR/3.1.4.12/R10 @MS-MQRR/3.1.4.12/R11 @MS-MQRR/3.1.4.12/R17
  Scenario: The server ignores pQueueFormat
    Given a transactional queue holding "one, two"
    When the client enlists transaction "T1" with a propagation token naming a queue that does not exist
    Then the call returns MQ_OK
    When the client receives in transaction "T1" from the queue
    Then the message "one" is returned

  @MS-MQRR/3.1.4.12/R6 @MS-MQRR/3.1.4.12/R11
  Scenario: A propagation token of the largest size the IDL allows is taken
    Given a transactional queue holding "one"
    When the client enlists transaction "T1" with a propagation token of 131072 octets
    Then the call returns MQ_OK

  @MS-MQRR/3.1.4.12/R6 @MS-MQRR/3.1.4.12/R12
  Scenario: A propagation token larger than the IDL allows is refused
    Given a transactional queue holding "one"
    When the client enlists transaction "T1" with a propagation token of 131073 octets
    Then the call fails

  @MS-MQRR/3.1.4.12/R8 @MS-MQRR/3.1.4.12/R12
  Scenario: An empty propagation token is refused
    Given a transactional queue holding "one"
    When the client enlists transaction "T1" with an empty propagation token
    Then the call fails

  @MS-MQRR/3.1.4.12/R6 @MS-MQRR/3.1.4.12/R12
  Scenario Outline: A cbPropagationToken that is not the token's size is refused
    Given a transactional queue holding "one"
    When the client enlists transaction "T1" with cbPropagationToken <size> than the token
    Then the call fails

    Examples:
      | size     |
      | one more |
      | one less |

  @MS-MQRR/3.1.4.12/R5 @MS-MQRR/3.1.4.12/R12
  Scenario: A NULL transaction identifier is refused
    Given a transactional queue holding "one"
    When the client enlists transaction "T1" with a NULL transaction identifier
    Then the call fails
