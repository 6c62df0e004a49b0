//! Replies too large to hold: [`read_streamed`] reads an aggregate of bulk
//! strings element by element as it arrives, [`skip_reply`] drops one
//! whole reply from a buffered reader.

use crate::encode_request;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Reads one whole RESP reply and drops it.
pub fn skip_reply(reader: &mut impl BufRead) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("reply line");
    let count = |prefix: char| -> usize {
        line.trim_end()
            .strip_prefix(prefix)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    match line.chars().next() {
        Some('$') => {
            let mut body = vec![0; count('$') + 2];
            reader.read_exact(&mut body).expect("bulk body");
        }
        Some(c @ ('*' | '~' | '>')) => (0..count(c)).for_each(|_| skip_reply(reader)),
        Some('%') => (0..2 * count('%')).for_each(|_| skip_reply(reader)),
        _ => {}
    }
}

/// Sends `args` on a fresh connection (after `HELLO 3` when `resp3`) and
/// reads its reply, an aggregate of bulk strings headed by `header` (`*`,
/// `~`, `%`...), element by element as it streams in, without keeping it:
/// `each(n, element)` sees every element. Returns the header's count.
pub fn read_streamed(
    port: u16,
    resp3: bool,
    args: &[&[u8]],
    header: char,
    mut each: impl FnMut(usize, &[u8]),
) -> usize {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    if resp3 {
        stream
            .write_all(&encode_request(&[b"HELLO", b"3"]))
            .expect("send");
        skip_reply(&mut reader);
    }
    stream.write_all(&encode_request(args)).expect("send");
    let mut line = String::new();
    reader.read_line(&mut line).expect("header");
    let count: usize = line
        .trim_end()
        .strip_prefix(header)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("reply header {line:?}"));
    let elements = if header == '%' { 2 * count } else { count };
    let mut body = Vec::new();
    for n in 0..elements {
        line.clear();
        reader.read_line(&mut line).expect("bulk header");
        let len: usize = line
            .trim_end()
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("element {n}: {line:?}"));
        body.resize(len + 2, 0);
        reader.read_exact(&mut body).expect("bulk body");
        each(n, &body[..len]);
    }
    count
}
