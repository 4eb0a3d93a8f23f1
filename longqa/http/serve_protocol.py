"""uvicorn's HTTP/1.1 protocol with a deadline for a request's headers. Hand-written: uvicorn times
out only an idle keep-alive connection, and its timer stops at the first byte, so a client that
trickles its headers one byte at a time would hold a connection for ever (slowloris)."""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol


def protocol_with_header_timeout(seconds: float) -> type[H11Protocol]:
    """uvicorn's H11 protocol that closes a connection whose request headers have not all arrived within `seconds`."""

    class HeaderTimeoutProtocol(H11Protocol):
        _headers_due: asyncio.TimerHandle | None = None

        def _await_headers(self) -> None:
            self._stop_waiting()
            self._headers_due = self.loop.call_later(seconds, self._headers_late)

        def _stop_waiting(self) -> None:
            if self._headers_due is not None:
                self._headers_due.cancel()
                self._headers_due = None

        def _headers_late(self) -> None:
            self._headers_due = None
            if not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_headers()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request's headers arrived
                self._stop_waiting()

        def on_response_complete(self) -> None:
            self._await_headers()  # the next request on this connection (pipelined ones stop it at once)
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol
