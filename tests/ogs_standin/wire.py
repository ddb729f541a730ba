"""HTTP and WebSocket on one loopback port, as OGS serves both from its root.

gtp2ogs opens its WebSocket at the server's root and sends its HTTP calls (accepting a
challenge) to the same host and port; a small hand-written server keeps both on one port
with no dependency. Text frames only, no extensions (the `ws` client offers permessage-deflate
and takes no for an answer).
"""

import asyncio
import base64
import hashlib
import json
import struct

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's key suffix


class WebSocket:
    """One client connection: `send` a JSON message, `receive` the next one (None: closed)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.closed = False

    async def send(self, message) -> None:
        if self.closed:
            return
        data = json.dumps(message).encode()
        n = len(data)
        head = bytes([0x81]) + (bytes([n]) if n < 126 else
                                bytes([126]) + struct.pack("!H", n) if n < 65536 else
                                bytes([127]) + struct.pack("!Q", n))
        try:
            self.writer.write(head + data)
            await self.writer.drain()
        except (ConnectionError, RuntimeError):
            self.closed = True

    async def receive(self):
        """The next JSON message, answering pings; None once the client closed."""
        while not self.closed:
            try:
                b0, b1 = await self.reader.readexactly(2)
                n = b1 & 0x7F
                if n == 126:
                    n = struct.unpack("!H", await self.reader.readexactly(2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", await self.reader.readexactly(8))[0]
                mask = await self.reader.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
                payload = bytes(c ^ mask[i % 4] for i, c in enumerate(
                    await self.reader.readexactly(n)))
            except (asyncio.IncompleteReadError, ConnectionError):
                self.closed = True
                return None
            opcode = b0 & 0x0F
            if opcode == 0x8:  # close
                self.closed = True
                return None
            if opcode == 0x9:  # ping -> pong
                self.writer.write(bytes([0x8A, len(payload)]) + payload)
                continue
            if opcode == 0x1:
                return json.loads(payload)
        return None


async def read_request(reader: asyncio.StreamReader):
    """(method, path, headers, body) of one HTTP request; None on a closed connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = await reader.readexactly(int(headers.get("content-length", 0) or 0))
    return method, path, headers, body


async def upgrade(reader, writer, headers) -> WebSocket:
    """Complete the WebSocket handshake (RFC 6455) and hand back the connection."""
    accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + GUID).encode())
                              .digest()).decode()
    writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n").encode())
    await writer.drain()
    return WebSocket(reader, writer)


def respond(writer, status: int, body: dict) -> None:
    """An HTTP JSON answer, closing the connection."""
    data = json.dumps(body).encode()
    writer.write((f"HTTP/1.1 {status} {'OK' if status < 300 else 'Error'}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                  "Connection: close\r\n\r\n").encode() + data)
