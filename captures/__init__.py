"""Captures: the run recorder (wire.pcap of the suite's exchanges), and later the golden pcaps,
the decoder and the Wireshark dissector (ARCHITECTURE.md "Captures")."""
