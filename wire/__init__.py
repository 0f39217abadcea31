"""MS-MQRR and MS-MQMR on the wire: NDR/NDR64 stub codecs, DCE/RPC PDUs, message packets.

The wire layer knows bytes, not semantics: it turns the typed calls and results of
model.calls into stub data and back, and message packets into the Message ADM values and back.
"""
