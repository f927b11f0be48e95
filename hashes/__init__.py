"""The hash value type: fields and values, small hashes packed into one bytes object, and field
expiration times. No I/O, no RESP, no server imports."""

from hashes.hash import Hash

__all__ = ["Hash"]
