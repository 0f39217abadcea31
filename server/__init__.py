"""The reference queue manager: the model served over DCE/RPC on ncacn_ip_tcp."""
