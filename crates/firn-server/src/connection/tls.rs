//! TLS on a connection's socket. After the handshake (tokio-rustls, in the
//! accept task, under a deadline) the connection keeps its plain socket
//! halves and drives the rustls session itself, in the same non-blocking
//! pattern as plain TCP: ciphertext moves with `read_tls`/`write_tls` over
//! `try_read`/`try_write` when the socket is ready, plaintext with the
//! session's reader and writer. So the plain path is unchanged (one
//! `Option` test where a read or write starts), and TLS output is bounded
//! by rustls's send buffer (64 KiB) on top of the output queue.
//!
//! MONITOR and a replica's feed use tokio's AsyncRead/AsyncWrite: [`TlsIo`]
//! (borrowed from the connection) and [`TlsStream`] (owned, for PSYNC)
//! give them that over the same session.

use bytes::BytesMut;
use rustls::ServerConnection;
use std::io::{self, IoSlice, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// `io::Read`/`io::Write` over a tokio socket that never waits:
/// `WouldBlock` when the socket is not ready (and its readiness is then
/// cleared, so the next `readable()`/`writable()` waits).
struct Nonblocking<'a>(&'a TcpStream);

impl Read for Nonblocking<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl Write for Nonblocking<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn invalid(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// What [`read_available`] found.
pub(crate) enum Input {
    /// This many plaintext bytes were appended (maybe 0: a partial record,
    /// or handshake/alert traffic).
    Plaintext(usize),
    /// The peer closed (everything it sent before is already appended).
    Eof,
}

/// Processes the records the session has read and moves their plaintext
/// into `inbuf`: how many bytes, and whether the peer sent close_notify.
pub(crate) fn take_plaintext(
    session: &mut ServerConnection,
    inbuf: &mut BytesMut,
) -> io::Result<(usize, bool)> {
    let state = session.process_new_packets().map_err(invalid)?;
    let available = state.plaintext_bytes_to_read();
    let mut moved = 0;
    if available > 0 {
        let start = inbuf.len();
        inbuf.resize(start + available, 0);
        while moved < available {
            match session.reader().read(&mut inbuf[start + moved..]) {
                Ok(0) => break,
                Ok(n) => moved += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    inbuf.truncate(start + moved);
                    return Err(e);
                }
            }
        }
        inbuf.truncate(start + moved);
    }
    Ok((moved, state.peer_has_closed()))
}

/// Reads the ciphertext the socket has now (without waiting), decrypts it
/// and appends the plaintext to `inbuf`, stopping once `want` bytes came.
/// A protocol error sends rustls's alert (if the socket takes it) and
/// returns an error.
pub(crate) fn read_available(
    tcp: &TcpStream,
    session: &mut ServerConnection,
    inbuf: &mut BytesMut,
    want: usize,
) -> io::Result<Input> {
    let mut moved = 0;
    loop {
        let socket_closed = match session.read_tls(&mut Nonblocking(tcp)) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Input::Plaintext(moved)),
            Err(e) => return Err(e),
        };
        let (n, peer_closed) = match take_plaintext(session, inbuf) {
            Ok(taken) => taken,
            Err(e) => {
                let _ = session.write_tls(&mut Nonblocking(tcp));
                return Err(e);
            }
        };
        moved += n;
        if socket_closed || peer_closed {
            return Ok(if moved > 0 {
                Input::Plaintext(moved)
            } else {
                Input::Eof
            });
        }
        if moved >= want {
            return Ok(Input::Plaintext(moved));
        }
    }
}

/// Writes the session's pending ciphertext until the socket would block:
/// `Ok(true)` once all of it is out.
pub(crate) fn flush_ciphertext(
    tcp: &TcpStream,
    session: &mut ServerConnection,
) -> io::Result<bool> {
    while session.wants_write() {
        match session.write_tls(&mut Nonblocking(tcp)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Encrypts what rustls's send buffer takes of `slices`; returns how many
/// plaintext bytes it took.
pub(crate) fn encrypt(session: &mut ServerConnection, slices: &[IoSlice<'_>]) -> io::Result<usize> {
    session.writer().write_vectored(slices)
}

fn poll_read_tls(
    tcp: &TcpStream,
    session: &mut ServerConnection,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    loop {
        match session.reader().read(buf.initialize_unfilled()) {
            Ok(n) => {
                buf.advance(n);
                return Poll::Ready(Ok(()));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Poll::Ready(Ok(())),
            Err(e) => return Poll::Ready(Err(e)),
        }
        // Alerts or key updates the session owes the peer go out on the way.
        flush_ciphertext(tcp, session)?;
        ready!(tcp.poll_read_ready(cx))?;
        match session.read_tls(&mut Nonblocking(tcp)) {
            Ok(_) => {
                if let Err(e) = session.process_new_packets() {
                    let _ = session.write_tls(&mut Nonblocking(tcp));
                    return Poll::Ready(Err(invalid(e)));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Poll::Ready(Err(e)),
        }
    }
}

fn poll_flush_tls(
    tcp: &TcpStream,
    session: &mut ServerConnection,
    cx: &mut Context<'_>,
) -> Poll<io::Result<()>> {
    loop {
        if flush_ciphertext(tcp, session)? {
            return Poll::Ready(Ok(()));
        }
        ready!(tcp.poll_write_ready(cx))?;
    }
}

fn poll_write_tls(
    tcp: &TcpStream,
    session: &mut ServerConnection,
    cx: &mut Context<'_>,
    buf: &[u8],
) -> Poll<io::Result<usize>> {
    loop {
        let n = session.writer().write(buf)?;
        if n > 0 || buf.is_empty() {
            // Sent now if the socket takes it; the rest goes with the next
            // write or flush.
            flush_ciphertext(tcp, session)?;
            return Poll::Ready(Ok(n));
        }
        // rustls's send buffer is full: wait for the socket to take some.
        ready!(poll_flush_tls(tcp, session, cx))?;
    }
}

/// The connection's session over its socket, borrowed (MONITOR mode).
pub(crate) struct TlsIo<'a> {
    pub(crate) tcp: &'a TcpStream,
    pub(crate) session: &'a mut ServerConnection,
}

impl AsyncRead for TlsIo<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        poll_read_tls(this.tcp, this.session, cx, buf)
    }
}

impl AsyncWrite for TlsIo<'_> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        poll_write_tls(this.tcp, this.session, cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        poll_flush_tls(this.tcp, this.session, cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

/// The connection's session and socket, owned (a replica's feed after
/// PSYNC, which reads ACKs and writes the stream from two tasks through
/// `tokio::io::split`).
pub struct TlsStream {
    tcp: TcpStream,
    session: Box<ServerConnection>,
}

impl TlsStream {
    pub(crate) fn new(tcp: TcpStream, session: Box<ServerConnection>) -> TlsStream {
        TlsStream { tcp, session }
    }
}

impl AsyncRead for TlsStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        poll_read_tls(&this.tcp, &mut this.session, cx, buf)
    }
}

impl AsyncWrite for TlsStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        poll_write_tls(&this.tcp, &mut this.session, cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        poll_flush_tls(&this.tcp, &mut this.session, cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.session.send_close_notify();
        ready!(poll_flush_tls(&this.tcp, &mut this.session, cx))?;
        Pin::new(&mut this.tcp).poll_shutdown(cx)
    }
}
