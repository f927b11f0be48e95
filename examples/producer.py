"""Adds sensor readings to a stream and prints each new entry's ID, one per line.

    python examples/producer.py --port 6379 --stream mystream --count 100 [--interval 0.1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import redis


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Add sensor readings to a Redis stream.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6379)
    p.add_argument("--stream", default="mystream")
    p.add_argument("--count", type=int, default=10, help="entries to add")
    p.add_argument("--interval", type=float, default=0.0, help="seconds between entries")
    p.add_argument("--maxlen", type=int, default=0, help="keep about this many entries (0: all)")
    args = p.parse_args(argv)

    r = redis.Redis(host=args.host, port=args.port, decode_responses=True)
    for i in range(args.count):
        fields = {"sensor-id": 1234, "temperature": round(random.uniform(15, 25), 1), "seq": i}
        entry_id = r.xadd(args.stream, fields, maxlen=args.maxlen or None, approximate=True)
        print(entry_id, flush=True)
        if args.interval:
            time.sleep(args.interval)
    r.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
