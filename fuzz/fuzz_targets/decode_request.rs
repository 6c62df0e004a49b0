//! Feeds arbitrary bytes to the request decoder and checks, besides "never
//! panics":
//! - the stateless `decode_request`, fed the input in two parts, decodes
//!   what it decodes from the whole input (unless the first part alone hit
//!   a "too big" limit, which depends on timing in Redis too);
//! - a `RequestDecoder` fed the input in small chunks agrees likewise;
//! - every decoded request, re-encoded with the reply encoder as an array of
//!   bulks, decodes back to the same arguments.
//!
//! Input layout: 2 bytes split point, 1 byte flags (bit 0: unauthenticated,
//! bit 1: tiny limits, bits 4-7: chunk size - 1), then the request bytes.
#![no_main]

use bytes::{Bytes, BytesMut};
use firn_resp::{decode_request, Limits, Protocol, ProtocolError, Reply, RequestDecoder};
use libfuzzer_sys::fuzz_target;

/// Requests decoded until the decoder wants more bytes, then how it ended:
/// `Ok(bytes left in the buffer)` or the error.
#[derive(Debug, PartialEq)]
struct Outcome {
    requests: Vec<Vec<Bytes>>,
    end: Result<usize, ProtocolError>,
}

fn is_too_big(outcome: &Outcome) -> bool {
    matches!(
        outcome.end,
        Err(ProtocolError::TooBigInline
            | ProtocolError::TooBigMbulkCount
            | ProtocolError::TooBigBulkCount)
    )
}

/// Feeds `parts` one after the other; `decode` is called until it returns
/// `None` after each part.
fn run(
    parts: &[&[u8]],
    mut decode: impl FnMut(&mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtocolError>,
) -> Outcome {
    let mut buf = BytesMut::new();
    let mut requests = Vec::new();
    for part in parts {
        buf.extend_from_slice(part);
        loop {
            match decode(&mut buf) {
                Ok(Some(args)) => requests.push(args),
                Ok(None) => break,
                Err(error) => {
                    // Error texts and replies must be producible too.
                    let _ = error.to_string();
                    let mut out = BytesMut::new();
                    error.to_reply().encode(&mut out, Protocol::Resp2);
                    return Outcome {
                        requests,
                        end: Err(error),
                    };
                }
            }
        }
    }
    Outcome {
        requests,
        end: Ok(buf.len()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((header, input)) = data.split_first_chunk::<3>() else {
        return;
    };
    let split = usize::from(u16::from_le_bytes([header[0], header[1]])) % (input.len() + 1);
    let flags = header[2];
    let authenticated = flags & 1 == 0;
    let limits = if flags & 2 != 0 {
        Limits {
            max_bulk_len: 20,
            max_multibulk_len: 5,
            max_inline_len: 12,
        }
    } else {
        Limits::default()
    };
    let chunk = usize::from(flags >> 4) + 1;

    let stateless = |buf: &mut BytesMut| decode_request(buf, &limits, authenticated);
    let whole = run(&[input], stateless);
    let (first, second) = input.split_at(split);
    let two_parts = run(&[first, second], stateless);
    if !is_too_big(&two_parts) {
        assert_eq!(two_parts, whole, "two parts at {split}");
    }

    let mut decoder = RequestDecoder::new();
    let chunks: Vec<&[u8]> = input.chunks(chunk).collect();
    let chunked = run(&chunks, |buf| decoder.decode(buf, &limits, authenticated));
    if !is_too_big(&chunked) {
        assert_eq!(chunked, whole, "chunks of {chunk}");
    }

    for args in whole.requests.iter().filter(|args| !args.is_empty()) {
        let mut wire = BytesMut::new();
        Reply::bulks(args.iter().cloned()).encode(&mut wire, Protocol::Resp2);
        let again = decode_request(&mut wire, &Limits::default(), true);
        assert_eq!(again, Ok(Some(args.clone())));
        assert!(wire.is_empty());
    }
});
