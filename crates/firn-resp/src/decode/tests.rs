//! Decoder tests. Every expected error text and every "waits for more" /
//! "consumed unchecked" behaviour marked VERIFIED below was observed on
//! redis-server 7.0.15 by sending the same raw bytes over a socket
//! (reply text, and whether the connection was closed).

use super::*;

/// Decodes requests until the buffer needs more bytes or an error occurs.
fn decode_all_with(
    input: &[u8],
    limits: &Limits,
    authenticated: bool,
) -> Result<(Vec<Vec<Bytes>>, usize), ProtocolError> {
    let mut buf = BytesMut::from(input);
    let mut requests = Vec::new();
    while let Some(args) = decode_request(&mut buf, limits, authenticated)? {
        requests.push(args);
    }
    Ok((requests, buf.len()))
}

fn decode_all(input: &[u8]) -> Result<Vec<Vec<Bytes>>, ProtocolError> {
    decode_all_with(input, &Limits::default(), true).map(|(requests, _)| requests)
}

fn one(input: &[u8]) -> Vec<Vec<u8>> {
    let requests = decode_all(input).unwrap();
    assert_eq!(requests.len(), 1, "{:?}", String::from_utf8_lossy(input));
    requests[0].iter().map(|a| a.to_vec()).collect()
}

fn words(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn error_of(input: &[u8]) -> ProtocolError {
    decode_all(input).unwrap_err()
}

/// Asserts that `input` is an incomplete request: nothing decoded, nothing
/// consumed.
fn waits(input: &[u8]) {
    let mut buf = BytesMut::from(input);
    assert_eq!(
        decode_request(&mut buf, &Limits::default(), true),
        Ok(None),
        "{:?}",
        String::from_utf8_lossy(&input[..input.len().min(60)])
    );
    assert_eq!(buf.len(), input.len());
}

#[test]
fn multibulk_requests_and_pipelines() {
    let requests = decode_all(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n").unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], vec![&b"GET"[..], b"k"]);
    assert_eq!(requests[1], vec![&b"PING"[..]]);
    assert_eq!(one(b"*1\r\n$0\r\n\r\n"), vec![Vec::<u8>::new()]);
    // Payloads are binary: CR, LF and NUL inside are data.
    assert_eq!(
        one(b"*1\r\n$5\r\n\r\n\0\r\n\r\n"),
        vec![b"\r\n\0\r\n".to_vec()]
    );
}

#[test]
fn empty_requests_are_skipped_requests() {
    // VERIFIED: "*-5\r\nPING\r\n" and "*0\r\nPING\r\n" answer one PONG;
    // "\r\nPING\r\n" and "\nPING\n" too.
    for input in [
        &b"*0\r\nPING\r\n"[..],
        b"*-1\r\nPING\r\n",
        b"*-5\r\nPING\r\n",
        b"\r\nPING\r\n",
        b"\nPING\n",
        b"   \t \r\nPING\r\n",
    ] {
        let requests = decode_all(input).unwrap();
        assert_eq!(requests.len(), 2, "{input:?}");
        assert!(requests[0].is_empty());
        assert_eq!(requests[1], vec![&b"PING"[..]]);
    }
}

#[test]
fn arguments_are_slices_of_the_input() {
    let mut buf = BytesMut::from(&b"*2\r\n$3\r\nSET\r\n$5\r\nvalue\r\nPING a\r\n"[..]);
    let range = buf.as_ptr() as usize..buf.as_ptr() as usize + buf.len();
    let multibulk = decode_request(&mut buf, &Limits::default(), true)
        .unwrap()
        .unwrap();
    let inline = decode_request(&mut buf, &Limits::default(), true)
        .unwrap()
        .unwrap();
    for arg in multibulk.iter().chain(&inline) {
        assert!(
            range.contains(&(arg.as_ptr() as usize)),
            "{arg:?} was copied"
        );
    }
    assert_eq!(inline, vec![&b"PING"[..], b"a"]);
}

/// VERIFIED: the two bytes after a payload, and the byte after a header's
/// '\r', are skipped without being checked.
#[test]
fn bytes_after_payloads_and_header_cr_are_not_checked() {
    let requests = decode_all(b"*1\r\n$4\r\nPINGxyPING\r\n").unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], vec![&b"PING"[..]]);
    assert_eq!(requests[1], vec![&b"PING"[..]]);
    assert_eq!(one(b"*1\rx$4\rxPING\r\n"), words(&["PING"]));
    // The two bytes must still be there before the request is complete.
    waits(b"*1\r\n$4\r\nPINGx");
    waits(b"*1\r\n$4\r\nPING");
}

#[test]
fn incomplete_headers_wait() {
    // VERIFIED: all of these wait silently.
    for input in [
        &b"*"[..],
        b"*1",
        b"*1\r",
        b"*1\r\n",
        b"*1\r\n$",
        b"*1\r\n$4",
        b"*1\r\n$4\r",
        b"*1\r\n$4\r\n",
        b"*1\r\n$4\r\nPI",
        b"*1\r\n:",
        b"PING",
        b"PING\r",
        b"*1048577\r\n",
        b"*2147483647\r\n",
        b"*1\r\n$536870912\r\n",
    ] {
        waits(input);
    }
}

#[test]
fn every_split_point_waits_then_decodes_the_same() {
    let samples: [&[u8]; 7] = [
        b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n",
        b"*1\r\n$0\r\n\r\n",
        b"*2\r\n$4\r\nECHO\r\n$20\r\n01234567890123456789\r\n",
        b"SET \"a b\" 'c d' plain\r\n",
        b"ECHO \"\\x41\\n\" x\n",
        b"*0\r\n",
        b"\r\n",
    ];
    for sample in samples {
        let whole = decode_all(sample).unwrap();
        assert_eq!(whole.len(), 1);
        for split in 0..sample.len() {
            // Stateless: nothing is consumed until the request is whole.
            let mut buf = BytesMut::from(&sample[..split]);
            assert_eq!(
                decode_request(&mut buf, &Limits::default(), true),
                Ok(None),
                "split {split} of {:?}",
                String::from_utf8_lossy(sample)
            );
            assert_eq!(buf.len(), split, "partial input must stay in the buffer");
            buf.extend_from_slice(&sample[split..]);
            let got = decode_request(&mut buf, &Limits::default(), true);
            assert_eq!(got, Ok(Some(whole[0].clone())), "split {split}");
            assert!(buf.is_empty());

            // Stateful: the same, remembering its progress.
            let mut decoder = RequestDecoder::new();
            let mut buf = BytesMut::from(&sample[..split]);
            assert_eq!(decoder.decode(&mut buf, &Limits::default(), true), Ok(None));
            assert_eq!(buf.len(), split);
            buf.extend_from_slice(&sample[split..]);
            let got = decoder.decode(&mut buf, &Limits::default(), true);
            assert_eq!(got, Ok(Some(whole[0].clone())), "split {split}");
        }
    }
}

/// Feeds `input` one byte at a time to one stateful decoder and compares
/// with decoding it whole: same requests, same error.
fn byte_by_byte(input: &[u8]) -> Result<Vec<Vec<Bytes>>, ProtocolError> {
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::new();
    let mut requests = Vec::new();
    for &byte in input {
        buf.extend_from_slice(&[byte]);
        while let Some(args) = decoder.decode(&mut buf, &Limits::default(), true)? {
            requests.push(args);
        }
    }
    Ok(requests)
}

#[test]
fn stateful_decoder_agrees_with_whole_buffer_decoding() {
    let inputs: [&[u8]; 9] = [
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\nPING\r\n*-1\r\n\r\n",
        b"ECHO 'it\\'s' \"\\x41\"\r\n*1\r\n$3\r\nfoo\r\n",
        b"*2\r\n$3\r\nGET\r\n:3\r\n",
        b"*2\r\n$3\r\nGET\r\n$-3\r\n",
        b"*1\r\n$4\r\nPINGxy*1\rx$4\rxPING\r\n",
        b"*3000000000\r\n",
        b"ECHO \"a\r\n",
        b"*1\r\n$1\0\r\n",
        b"*1\r\n$4\r\nPI",
    ];
    for input in inputs {
        assert_eq!(
            byte_by_byte(input),
            decode_all(input),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn protocol_errors_use_redis_texts() {
    // VERIFIED, each reply followed by the connection being closed.
    let cases: [(&[u8], &[u8]); 13] = [
        (b"*abc\r\n", b"Protocol error: invalid multibulk length"),
        (
            b"*2147483648\r\n",
            b"Protocol error: invalid multibulk length",
        ),
        (b"*1\r\n$abc\r\n", b"Protocol error: invalid bulk length"),
        (b"*1\r\n$00\r\n\r\n", b"Protocol error: invalid bulk length"),
        (b"*1\r\n$-0\r\n\r\n", b"Protocol error: invalid bulk length"),
        (
            b"*1\r\n$536870913\r\n",
            b"Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$9223372036854775807\r\n",
            b"Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$18446744073709551616\r\n",
            b"Protocol error: invalid bulk length",
        ),
        (b"*1\r\n:1\r\n", b"Protocol error: expected '$', got ':'"),
        (b"*1\r\n\r\n", b"Protocol error: expected '$', got ' '"),
        (
            b"*1\r\n\xff1\r\n",
            b"Protocol error: expected '$', got '\xff'",
        ),
        (
            b"SET \"a\r\n",
            b"Protocol error: unbalanced quotes in request",
        ),
        (
            b"SET \"a\"b\r\n",
            b"Protocol error: unbalanced quotes in request",
        ),
    ];
    for (input, text) in cases {
        let error = error_of(input);
        let mut expected = b"-ERR ".to_vec();
        expected.extend_from_slice(text);
        expected.extend_from_slice(b"\r\n");
        let mut wire = BytesMut::new();
        error.to_reply().encode(&mut wire, crate::Protocol::Resp2);
        assert_eq!(
            String::from_utf8_lossy(&wire),
            String::from_utf8_lossy(&expected),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        if text.is_ascii() {
            assert_eq!(error.to_string().as_bytes(), text);
        }
    }
    // Not sent raw to Redis but derived from the same parser rules.
    assert_eq!(
        error_of(b"*1\r\n$+4\r\nPING\r\n"),
        ProtocolError::InvalidBulkLength
    );
    assert_eq!(error_of(b"*+1\r\n"), ProtocolError::InvalidMultibulkLength);
    assert_eq!(error_of(b"*01\r\n"), ProtocolError::InvalidMultibulkLength);
    assert_eq!(error_of(b"* 1\r\n"), ProtocolError::InvalidMultibulkLength);
    assert_eq!(error_of(b"*\r\n"), ProtocolError::InvalidMultibulkLength);
    assert_eq!(error_of(b"*1\r\n$\r\n"), ProtocolError::InvalidBulkLength);
    assert_eq!(error_of(b"*1\r\n$-1\r\n"), ProtocolError::InvalidBulkLength);
    assert_eq!(
        error_of(b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n"),
        ProtocolError::ExpectedDollar(b'f')
    );
    assert_eq!(
        ProtocolError::ExpectedDollar(b'\n').to_string(),
        "Protocol error: expected '$', got ' '"
    );
}

#[test]
fn requests_before_an_error_are_still_decoded() {
    let mut buf = BytesMut::from(&b"PING\r\n*1\r\n$4\r\nPING\r\n*x\r\n"[..]);
    let limits = Limits::default();
    assert!(decode_request(&mut buf, &limits, true).unwrap().is_some());
    assert!(decode_request(&mut buf, &limits, true).unwrap().is_some());
    assert_eq!(
        decode_request(&mut buf, &limits, true),
        Err(ProtocolError::InvalidMultibulkLength)
    );
}

/// VERIFIED: 65536 bytes without a terminator wait, 65537 are "too big";
/// for `$` lines the count starts at the `$`.
#[test]
fn too_big_lines() {
    waits(&[b'a'; 65536]);
    assert_eq!(error_of(&[b'a'; 65537]), ProtocolError::TooBigInline);

    let mut count = vec![b'*'];
    count.extend_from_slice(&[b'1'; 65535]);
    waits(&count);
    count.push(b'1');
    assert_eq!(error_of(&count), ProtocolError::TooBigMbulkCount);

    let mut bulk = b"*1\r\n$".to_vec();
    bulk.extend_from_slice(&[b'1'; 65535]);
    waits(&bulk);
    bulk.push(b'1');
    assert_eq!(error_of(&bulk), ProtocolError::TooBigBulkCount);

    // VERIFIED: once the '\r' is there, Redis only waits for the next byte.
    let mut count_with_cr = vec![b'*'];
    count_with_cr.extend_from_slice(&[b'1'; 65535]);
    count_with_cr.push(b'\r');
    waits(&count_with_cr);
    count_with_cr.push(b'\n');
    assert_eq!(
        error_of(&count_with_cr),
        ProtocolError::InvalidMultibulkLength
    );

    // An overlong line that fits the limit is still an ordinary request.
    let mut inline = vec![b'x'; 65530];
    inline.extend_from_slice(b" y\r\n");
    assert_eq!(one(&inline).len(), 2);
    // VERIFIED: a long inline line ending in a bad quote is "unbalanced".
    let mut quote = vec![b'x'; 65530];
    quote.extend_from_slice(b"\"\r\n");
    assert_eq!(error_of(&quote), ProtocolError::UnbalancedQuotes);
}

/// VERIFIED: Redis finds line ends with strchr, which stops at NUL: such a
/// line waits until it is "too big".
#[test]
fn nul_before_a_line_end_blocks_the_line() {
    waits(b"PI\0NG\r\n");
    waits(b"\0\n");
    waits(b"*1\0\r\n");
    waits(b"*1\r\n$4\0\r\nPING\r\n");

    let mut inline = b"PI\0NG\r\n".to_vec();
    inline.extend(b"PING\r\n".repeat(12000));
    assert_eq!(error_of(&inline), ProtocolError::TooBigInline);
    let mut count = b"*1\0\r\n".to_vec();
    count.extend(vec![b'x'; 70000]);
    assert_eq!(error_of(&count), ProtocolError::TooBigMbulkCount);
    let mut bulk = b"*1\r\n$4\0\r\n".to_vec();
    bulk.extend(vec![b'x'; 70000]);
    assert_eq!(error_of(&bulk), ProtocolError::TooBigBulkCount);

    // The stateful decoder gets there too, and does not rescan.
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::from(&b"ab\0c"[..]);
    assert_eq!(decoder.decode(&mut buf, &Limits::default(), true), Ok(None));
    assert_eq!(decoder.search_from, 2);
    buf.extend_from_slice(&[b'\n'; 65533]);
    assert_eq!(
        decoder.decode(&mut buf, &Limits::default(), true),
        Err(ProtocolError::TooBigInline)
    );
}

#[test]
fn configured_limits() {
    let limits = Limits {
        max_bulk_len: 10,
        max_multibulk_len: 3,
        max_inline_len: 16,
    };
    let run = |input: &[u8]| decode_all_with(input, &limits, true).map(|(r, _)| r.len());
    assert_eq!(run(b"*1\r\n$10\r\n0123456789\r\n"), Ok(1));
    assert_eq!(run(b"*1\r\n$11\r\n"), Err(ProtocolError::InvalidBulkLength));
    assert_eq!(run(b"*3\r\n"), Ok(0));
    assert_eq!(run(b"*4\r\n"), Err(ProtocolError::InvalidMultibulkLength));
    assert_eq!(run(&[b'a'; 16]), Ok(0));
    assert_eq!(run(&[b'a'; 17]), Err(ProtocolError::TooBigInline));
    assert_eq!(run(b"*1\r\n$000000000000000"), Ok(0));
    assert_eq!(
        run(b"*1\r\n$0000000000000000"),
        Err(ProtocolError::TooBigBulkCount)
    );
}

/// VERIFIED with `requirepass`: "*11" and "$16385" are errors before AUTH,
/// "*10" and "$16384" wait for more.
#[test]
fn unauthenticated_clients_have_small_limits() {
    let run = |input: &[u8], authenticated| {
        decode_all_with(input, &Limits::default(), authenticated).map(|(r, left)| (r.len(), left))
    };
    assert_eq!(
        run(b"*11\r\n", false),
        Err(ProtocolError::UnauthenticatedMultibulk)
    );
    assert_eq!(
        ProtocolError::UnauthenticatedMultibulk.to_string(),
        "Protocol error: unauthenticated multibulk length"
    );
    assert_eq!(run(b"*10\r\n", false), Ok((0, 5)));
    assert_eq!(run(b"*11\r\n", true), Ok((0, 5)));
    assert_eq!(
        run(b"*1\r\n$16385\r\n", false),
        Err(ProtocolError::UnauthenticatedBulk)
    );
    assert_eq!(
        ProtocolError::UnauthenticatedBulk.to_string(),
        "Protocol error: unauthenticated bulk length"
    );
    assert_eq!(run(b"*1\r\n$16384\r\n", false), Ok((0, 12)));
    assert_eq!(run(b"*1\r\n$16385\r\n", true), Ok((0, 12)));
    // The ordinary checks come first, and negative counts are fine.
    assert_eq!(
        run(b"*2147483648\r\n", false),
        Err(ProtocolError::InvalidMultibulkLength)
    );
    assert_eq!(run(b"*-20\r\n", false), Ok((1, 0)));
}

#[test]
fn inline_quoting_follows_sdssplitargs() {
    // VERIFIED one argument at a time with ECHO.
    let cases: [(&[u8], &[&[u8]]); 22] = [
        (b"ECHO \"a\\\"b\"", &[b"ECHO", b"a\"b"]),
        (b"ECHO '\\x41'", &[b"ECHO", b"\\x41"]),
        (b"ECHO 'a\\nb'", &[b"ECHO", b"a\\nb"]),
        (b"ECHO \"\\x4\"", &[b"ECHO", b"x4"]),
        (b"ECHO \"\\x4g\"", &[b"ECHO", b"x4g"]),
        (b"ECHO \"\\xZZ\"", &[b"ECHO", b"xZZ"]),
        (b"ECHO \"\\xfF\"", &[b"ECHO", b"\xff"]),
        (b"ECHO 'a\\'b'", &[b"ECHO", b"a'b"]),
        (b"ECHO \"a\"\x0c", &[b"ECHO", b"a"]),
        (b"ECHO 'a'\x0b", &[b"ECHO", b"a"]),
        (b"ECHO a'b c'", &[b"ECHO", b"ab c"]),
        (b"ECHO a\"b c\"", &[b"ECHO", b"ab c"]),
        (b"ECHO \"\xff\\\xff\"", &[b"ECHO", b"\xff\xff"]),
        (b"ECHO \"a\\\\\"", &[b"ECHO", b"a\\"]),
        (b"ECHO \"\\a\\b\\t\\z\"", &[b"ECHO", b"\x07\x08\tz"]),
        (b"ECHO \"\\n\\r\"", &[b"ECHO", b"\n\r"]),
        (b"ECHO a\x0bb", &[b"ECHO", b"a\x0bb"]),
        (b"ECHO \x0b a", &[b"ECHO", b"a"]),
        (b"  ECHO    x  ", &[b"ECHO", b"x"]),
        (b"ECHO x\r", &[b"ECHO", b"x"]),
        (b"ECHO x\t", &[b"ECHO", b"x"]),
        (b"ECHO \"\" ''", &[b"ECHO", b"", b""]),
    ];
    for (line, expected) in cases {
        let expected: Vec<Vec<u8>> = expected.iter().map(|a| a.to_vec()).collect();
        for ending in [&b"\r\n"[..], b"\n"] {
            let mut input = line.to_vec();
            input.extend_from_slice(ending);
            assert_eq!(one(&input), expected, "{:?}", String::from_utf8_lossy(line));
        }
    }
    // VERIFIED: unbalanced.
    for line in [
        &b"ECHO 'a\\\\'"[..],
        b"ECHO \"\\",
        b"ECHO '\\'",
        b"ECHO \"\\\"",
        b"ECHO \"a\"\"b\"",
        b"GET 'a",
        b"GET 'a'b",
    ] {
        let mut input = line.to_vec();
        input.extend_from_slice(b"\r\n");
        assert_eq!(
            error_of(&input),
            ProtocolError::UnbalancedQuotes,
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }
}

/// Multibulk counts and bulk lengths are read with `string2ll`
/// (`firn_prims`, where its own cases live): any text it refuses is an
/// invalid length, as in Redis.
#[test]
fn lengths_are_redis_string2ll() {
    for text in [
        "-0",
        "00",
        "01",
        "+1",
        " 1",
        "1 ",
        "-",
        "1a",
        "9223372036854775808",
        "000000000000000000001",
    ] {
        let count = format!("*{text}\r\n");
        assert_eq!(
            error_of(count.as_bytes()),
            ProtocolError::InvalidMultibulkLength,
            "{count:?}"
        );
        let length = format!("*1\r\n${text}\r\n");
        assert_eq!(
            error_of(length.as_bytes()),
            ProtocolError::InvalidBulkLength,
            "{length:?}"
        );
    }
    assert_eq!(one(b"*1\r\n$1\r\nx\r\n"), words(&["x"]));
}

/// A huge request arriving in small pieces: the stateful decoder reads each
/// header once, the payload not at all until it is complete.
#[test]
fn stateful_decoder_keeps_its_progress() {
    let args = 50_000;
    let mut request = format!("*{args}\r\n").into_bytes();
    for i in 0..args {
        let arg = format!("arg{i}");
        request.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
    }
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::new();
    let mut decoded = None;
    let mut last_pos = 0;
    for chunk in request.chunks(7) {
        buf.extend_from_slice(chunk);
        if let Some(args) = decoder.decode(&mut buf, &Limits::default(), true).unwrap() {
            decoded = Some(args);
            break;
        }
        assert!(decoder.pos >= last_pos, "progress is kept");
        last_pos = decoder.pos;
        // Everything before `pos` is never looked at again.
        assert!(decoder.search_from >= decoder.pos);
    }
    let decoded = decoded.unwrap();
    assert_eq!(decoded.len(), args);
    assert_eq!(decoded[12345], &b"arg12345"[..]);
    assert!(buf.is_empty());

    // One big bulk: the decoder knows how much it needs.
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::from(&b"*2\r\n$3\r\nSET\r\n$1000000\r\nabc"[..]);
    assert_eq!(decoder.decode(&mut buf, &Limits::default(), true), Ok(None));
    assert_eq!(
        decoder.min_buffer_len(),
        Some(buf.len() - 3 + 1_000_000 + 2)
    );
    buf.extend_from_slice(&vec![b'v'; 1_000_000 - 3]);
    assert_eq!(decoder.decode(&mut buf, &Limits::default(), true), Ok(None));
    buf.extend_from_slice(b"\r\n");
    let args = decoder
        .decode(&mut buf, &Limits::default(), true)
        .unwrap()
        .unwrap();
    assert_eq!(args[1].len(), 1_000_000);
    assert_eq!(decoder.min_buffer_len(), None);
}

#[test]
fn stateful_decoder_survives_a_buffer_changed_behind_its_back() {
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1"[..]);
    assert_eq!(decoder.decode(&mut buf, &Limits::default(), true), Ok(None));
    let mut other = BytesMut::from(&b"PING\r\n"[..]);
    assert_eq!(
        decoder.decode(&mut other, &Limits::default(), true),
        Ok(Some(vec![Bytes::from_static(b"PING")]))
    );
    // A new buffer of the same length is not detected, but never panics.
    let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1"[..]);
    assert_eq!(decoder.decode(&mut buf, &Limits::default(), true), Ok(None));
    let mut same_len = BytesMut::from(&b"*1\r\n$1\r\nx\r\n$1\r\nk\r\n"[..]);
    let _ = decoder.decode(&mut same_len, &Limits::default(), true);
}

#[test]
fn complete_prefix_len_covers_finished_arguments_only() {
    let mut decoder = RequestDecoder::new();
    let limits = Limits::default();
    assert_eq!(decoder.complete_prefix_len(), 0);
    // An inline request in progress has no complete arguments.
    let mut buf = BytesMut::from(&b"SET k v"[..]);
    assert_eq!(decoder.decode(&mut buf, &limits, true), Ok(None));
    assert_eq!(decoder.complete_prefix_len(), 0);
    // Two arguments and the third header are complete; its payload is not.
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nval"[..]);
    assert_eq!(decoder.decode(&mut buf, &limits, true), Ok(None));
    assert_eq!(decoder.complete_prefix_len(), 24);
    assert_eq!(buf.len() - decoder.complete_prefix_len(), 3);
    buf.extend_from_slice(b"ue\r\n");
    assert!(decoder.decode(&mut buf, &limits, true).unwrap().is_some());
    assert_eq!(decoder.complete_prefix_len(), 0);
}

fn encoded(reply: &Reply, protocol: crate::Protocol) -> Vec<u8> {
    let mut out = BytesMut::new();
    reply.encode(&mut out, protocol);
    out.to_vec()
}

#[test]
fn protocol_errors_become_error_replies() {
    let reply = ProtocolError::ExpectedDollar(0xff).to_reply();
    assert_eq!(
        encoded(&reply, crate::Protocol::Resp2),
        b"-ERR Protocol error: expected '$', got '\xff'\r\n"
    );
    let reply = ProtocolError::ExpectedDollar(b'\n').to_reply();
    assert_eq!(
        encoded(&reply, crate::Protocol::Resp3),
        b"-ERR Protocol error: expected '$', got ' '\r\n"
    );
    let reply = ProtocolError::InvalidBulkLength.to_reply();
    assert_eq!(
        encoded(&reply, crate::Protocol::Resp2),
        b"-ERR Protocol error: invalid bulk length\r\n"
    );
}
