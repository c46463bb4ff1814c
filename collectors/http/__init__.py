"""HTTP hardening shared by the bot's server and the node agent: body caps, strict JSON, JSON errors.

It sits in `collectors` (the lowest package) because the node agent lives there and imports only point up.
"""
