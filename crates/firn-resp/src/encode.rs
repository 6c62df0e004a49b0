//! Reply encoding for RESP2 and RESP3. A `Reply` is built once; `encode`
//! downgrades RESP3-only types for RESP2 clients exactly as Redis does
//! (maps flatten to arrays, doubles become bulk strings, booleans integers,
//! nulls `$-1`/`*-1`).

use bytes::{BufMut, Bytes, BytesMut};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Resp2,
    Resp3,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`
    Simple(Bytes),
    /// Full text without the leading '-', e.g. "ERR syntax error".
    Error(Bytes),
    Integer(i64),
    Bulk(Bytes),
    /// RESP2 `$-1`, RESP3 `_`.
    Null,
    /// RESP2 `*-1`, RESP3 `_`.
    NullArray,
    Array(Vec<Reply>),
    /// RESP2: a flat array of 2n elements.
    Map(Vec<(Reply, Reply)>),
    /// RESP2: an array.
    Set(Vec<Reply>),
    /// RESP2: a bulk string formatted with `%.17g`.
    Double(f64),
    /// RESP2: `:1` / `:0`.
    Boolean(bool),
    /// RESP2: a bulk string.
    BigNumber(Bytes),
    /// RESP2: a bulk string of `text`.
    Verbatim {
        format: [u8; 3],
        text: Bytes,
    },
    /// RESP2: an array.
    Push(Vec<Reply>),
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Simple(Bytes::from_static(b"OK"))
    }

    pub fn simple(text: &'static str) -> Reply {
        Reply::Simple(Bytes::from_static(text.as_bytes()))
    }

    pub fn error(text: impl Into<String>) -> Reply {
        Reply::Error(Bytes::from(text.into()))
    }

    pub fn bulk(value: impl Into<Bytes>) -> Reply {
        Reply::Bulk(value.into())
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    pub fn encode(&self, out: &mut BytesMut, proto: Protocol) {
        let resp3 = proto == Protocol::Resp3;
        match self {
            Reply::Simple(s) => line(out, b'+', s),
            Reply::Error(e) => {
                out.put_u8(b'-');
                // Redis turns newlines inside error texts into spaces.
                out.extend(
                    e.iter()
                        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
                );
                out.put_slice(b"\r\n");
            }
            Reply::Integer(n) => header(out, b':', *n),
            Reply::Bulk(b) => bulk(out, b),
            Reply::Null if resp3 => out.put_slice(b"_\r\n"),
            Reply::Null => out.put_slice(b"$-1\r\n"),
            Reply::NullArray if resp3 => out.put_slice(b"_\r\n"),
            Reply::NullArray => out.put_slice(b"*-1\r\n"),
            Reply::Array(items) => aggregate(out, b'*', items, proto),
            Reply::Set(items) => aggregate(out, if resp3 { b'~' } else { b'*' }, items, proto),
            Reply::Push(items) => aggregate(out, if resp3 { b'>' } else { b'*' }, items, proto),
            Reply::Map(pairs) => {
                if resp3 {
                    header(out, b'%', pairs.len() as i64);
                } else {
                    header(out, b'*', 2 * pairs.len() as i64);
                }
                for (k, v) in pairs {
                    k.encode(out, proto);
                    v.encode(out, proto);
                }
            }
            Reply::Double(d) => {
                let text = format_double(*d);
                if resp3 {
                    line(out, b',', text.as_bytes());
                } else {
                    bulk(out, text.as_bytes());
                }
            }
            Reply::Boolean(b) if resp3 => out.put_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Reply::Boolean(b) => header(out, b':', *b as i64),
            Reply::BigNumber(n) if resp3 => line(out, b'(', n),
            Reply::BigNumber(n) => bulk(out, n),
            Reply::Verbatim { format, text } if resp3 => {
                header(out, b'=', text.len() as i64 + 4);
                out.put_slice(format);
                out.put_u8(b':');
                out.put_slice(text);
                out.put_slice(b"\r\n");
            }
            Reply::Verbatim { text, .. } => bulk(out, text),
        }
    }
}

fn line(out: &mut BytesMut, prefix: u8, body: &[u8]) {
    out.reserve(body.len() + 3);
    out.put_u8(prefix);
    out.put_slice(body);
    out.put_slice(b"\r\n");
}

fn header(out: &mut BytesMut, prefix: u8, n: i64) {
    let digits = itoa_buf(n);
    out.reserve(digits.len + 3);
    out.put_u8(prefix);
    out.put_slice(digits.as_slice());
    out.put_slice(b"\r\n");
}

fn bulk(out: &mut BytesMut, body: &[u8]) {
    header(out, b'$', body.len() as i64);
    out.reserve(body.len() + 2);
    out.put_slice(body);
    out.put_slice(b"\r\n");
}

fn aggregate(out: &mut BytesMut, prefix: u8, items: &[Reply], proto: Protocol) {
    header(out, prefix, items.len() as i64);
    for item in items {
        item.encode(out, proto);
    }
}

/// Decimal digits of an i64 without allocating (this runs for every
/// integer reply and every length header).
struct Digits {
    buf: [u8; 20],
    len: usize,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        &self.buf[20 - self.len..]
    }
}

fn itoa_buf(n: i64) -> Digits {
    let mut d = Digits {
        buf: [0; 20],
        len: 0,
    };
    let negative = n < 0;
    let mut v = n.unsigned_abs();
    loop {
        d.len += 1;
        d.buf[20 - d.len] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if negative {
        d.len += 1;
        d.buf[20 - d.len] = b'-';
    }
    d
}

/// Redis 7.0's double formatting: C's `%.17g`, with "inf"/"-inf" spelled
/// out (and "nan" for NaN).
pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // 17 significant digits, correctly rounded, as %.16e gives them.
    let sci = format!("{:.16e}", v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::with_capacity(26);
    if negative {
        out.push('-');
    }
    if (-4..17).contains(&exp) {
        // Fixed notation with 17 - 1 - exp decimals, trailing zeros removed.
        if exp >= 0 {
            let int_len = exp as usize + 1;
            out.push_str(&digits[..int_len]);
            let frac = digits[int_len..].trim_end_matches('0');
            if !frac.is_empty() {
                out.push('.');
                out.push_str(frac);
            }
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(digits.trim_end_matches('0'));
        }
    } else {
        let frac = digits[1..].trim_end_matches('0');
        out.push_str(&digits[..1]);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(r: &Reply, p: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        r.encode(&mut out, p);
        out.to_vec()
    }

    #[test]
    fn resp2_and_resp3_encodings() {
        use Protocol::*;
        assert_eq!(enc(&Reply::ok(), Resp2), b"+OK\r\n");
        assert_eq!(enc(&Reply::error("ERR a\r\nb"), Resp2), b"-ERR a  b\r\n");
        assert_eq!(enc(&Reply::Integer(-42), Resp2), b":-42\r\n");
        assert_eq!(
            enc(&Reply::Integer(i64::MIN), Resp2),
            b":-9223372036854775808\r\n"
        );
        assert_eq!(enc(&Reply::bulk("hi"), Resp2), b"$2\r\nhi\r\n");
        assert_eq!(enc(&Reply::Null, Resp2), b"$-1\r\n");
        assert_eq!(enc(&Reply::NullArray, Resp2), b"*-1\r\n");
        assert_eq!(enc(&Reply::Null, Resp3), b"_\r\n");
        let map = Reply::Map(vec![(Reply::bulk("a"), Reply::Integer(1))]);
        assert_eq!(enc(&map, Resp2), b"*2\r\n$1\r\na\r\n:1\r\n");
        assert_eq!(enc(&map, Resp3), b"%1\r\n$1\r\na\r\n:1\r\n");
        assert_eq!(
            enc(&Reply::Set(vec![Reply::Integer(1)]), Resp3),
            b"~1\r\n:1\r\n"
        );
        assert_eq!(enc(&Reply::Double(1.5), Resp2), b"$3\r\n1.5\r\n");
        assert_eq!(enc(&Reply::Double(f64::INFINITY), Resp3), b",inf\r\n");
        assert_eq!(enc(&Reply::Boolean(true), Resp2), b":1\r\n");
        assert_eq!(enc(&Reply::Boolean(false), Resp3), b"#f\r\n");
        let verbatim = Reply::Verbatim {
            format: *b"txt",
            text: Bytes::from_static(b"hi"),
        };
        assert_eq!(enc(&verbatim, Resp3), b"=6\r\ntxt:hi\r\n");
        assert_eq!(enc(&verbatim, Resp2), b"$2\r\nhi\r\n");
        assert_eq!(enc(&Reply::Push(vec![]), Resp3), b">0\r\n");
    }

    #[test]
    fn doubles_match_printf_17g() {
        // Expected values from C's printf("%.17g") (generated with Python's
        // %-formatting, which calls it), including random bit patterns.
        let cases: [(f64, &str); 78] = [
            (f64::from_bits(0x3ff8000000000000), "1.5"),
            (f64::from_bits(0x3fb999999999999a), "0.10000000000000001"),
            (f64::from_bits(0xbfb999999999999a), "-0.10000000000000001"),
            (f64::from_bits(0x4008000000000000), "3"),
            (f64::from_bits(0x4059000000000000), "100"),
            (f64::from_bits(0x4341c37937e08000), "10000000000000000"),
            (f64::from_bits(0x4376345785d8a000), "1e+17"),
            (f64::from_bits(0x4380a741a4627800), "1.5e+17"),
            (f64::from_bits(0x3f1a36e2eb1c432d), "0.0001"),
            (f64::from_bits(0x3ee4f8b588e368f1), "1.0000000000000001e-05"),
            (f64::from_bits(0x419d6f34547df3b6), "123456789.123"),
            (f64::from_bits(0x01a56e1fc2f8f359), "1e-300"),
            (
                f64::from_bits(0x7fefffffffffffff),
                "1.7976931348623157e+308",
            ),
            (f64::from_bits(0x3efa36e2eb1c432d), "2.5000000000000001e-05"),
            (
                f64::from_bits(0x0000000000000001),
                "4.9406564584124654e-324",
            ),
            (
                f64::from_bits(0x8010000000000000),
                "-2.2250738585072014e-308",
            ),
            (f64::from_bits(0x4345ee2a2eb5a5c4), "12345678901234568"),
            (f64::from_bits(0x3fd3333333333334), "0.30000000000000004"),
            (
                f64::from_bits(0xf2a74de452e6b438),
                "-1.989032661366619e+244",
            ),
            (f64::from_bits(0x6513270e269e0d37), "7.761117632285041e+178"),
            (f64::from_bits(0x0c5c7fd0a6a3a450), "3.980498358697587e-249"),
            (
                f64::from_bits(0xd23f0824128b2f33),
                "-1.5432835417340557e+88",
            ),
            (
                f64::from_bits(0x1818e811892f902b),
                "1.3647584518757569e-192",
            ),
            (
                f64::from_bits(0x9531985d5d9dc9f8),
                "-1.3701135617873088e-206",
            ),
            (
                f64::from_bits(0xe8e25d940ed90475),
                "-1.7160537630466207e+197",
            ),
            (f64::from_bits(0x36f675cc81e74ef5), "6.2946752411953861e-44"),
            (
                f64::from_bits(0x1600a35a099950d8),
                "1.0613447212142254e-202",
            ),
            (
                f64::from_bits(0x6b0d549b6f03675a),
                "4.7083251603875462e+207",
            ),
            (f64::from_bits(0x3d9c172411e20b8f), "6.3870161585135632e-12"),
            (
                f64::from_bits(0x8d116ece1738f7d9),
                "-9.9731303785687331e-246",
            ),
            (
                f64::from_bits(0x0f21ddb66cad4a26),
                "8.7797532256802712e-236",
            ),
            (
                f64::from_bits(0x90c192cfd3ac94af),
                "-5.7955032484989932e-228",
            ),
            (
                f64::from_bits(0xf28c105d1fb17c23),
                "-5.9881801593860111e+243",
            ),
            (
                f64::from_bits(0xa170b33839263059),
                "-1.3060523885277959e-147",
            ),
            (
                f64::from_bits(0x953f48f1a09f76b5),
                "-2.4361176994848409e-206",
            ),
            (
                f64::from_bits(0x0fd630f1f29d0da9),
                "2.2333869991501741e-232",
            ),
            (
                f64::from_bits(0x95e60af593bd04cf),
                "-3.5152797062666699e-203",
            ),
            (
                f64::from_bits(0x0cb1e29c658cda14),
                "1.5987381841032883e-247",
            ),
            (f64::from_bits(0x3898d190f9ebdacc), "4.6678633181812096e-36"),
            (
                f64::from_bits(0x8e81973e0becd7b0),
                "-8.4418727921054556e-239",
            ),
            (
                f64::from_bits(0x2217beaddbc496cb),
                "1.9015657400796622e-144",
            ),
            (f64::from_bits(0x6b4cb2424a23d596), "7.370437700706684e+208"),
            (
                f64::from_bits(0x8a6a63ec24ede6a4),
                "-1.7163996725272777e-258",
            ),
            (
                f64::from_bits(0x922766581e27a1c0),
                "-3.2367190832119987e-221",
            ),
            (
                f64::from_bits(0x8f6d05584ef8aa38),
                "-2.2818334634712625e-234",
            ),
            (
                f64::from_bits(0xae97ba94d0eda82f),
                "-3.0536383926309363e-84",
            ),
            (
                f64::from_bits(0x1a61dbe22e44158b),
                "1.3449551894627777e-181",
            ),
            (
                f64::from_bits(0x923a736994e3bf91),
                "-7.3174959760626057e-221",
            ),
            (f64::from_bits(0x301850c5a38fd547), "5.2498223088143036e-77"),
            (
                f64::from_bits(0x18f135d25f557203),
                "1.5450754142984396e-188",
            ),
            (
                f64::from_bits(0xb64ce4228c38fb29),
                "-3.9536256982247919e-47",
            ),
            (
                f64::from_bits(0x907a70c31012f037),
                "-2.7249126747649799e-229",
            ),
            (
                f64::from_bits(0x9e7769b10f4205b4),
                "-6.5051418615487723e-162",
            ),
            (
                f64::from_bits(0x7f15052434b9b5df),
                "1.4414848395559941e+304",
            ),
            (
                f64::from_bits(0x881ed162ae2eb154),
                "-1.4583679262758548e-269",
            ),
            (
                f64::from_bits(0xc6f877186d76b07e),
                "-7.9394166688077208e+33",
            ),
            (
                f64::from_bits(0x7731af10506bf2ef),
                "1.4255183989699612e+266",
            ),
            (
                f64::from_bits(0xec66a78795e761d1),
                "-1.5253157012324029e+214",
            ),
            (f64::from_bits(0xc0f6dbf3f4f0d845), "-93631.247300000003"),
            (f64::from_bits(0xc11eb5ab51eb851f), "-503146.83000000002"),
            (f64::from_bits(0x41184a9377ced917), "397988.86700000003"),
            (f64::from_bits(0xc1298583f4f0d845), "-836289.97840000002"),
            (f64::from_bits(0x40e89b203e6c4c59), "50393.007619999997"),
            (f64::from_bits(0x411c022a50cb295f), "458890.57890000002"),
            (f64::from_bits(0x410a99f000000000), "217918"),
            (f64::from_bits(0xc1274fb8e3111f0c), "-763868.44348999998"),
            (f64::from_bits(0xc12472f795de15ca), "-670075.79270999995"),
            (f64::from_bits(0xc1253dbddc81f538), "-696030.93067899998"),
            (f64::from_bits(0xc1031dda66666666), "-156603.29999999999"),
            (f64::from_bits(0x412025eb770110a1), "529141.73242999997"),
            (f64::from_bits(0xc113842d1a3c2118), "-319755.27561999997"),
            (f64::from_bits(0x41070a1e089f40a3), "188739.75421000001"),
            (f64::from_bits(0xc12a521433333333), "-862474.09999999998"),
            (f64::from_bits(0x412b24246163fa7b), "889362.19021589996"),
            (f64::from_bits(0x41180d9066666666), "394084.09999999998"),
            (f64::from_bits(0xc12ad08a4a2339c1), "-878661.14480000001"),
            (f64::from_bits(0x4111f5c6d61297b2), "294257.70905529999"),
            (f64::from_bits(0xc11a4b63be45803d), "-430808.93581200001"),
        ];
        for (v, text) in cases {
            assert_eq!(format_double(v), text, "{v:e}");
        }
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(-0.0), "-0");
    }
}
