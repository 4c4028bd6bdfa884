"""A TCP proxy on 127.0.0.1 that a test cuts and restores: a real "database down" for any
driver, without touching the database server others use.

    with TcpProxy("127.0.0.1", 5432) as proxy:   # listening on proxy.port
        ...                                      # connect through 127.0.0.1:proxy.port
        proxy.cut()      # open connections reset, new ones refused
        proxy.restore()  # listening again on the same port
        proxy.stall()    # bytes stop flowing, nothing is closed: a network that drops
                         # packets silently (restore() lets them flow again)

Threads, not the test's event loop: it keeps forwarding whatever the test awaits.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``(host, upstream_port)`` while it is up."""

    def __init__(self, host: str, upstream_port: int) -> None:
        self.upstream = (host, upstream_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        #: Set while bytes flow; cleared by `stall`.
        self._flowing = threading.Event()
        self._flowing.set()

    def __enter__(self) -> TcpProxy:
        self.restore()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cut()
        for thread in self._threads:
            thread.join(5)

    @property
    def up(self) -> bool:
        """Whether it accepts connections now."""
        return self._listener is not None

    def stall(self) -> None:
        """Stop forwarding, in both directions, on open and new connections alike, and
        close nothing: what a peer sees of a network that silently drops its packets."""
        self._flowing.clear()

    def restore(self) -> None:
        """Listen (again, on the same port once it has one), and let bytes flow."""
        self._flowing.set()
        if self._listener is not None:
            return
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._spawn(self._accept, listener)

    def cut(self) -> None:
        """Stop listening and reset every open connection, as a dead server would."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                # RST, not FIN: the peer sees a reset connection at once.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(thread)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    client.close()
                    server.close()
                    return
                self._sockets.update((client, server))
            ended: list[bool] = []
            self._spawn(self._pipe, client, server, ended)
            self._spawn(self._pipe, server, client, ended)

    def _pipe(self, source: socket.socket, sink: socket.socket, ended: list[bool]) -> None:
        try:
            while data := source.recv(65536):
                while not self._flowing.wait(0.1):  # stalled: hold the bytes
                    if self._listener is None:
                        raise OSError("cut")
                sink.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
        with self._lock:
            ended.append(True)
            last = len(ended) == 2
            if last:  # both directions ended: the pair is done
                self._sockets.difference_update((source, sink))
        if last:
            source.close()
            sink.close()
