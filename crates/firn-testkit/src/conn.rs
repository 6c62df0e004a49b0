//! [`Conn`], a raw RESP connection to a server under test: it writes
//! multibulk requests or any raw bytes and reads exactly one reply at a
//! time, keeping the reply's bytes next to its parsed tree; it can also
//! wait for what a server does unprompted (close, stay silent, push).

use crate::reply::escape;
use crate::resp::{encode_request, parse_reply, Parse};
use crate::R;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Read timeout of every test connection.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a reply could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The server closed the connection (EOF or reset).
    Closed,
    Timeout,
    Io(std::io::Error),
    /// The server sent bytes that are not RESP.
    Invalid(String),
}

/// What happened on a connection while waiting (see `Conn::wait_event`).
#[derive(Debug, PartialEq)]
pub enum Event {
    Silent,
    Closed,
    Data(Vec<u8>),
    Failed(String),
}

impl Event {
    /// The event as a reply, for failure messages.
    pub(crate) fn as_reply(&self) -> R {
        R::Simple(match self {
            Event::Silent => "<silent, still open>".into(),
            Event::Closed => "<closed>".into(),
            Event::Data(d) => format!("<sent \"{}\">", escape(d, 300)),
            Event::Failed(e) => format!("<read failed: {e}>"),
        })
    }
}

/// A raw RESP connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub fn connect(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("connect to 127.0.0.1:{port}: {e}"));
        stream
            .set_read_timeout(Some(READ_TIMEOUT))
            .expect("set_read_timeout");
        stream.set_nodelay(true).expect("set_nodelay");
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, args: &[&[u8]]) {
        self.send_raw(&encode_request(args));
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("write to server: {e}"));
    }

    /// Like `send_raw` but reports a failed write (the server may already
    /// have closed the connection).
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads exactly one reply: its raw bytes and its parsed tree.
    pub fn try_read_reply(&mut self) -> Result<(Vec<u8>, R), ReadError> {
        loop {
            match parse_reply(&self.buf) {
                Ok((tree, used)) => {
                    let raw: Vec<u8> = self.buf.drain(..used).collect();
                    return Ok((raw, tree));
                }
                Err(Parse::Invalid(why)) => {
                    return Err(ReadError::Invalid(format!(
                        "{why} in {}",
                        escape(&self.buf, 200)
                    )))
                }
                Err(Parse::Incomplete) => self.fill()?,
            }
        }
    }

    fn fill(&mut self) -> Result<(), ReadError> {
        let mut chunk = [0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(ReadError::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Err(ReadError::Timeout)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset
                        | ErrorKind::ConnectionAborted
                        | ErrorKind::BrokenPipe
                ) =>
            {
                Err(ReadError::Closed)
            }
            Err(e) => Err(ReadError::Io(e)),
        }
    }

    pub fn read_reply(&mut self) -> (Vec<u8>, R) {
        self.try_read_reply()
            .unwrap_or_else(|e| panic!("reading a reply: {e:?}"))
    }

    /// Sends a command and returns its parsed reply.
    pub fn cmd(&mut self, args: &[&str]) -> R {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send(&args);
        self.read_reply().1
    }

    /// What the server does within `wait`: nothing, close the connection,
    /// or send bytes (kept in the buffer for the next read).
    pub fn wait_event(&mut self, wait: Duration) -> Event {
        if !self.buf.is_empty() {
            return Event::Data(self.buf.clone());
        }
        self.stream
            .set_read_timeout(Some(wait))
            .expect("set_read_timeout");
        let result = self.fill();
        self.stream
            .set_read_timeout(Some(READ_TIMEOUT))
            .expect("set_read_timeout");
        match result {
            Ok(()) => Event::Data(self.buf.clone()),
            Err(ReadError::Closed) => Event::Closed,
            Err(ReadError::Timeout) => Event::Silent,
            Err(e) => Event::Failed(format!("{e:?}")),
        }
    }

    /// True if the server closes the connection (within 5 s) without
    /// sending anything more.
    pub fn is_closed(&mut self) -> bool {
        self.wait_event(Duration::from_secs(5)) == Event::Closed
    }

    /// True if nothing arrives within `wait` and the connection stays open.
    pub fn silent_for(&mut self, wait: Duration) -> bool {
        self.wait_event(wait) == Event::Silent
    }

    /// Half-closes: the server sees EOF but can still send.
    pub fn shutdown_write(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }

    /// Closes both directions now.
    pub fn shutdown(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
