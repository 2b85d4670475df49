"""Speed of live fan-out: messages/s and publish-to-receive latency, memory:// and redis://.

Usage: .venv/bin/python bench/broker.py [--redis redis://127.0.0.1:6379/0] [--messages 20000]
       [--subscribers 10]

One channel (a table) with N subscribers (its players and spectators). For Redis the publisher
and the subscribers use separate broker instances, as two server processes would. Prints figures
only; docs/benchmarks.md records them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from app.broker import Broker, create_broker


async def fan_out(publisher: Broker, receiver: Broker, messages: int, subscribers: int) -> None:
    channel = f"bench:{uuid.uuid4().hex}"
    latencies: list[float] = []
    async with asyncio.TaskGroup() as group:
        ready = asyncio.Barrier(subscribers + 1)

        async def consume(record: bool) -> None:
            async with receiver.subscribe(channel) as sub:
                await ready.wait()
                for _ in range(messages):
                    sent = float(await anext(sub))
                    if record:
                        latencies.append(time.perf_counter() - sent)

        for i in range(subscribers):
            group.create_task(consume(record=i == 0))
        await ready.wait()
        start = time.perf_counter()
        for i in range(messages):
            await publisher.publish(channel, repr(time.perf_counter()))
            if i % 256 == 255:  # let the consumers keep up, as a real table's pace would
                await asyncio.sleep(0)
    elapsed = time.perf_counter() - start
    latencies.sort()
    p50 = statistics.median(latencies) * 1e3
    p99 = latencies[int(len(latencies) * 0.99)] * 1e3
    delivered = messages * subscribers
    print(
        f"  {messages} messages x {subscribers} subscribers: "
        f"{messages / elapsed:,.0f} published/s, {delivered / elapsed:,.0f} delivered/s, "
        f"latency p50 {p50:.2f} ms, p99 {p99:.2f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--subscribers", type=int, default=10)
    args = parser.parse_args()

    memory = create_broker("memory://", queue_size=args.messages)
    await memory.connect()
    print("memory:// (one process)")
    await fan_out(memory, memory, args.messages, args.subscribers)
    await memory.disconnect()

    one = create_broker(args.redis, queue_size=args.messages)
    two = create_broker(args.redis, queue_size=args.messages)
    await one.connect()
    await two.connect()
    print(f"{args.redis} (publisher and subscribers in separate broker instances)")
    await fan_out(one, two, args.messages, args.subscribers)
    await one.disconnect()
    await two.disconnect()


if __name__ == "__main__":
    asyncio.run(main())
