"""Redis's serialization format (RDB): the encodings shared by DUMP/RESTORE payloads and dump.rdb files.

`primitives` holds the byte-level encodings (lengths, strings, doubles, times, LZF, CRC-64),
`listpack`, `ziplist`, `intset` and `zipmap` the packed containers Redis embeds in strings,
`values` the codec of each value type, `payload` the DUMP envelope.
"""
