#!/usr/bin/env python3
"""A RESP server that answers +OK to every command, whatever its name: a replay of a
trace of made-up command names gets a successful reply (and so a latency) for each,
where redis-server answers an error. Used by the "Replay memory" measurements in
bench/README.md.

Usage: bench/ok_server.py PORT     (listens on 127.0.0.1; stop it with Ctrl+C or kill)
"""
import asyncio
import sys


def replies(buf):
    """The count of whole commands at the front of buf, and the bytes they take."""
    n, at = 0, 0
    while True:
        if buf.startswith(b"*", at):
            end = buf.find(b"\r\n", at)
            if end < 0:
                return n, at
            p = end + 2
            for _ in range(int(buf[at + 1:end])):
                line = buf.find(b"\r\n", p)
                if line < 0:
                    return n, at
                p = line + 2 + int(buf[p + 1:line]) + 2
                if p > len(buf):
                    return n, at
        else:
            # An inline command: one line.
            end = buf.find(b"\r\n", at)
            if end < 0:
                return n, at
            p = end + 2
        n, at = n + 1, p


async def serve(reader, writer):
    buf = b""
    try:
        while data := await reader.read(1 << 16):
            buf += data
            n, used = replies(buf)
            buf = buf[used:]
            if n:
                writer.write(b"+OK\r\n" * n)
                await writer.drain()
    except (ConnectionError, ValueError):
        pass
    writer.close()


async def main(port):
    server = await asyncio.start_server(serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
