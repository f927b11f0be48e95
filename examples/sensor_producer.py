"""Writes simulated sensor readings to the `sensors` stream (used by sensor_pipeline.py).

    python examples/sensor_producer.py --url redis://127.0.0.1:6379/0 --rate 50 --duration 60
"""

from __future__ import annotations

import argparse
import random
import time

import redis


def produce(url: str, stream: str = "sensors", sensors: int = 5, rate: float = 50.0,
            duration: float = 60.0, maxlen: int = 100_000) -> int:
    """Add `rate` readings per second for `duration` seconds (0 = forever); returns how many."""
    r = redis.Redis.from_url(url)
    temps = {f"sensor-{i}": 18.0 + 2 * i for i in range(1, sensors + 1)}
    sent = 0
    start = time.monotonic()
    try:
        while duration == 0 or time.monotonic() - start < duration:
            pipe = r.pipeline(transaction=False)
            for _ in range(max(1, int(rate // 10))):
                sensor = random.choice(list(temps))
                temps[sensor] += random.uniform(-0.1, 0.1)  # a random walk, so averages move
                # MAXLEN ~ keeps the demo's memory bounded; the entry ID carries the event time.
                pipe.xadd(stream, {"sensor": sensor, "temperature": f"{temps[sensor]:.2f}"},
                          maxlen=maxlen, approximate=True)
                sent += 1
            pipe.execute()
            time.sleep(0.1)
    finally:
        r.close()
    return sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--stream", default="sensors")
    parser.add_argument("--rate", type=float, default=50.0, help="readings per second")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds; 0 runs forever")
    args = parser.parse_args()
    sent = produce(args.url, args.stream, rate=args.rate, duration=args.duration)
    print(f"producer: {sent} readings written to {args.stream}")


if __name__ == "__main__":
    main()
