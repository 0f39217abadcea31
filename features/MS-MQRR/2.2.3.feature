Feature: MS-MQRR 2.2.3 QUEUE_FORMAT
  Only a subset of the QUEUE_FORMAT_TYPE enumeration is supported by this protocol: UNKNOWN,
  PUBLIC, PRIVATE, DIRECT, MACHINE and SUBQUEUE; with DIRECT, only the TCP and OS protocol
  address specifications. R_OpenQueue accepts PUBLIC, PRIVATE, DIRECT, MACHINE and SUBQUEUE
  (MS-MQRR 3.1.4.2, pQueueFormat): a format of another type is an invalid parameter, one of
  these types that names no queue of the server is not found.

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A queue format of a type R_OpenQueue does not accept is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with a queue format of type <type>
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | type      |
      | UNKNOWN   |
      | CONNECTOR |
      | DL        |
      | MULTICAST |

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24
  Scenario Outline: A queue format of an accepted type is looked up, and one that names no queue is not found
    Given a queue with messages "one"
    When the client calls R_OpenQueue with a <type> queue format that names no queue
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

    Examples:
      | type     |
      | PUBLIC   |
      | PRIVATE  |
      | DIRECT   |
      | MACHINE  |
      | SUBQUEUE |

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R26 @MS-MQRR/3.1.4.2/R30
  Scenario: A DIRECT format name with the OS protocol opens the queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=OS format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R26 @MS-MQRR/3.1.4.2/R30
  Scenario: A DIRECT format name with the TCP protocol and the server's address opens the queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=TCP format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  # PRIVATE=ComputerGuid\QueueNumber (MS-MQMQ 2.1.4): the identifier of the queue manager and
  # the queue's number, which SUT control tells (private_format_name).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.5/R48
  Scenario: A PRIVATE format name opens the private queue it names
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's PRIVATE= format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQDMPR/3.1.7.1.5/R51
  Scenario Outline: A PRIVATE format name that differs from the queue's in one part is not found
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's PRIVATE= format name and another <part>
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

    Examples:
      | part          |
      | queue number  |
      | computer GUID |

  # MS-MQMQ 2.2.7: m_SuffixAndFlags holds a QUEUE_SUFFIX_TYPE (0x0 to 0x5) in its low nibble
  # and the flags 0x00 or 0x80 in its high one; JOURNAL takes 0x80, SUBQUEUE goes only with
  # m_qft SUBQUEUE and DEADLETTER not with PRIVATE. A PRIVATE format with another octet is
  # malformed: an invalid parameter.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A PRIVATE queue format whose m_SuffixAndFlags breaks MS-MQMQ 2.2.7 is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's PRIVATE= format name and m_SuffixAndFlags <saf>
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | saf  |
      | 0x06 |
      | 0x40 |
      | 0x01 |
      | 0x82 |
      | 0x05 |

  # m_reserved is padding (MS-MQMQ 2.2.7): a sender SHOULD set it to 0 and a receiver does not
  # use it, so whatever it holds the QUEUE_FORMAT names the same queue.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.5/R48
  Scenario Outline: A PRIVATE queue format whose m_reserved is not 0 opens the queue it names
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's PRIVATE= format name and m_reserved <reserved>
    Then the returned context handle is not NULL
    And a peek finds the message "one"

    Examples:
      | reserved |
      | 0x0001   |
      | 0xFFFF   |

  # MACHINE=ComputerGuid;suffix designates a system queue of the computer with that identifier
  # (MS-MQMQ 2.1.6): another computer's is not in the server's QueueCollection.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQDMPR/3.1.7.1.5/R51
  Scenario Outline: A MACHINE format name of another computer is not found
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the format name "MACHINE=1b4e28ba-2fa1-41d2-883f-0016d3cca427;<suffix>"
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

    Examples:
      | suffix     |
      | JOURNAL    |
      | DEADLETTER |
      | DEADXACT   |

  # MACHINE=ComputerGuid;suffix with the server's own ComputerGuid (its queue manager's
  # Identifier, which a queue's PRIVATE= name carries) designates its system journal,
  # dead-letter or transactional dead-letter queue (MS-MQMQ 2.1.6, MS-MQDMPR 3.1.1.1); Open
  # Queue refuses a machine format name only for SendAccess (MS-MQDMPR 3.1.7.1.5 R40-R43).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.5/R40
  @MS-MQDMPR/3.1.7.1.5/R48
  Scenario Outline: The server's own MACHINE format name opens its system queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the server's own MACHINE= format name and suffix <suffix>
    Then the returned context handle is not NULL

    Examples:
      | suffix     |
      | JOURNAL    |
      | DEADLETTER |
      | DEADXACT   |

  # PUBLIC=QueueGuid designates a public queue by its Identifier (MS-MQMQ 2.1.3), which SUT
  # control tells (public_format_name).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.5/R48
  Scenario: A PUBLIC format name opens the public queue it names
    Given a public queue with messages "one"
    When the client calls R_OpenQueue with the queue's PUBLIC= format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  # PUBLIC=QueueGuid designates a public queue by its Identifier (MS-MQMQ 2.1.3); a private
  # queue is not designated by a PUBLIC= name, whatever its Identifier (often the null GUID).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQDMPR/3.1.7.1.5/R51
  Scenario: The PUBLIC format name of the null GUID opens no private queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the format name "PUBLIC=00000000-0000-0000-0000-000000000000"
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

  @MS-MQRR/3.1.4.2/R26 @MS-MQDMPR/3.1.7.1.5/R48
  Scenario: A DIRECT format name that spells the computer and queue names in another case opens that queue
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=OS format name in another case
    Then the returned context handle is not NULL
    And a peek finds the message "one"

  # A queue name is 1-124 of %x21 / %x23-2A / %x2D-3A / %x3C-5B / %x5D-7F (MS-MQMQ 2.1.1): no
  # space, '"', '+', ',', ';' or '\'.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.5/R48
  Scenario Outline: A queue whose name holds the other characters the grammar allows opens by its DIRECT=OS format name
    Given a queue whose name ends in "<suffix>" with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=OS format name
    Then the returned context handle is not NULL
    And a peek finds the message "one"

    Examples:
      | suffix        |
      | #1            |
      | !$%&'()*      |
      | -./:<=>?@     |
      | [x]^_`{\|}~   |

  # MS-MQMQ 2.1.2: a queue path is PRIVATE$\name, name, or SYSTEM$ with ;JOURNAL, ;DEADLETTER or
  # ;DEADXACT; a queue path takes ;JOURNAL or a subqueue (2.1.1: 1-32 characters, no space);
  # ;XACTONLY belongs to CONNECTOR= names (2.1.6). <U+XXXX> stands for that character: U+0080
  # is a control character, outside QueueName's %x21-7F and not printable; U+007F is outside a
  # computer name's VCHAR (%x21-7E). The Protocol is OS, TCP, SPX, HTTP or HTTPS (2.1.2): FTP is
  # none of them, and a string without a colon has none, with or without a queue path after it.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A DIRECT queue format whose string breaks the direct format name grammar is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the DIRECT string "<direct>"
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | direct                               |
      | OS:<computer>\private$\two words     |
      | OS:\<queue>                          |
      | OS:bad,name\<queue>                  |
      | TCP:300.1.2.3\<queue>                |
      | SPX:12345678:9abcdefg\<queue>        |
      | HTTP://<computer>:70000/msmq\<queue> |
      | HTTP://two words/msmq\<queue>        |
      | HTTP://bad,name/msmq\<queue>         |
      | OS:<computer>\<queue>;XACTONLY       |
      | OS:<computer>\<queue>;DEADLETTER     |
      | OS:<computer>\<queue>;DEADXACT       |
      | OS:<computer>\<queue>;a b            |
      | OS:<computer>\SYSTEM$                |
      | OS:<computer>\SYSTEM$;sub            |
      | OS:<computer>\PRIVATE$               |
      | OS:<computer>\private$\              |
      | FTP:<computer>                       |
      | <computer>                           |
      | FTP:<computer>\<queue>               |
      | OS:<computer>\private$\a+b           |
      | OS:<computer>\private$\x\y          |
      | OS:<computer>\<queue>;x;y            |
      | OS:<computer>\private$\a<U+0080>b     |
      | OS:a<U+007F>b\<queue>                |
      | OS:<computer>\qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq |
      | OS:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\<queue> |
      | HTTP://<computer>:65536/msmq\<queue> |

  # The suffix of a DIRECT or SUBQUEUE queue format travels in m_SuffixAndFlags (MS-MQMQ 2.2.7):
  # DEADLETTER and DEADXACT follow only SYSTEM$ (2.1.2); a subqueue's name is 1-32 characters
  # without space, '"', '+', ',', ';' or '\' (2.1.1).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A DIRECT or SUBQUEUE queue format whose suffix breaks the direct format name grammar is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with a <kind> queue format "<direct>" and m_SuffixAndFlags <saf>
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | kind     | direct                   | saf  |
      | DIRECT   | OS:<computer>\<queue>    | 0x82 |
      | DIRECT   | OS:<computer>\<queue>    | 0x83 |
      | SUBQUEUE | OS:<computer>\<queue>;a b | 0x05 |
      | SUBQUEUE | OS:<computer>\<queue>;s;t | 0x05 |
      | SUBQUEUE | OS:<computer>\<queue>   | 0x05 |
      | SUBQUEUE | OS:<computer>\<queue>;XactOnly | 0x05 |
      | SUBQUEUE | OS:<computer>\<queue>;sssssssssssssssssssssssssssssssss | 0x05 |

  # m_pDirectID and m_pDirectSubqueueID are [string] wchar_t* arms of the QUEUE_FORMAT union
  # (MS-MQMQ 2.2.7): NDR carries them NULL, and a NULL one holds no direct format name.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R23
  Scenario Outline: A DIRECT or SUBQUEUE queue format whose string pointer is NULL is an invalid parameter
    Given a queue with messages "one"
    When the client calls R_OpenQueue with a <kind> queue format whose string pointer is NULL
    Then the call throws MQ_ERROR_INVALID_PARAMETER

    Examples:
      | kind     |
      | DIRECT   |
      | SUBQUEUE |

  # A computer name is 1-256 characters (MS-MQMQ 2.1.1): a DIRECT=OS name of a computer that
  # is not the server's, however short or long, names no queue of its QueueCollection.
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQDMPR/3.1.7.1.5/R51
  Scenario Outline: A well-formed DIRECT string that names another computer's queue is not found
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the DIRECT string "<direct>"
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

    Examples:
      | direct                                                                                                                                                                                                                                                                      |
      | OS:x\<queue>                                                                                                                                                                                                                                                                |
      | TCP:192.0.2.1\<queue>                                                                                                                                                                                                                                                       |
      | OS:x\private$\q |
      | OS:x\private$\é<U+00E9> |
      | OS:x\q |
      | OS:x\qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq |
      | OS:a!b\<queue> |
      | OS:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\<queue> |

  # MS-MQRR 3.1.4.2 R24: the server looks the queue up before it opens it, so a DIRECT string of
  # its own computer for a queue it does not have is not found, whatever Open Queue would make
  # of the name (MS-MQDMPR 3.1.7.1.5 refuses an HTTP name opened to receive).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24
  Scenario Outline: A DIRECT string of the server's own computer for a queue it does not have is not found
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the DIRECT string "<direct>"
    Then the call throws MQ_ERROR_QUEUE_NOT_FOUND

    Examples:
      | direct                                 |
      | OS:<computer>\private$\absent          |
      | HTTP://<computer>/msmq/private$/absent |

  # An HTTP(S) address is '//' Host [':' Port] '/MSMQ' with a port of 0-65535, 80 or 443 when
  # left out (MS-MQMQ 2.1.2): a well-formed one is an unsupported operation for receive.
  @MS-MQRR/3.1.4.2/R3 @MS-MQDMPR/3.1.7.1.5/R36 @MS-MQDMPR/3.1.7.1.5/R38
  Scenario Outline: A well-formed DIRECT=HTTP string is an unsupported format name operation for receive
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the DIRECT string "<direct>"
    Then the call throws MQ_ERROR_UNSUPPORTED_FORMATNAME_OPERATION

    Examples:
      | direct                                  |
      | HTTP://<computer>:65535/msmq\<queue>    |
      | HTTPS://<computer>:0/msmq\<queue>       |
      | HTTPS://<computer>/MSMQ/<queue>         |

  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R25 @MS-MQDMPR/3.1.7.1.5/R36 @MS-MQDMPR/3.1.7.1.5/R38
  Scenario: The DIRECT=HTTP format name of a local queue is not opened for receive
    Given a queue with messages "one"
    When the client calls R_OpenQueue with the queue's DIRECT=HTTP format name
    Then the call fails

  # The queue journal holds a copy of each message received from a journaled queue
  # (spec/errata.yaml queue-journal: the reading the suite holds to).
  @MS-MQRR/3.1.4.2/R3 @MS-MQRR/3.1.4.2/R24 @MS-MQRR/3.1.4.2/R30 @MS-MQDMPR/3.1.7.1.3/R8
  @MS-MQDMPR/3.1.7.2.1/R5
  Scenario: The queue journal of a journaled queue opens for peek and holds the message received
    Given a journaled queue with messages "one, two"
    And the client has opened the queue with RECEIVE_ACCESS
    And the client has received "one" as request 1
    And the client has called R_EndReceive with RR_ACK for request 1
    When the client calls R_OpenQueue on the queue's journal with PEEK_ACCESS
    Then the returned context handle is not NULL
    And a peek finds the message "one"
