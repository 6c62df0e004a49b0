//! [`R`], a parsed RESP2/RESP3 reply: its canonical encoding, the
//! normalisations differential tests compare with (sorted aggregates, same
//! shape), a bounded redis-cli style rendering for failure messages, and
//! assertions on error replies.

use std::fmt::Write as _;

/// A parsed RESP2/RESP3 reply.
#[derive(Clone, Debug, PartialEq)]
pub enum R {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<R>>),
    Map(Vec<(R, R)>),
    Set(Vec<R>),
    /// The textual form, as sent (`1.5`, `inf`, ...).
    Double(String),
    Bool(bool),
    Null,
    BigNum(String),
    /// Format (e.g. `txt`) and payload.
    Verbatim(String, Vec<u8>),
    Push(Vec<R>),
}

impl R {
    pub fn bulk(v: &[u8]) -> R {
        R::Bulk(Some(v.to_vec()))
    }

    /// A bulk or simple string's text, an integer's digits, or the
    /// rendering of anything else (for messages and loose checks).
    pub fn text(&self) -> String {
        match self {
            R::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            R::Simple(s) => s.clone(),
            R::Int(n) => n.to_string(),
            other => other.render(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, R::Error(_))
    }

    pub fn error_text(&self) -> Option<&str> {
        match self {
            R::Error(e) => Some(e),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            R::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            R::Bulk(Some(b)) => Some(b),
            R::Simple(s) => Some(s.as_bytes()),
            R::Verbatim(_, b) => Some(b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<String> {
        self.as_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// Elements of an array, set or push reply (empty for anything else).
    pub fn items(&self) -> &[R] {
        match self {
            R::Array(Some(v)) | R::Set(v) | R::Push(v) => v,
            _ => &[],
        }
    }

    /// Canonical RESP encoding of the tree (used to sort and compare
    /// normalised replies).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            R::Simple(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            R::Error(s) => {
                out.push(b'-');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            R::Int(i) => out.extend_from_slice(format!(":{i}\r\n").as_bytes()),
            R::Bulk(None) => out.extend_from_slice(b"$-1\r\n"),
            R::Bulk(Some(b)) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            R::Array(None) => out.extend_from_slice(b"*-1\r\n"),
            R::Array(Some(v)) => encode_aggregate(out, b'*', v),
            R::Set(v) => encode_aggregate(out, b'~', v),
            R::Push(v) => encode_aggregate(out, b'>', v),
            R::Map(pairs) => {
                out.extend_from_slice(format!("%{}\r\n", pairs.len()).as_bytes());
                for (k, v) in pairs {
                    k.encode_into(out);
                    v.encode_into(out);
                }
            }
            R::Double(s) => out.extend_from_slice(format!(",{s}\r\n").as_bytes()),
            R::Bool(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            R::Null => out.extend_from_slice(b"_\r\n"),
            R::BigNum(s) => out.extend_from_slice(format!("({s}\r\n").as_bytes()),
            R::Verbatim(f, b) => {
                out.extend_from_slice(format!("={}\r\n{f}:", b.len() + 4).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// Same variant, same aggregate lengths and element shapes; errors must
    /// match exactly, nil and non-nil are different shapes.
    pub fn same_shape(&self, other: &R) -> bool {
        match (self, other) {
            (R::Error(a), R::Error(b)) => a == b,
            (R::Simple(_), R::Simple(_))
            | (R::Int(_), R::Int(_))
            | (R::Double(_), R::Double(_))
            | (R::Bool(_), R::Bool(_))
            | (R::Null, R::Null)
            | (R::BigNum(_), R::BigNum(_))
            | (R::Bulk(Some(_)), R::Bulk(Some(_)))
            | (R::Bulk(None), R::Bulk(None))
            | (R::Array(None), R::Array(None)) => true,
            (R::Verbatim(f1, _), R::Verbatim(f2, _)) => f1 == f2,
            (R::Array(Some(a)), R::Array(Some(b)))
            | (R::Set(a), R::Set(b))
            | (R::Push(a), R::Push(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_shape(y))
            }
            (R::Map(a), R::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((k1, v1), (k2, v2))| k1.same_shape(k2) && v1.same_shape(v2))
            }
            _ => false,
        }
    }

    /// Sorts the elements of this aggregate (not of nested ones) by their
    /// encoding; map entries are sorted by key.
    pub fn sorted(&self) -> R {
        let sort = |v: &[R]| {
            let mut v = v.to_vec();
            v.sort_by_key(|a| a.encode());
            v
        };
        match self {
            R::Array(Some(v)) => R::Array(Some(sort(v))),
            R::Set(v) => R::Set(sort(v)),
            R::Map(p) => {
                let mut p = p.clone();
                p.sort_by_key(|(k, _)| k.encode());
                R::Map(p)
            }
            other => other.clone(),
        }
    }

    /// Like `sorted`, at every nesting level.
    pub fn sorted_deep(&self) -> R {
        match self {
            R::Array(Some(v)) => R::Array(Some(v.iter().map(R::sorted_deep).collect())).sorted(),
            R::Set(v) => R::Set(v.iter().map(R::sorted_deep).collect()).sorted(),
            R::Push(v) => R::Push(v.iter().map(R::sorted_deep).collect()),
            R::Map(p) => R::Map(
                p.iter()
                    .map(|(k, v)| (k.sorted_deep(), v.sorted_deep()))
                    .collect(),
            )
            .sorted(),
            other => other.clone(),
        }
    }

    /// A flat `[k1, v1, k2, v2, ...]` array (CONFIG GET in RESP2) with its
    /// pairs sorted by key.
    pub fn pairs_sorted(&self) -> R {
        match self {
            R::Array(Some(v)) if v.len() % 2 == 0 => {
                let mut pairs: Vec<(R, R)> =
                    v.chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect();
                pairs.sort_by_key(|(k, _)| k.encode());
                R::Array(Some(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect()))
            }
            other => other.sorted(),
        }
    }

    /// Human-readable rendering, redis-cli style, bounded in size.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out, 0);
        if out.len() > 4000 {
            let mut cut = 4000;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("\n... (truncated)");
        }
        out
    }

    fn render_into(&self, out: &mut String, indent: usize) {
        let pad = "  ".repeat(indent);
        match self {
            R::Simple(s) => {
                let _ = write!(out, "{pad}+{s}");
            }
            R::Error(s) => {
                let _ = write!(out, "{pad}(error) {s}");
            }
            R::Int(i) => {
                let _ = write!(out, "{pad}(integer) {i}");
            }
            R::Bulk(None) => {
                let _ = write!(out, "{pad}(nil bulk)");
            }
            R::Bulk(Some(b)) => {
                let _ = write!(out, "{pad}\"{}\"", escape(b, 200));
            }
            R::Array(None) => {
                let _ = write!(out, "{pad}(nil array)");
            }
            R::Array(Some(v)) => render_list(out, &pad, "array", v, indent),
            R::Set(v) => render_list(out, &pad, "set", v, indent),
            R::Push(v) => render_list(out, &pad, "push", v, indent),
            R::Map(p) => {
                let _ = write!(out, "{pad}(map of {})", p.len());
                for (k, v) in p {
                    out.push('\n');
                    k.render_into(out, indent + 1);
                    out.push_str(" =>\n");
                    v.render_into(out, indent + 2);
                }
            }
            R::Double(s) => {
                let _ = write!(out, "{pad}(double) {s}");
            }
            R::Bool(b) => {
                let _ = write!(out, "{pad}(boolean) {b}");
            }
            R::Null => {
                let _ = write!(out, "{pad}(null)");
            }
            R::BigNum(s) => {
                let _ = write!(out, "{pad}(big number) {s}");
            }
            R::Verbatim(f, b) => {
                let _ = write!(out, "{pad}(verbatim {f}) \"{}\"", escape(b, 200));
            }
        }
    }
}

fn encode_aggregate(out: &mut Vec<u8>, prefix: u8, items: &[R]) {
    out.push(prefix);
    out.extend_from_slice(format!("{}\r\n", items.len()).as_bytes());
    for item in items {
        item.encode_into(out);
    }
}

fn render_list(out: &mut String, pad: &str, what: &str, items: &[R], indent: usize) {
    if items.is_empty() {
        let _ = write!(out, "{pad}(empty {what})");
        return;
    }
    let _ = write!(out, "{pad}({what} of {})", items.len());
    for item in items {
        out.push('\n');
        item.render_into(out, indent + 1);
    }
}

/// Printable form of arbitrary bytes, cut after `max` bytes.
pub fn escape(bytes: &[u8], max: usize) -> String {
    let mut s = String::new();
    for &b in bytes.iter().take(max) {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    if bytes.len() > max {
        let _ = write!(s, "...({} bytes)", bytes.len());
    }
    s
}

/// Asserts `r` is an error reply with exactly this text.
#[track_caller]
pub fn assert_err(r: &R, text: &str) {
    match r {
        R::Error(e) if e == text => {}
        other => panic!("expected error {text:?}, got:\n{}", other.render()),
    }
}

/// Asserts `r` is an error reply starting with `prefix`.
#[track_caller]
pub fn assert_err_prefix(r: &R, prefix: &str) {
    match r {
        R::Error(e) if e.starts_with(prefix) => {}
        other => panic!(
            "expected error starting {prefix:?}, got:\n{}",
            other.render()
        ),
    }
}
