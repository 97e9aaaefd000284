"""One connection to a seedrl learner: TCP, a Unix socket or TLS (Python's `ssl`), framed reads
and writes of whole frames (docs/protocol.md). `seedrl.actor` drives it.
"""

import socket
import ssl

from seedrl import protocol as p


class ActorError(Exception):
    """The learner refused this actor for good (a wrong token, another spec, another version)."""


class Retry(Exception):
    """The connection is gone or the learner asked to come back later."""


def parse_address(address):
    """("unix", path) or ("tcp", (host, port)) from 'unix:/path', 'host:port' or '[v6]:port'."""
    if address.startswith("unix:"):
        return "unix", address[len("unix:"):]
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"address {address!r}: expected host:port, [v6]:port or unix:/path")
    return "tcp", (host.strip("[]"), int(port))


class Connection:
    """One connection to a learner: framed reads and writes of whole frames."""

    def __init__(self, address, tls=None, timeout=30.0):
        kind, where = parse_address(address)
        if kind == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            sock = socket.socket(socket.AF_INET6 if ":" in where[0] else socket.AF_INET,
                                 socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(timeout)
        try:
            sock.connect(where)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_hostname=tls_server_name(tls, where))
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self.max_frame_bytes = p.MAX_HANDSHAKE_FRAME_BYTES

    def send(self, frame):
        self.sock.sendall(frame)

    def _read_exactly(self, n):
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionError("the learner closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def read(self):
        """(header, payload) of the next frame; a frame of another version raises ActorError."""
        raw = self._read_exactly(p.HEADER_BYTES)
        try:
            header = p.decode_header(raw, max(self.max_frame_bytes, p.MAX_HANDSHAKE_FRAME_BYTES))
        except p.ProtocolError as e:
            if e.code == p.UNSUPPORTED_VERSION and getattr(e, "header", None) is not None:
                h = e.header
                said = ""
                if 8 <= h.length <= p.MAX_HANDSHAKE_FRAME_BYTES and h.type == p.ERROR:
                    try:
                        said = " (it says: " + p.decode_error(
                            self._read_exactly(h.payload_bytes))[1] + ")"
                    except (p.ProtocolError, ConnectionError, OSError):
                        pass
                raise ActorError(f"the learner speaks protocol version {h.version}; this actor "
                                 f"speaks version {p.VERSION}; update one of them{said}") from None
            raise Retry(f"a broken frame from the learner: {e.message}") from None
        return header, self._read_exactly(header.payload_bytes)

    def read_pending(self):
        """A frame the learner sent before the connection broke, or (None, None)."""
        try:
            self.sock.settimeout(0.2)
            return self.read()
        except (OSError, ConnectionError, ActorError, Retry):
            return None, None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def tls_server_name(context, where):
    """The name the learner's certificate is checked against: its host."""
    return where[0] if context.check_hostname else None


def tls_context(ca=None, cert=None, key=None, server_name_check=True):
    """A client TLS context: the learner's certificate checked against `ca` (a PEM file), this
    actor's own certificate and key for mutual TLS."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = server_name_check
    if cert:
        context.load_cert_chain(cert, key)
    return context
