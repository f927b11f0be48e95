"""RESP2/RESP3: request parsing and typed reply encoding. No I/O here."""
