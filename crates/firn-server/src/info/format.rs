//! How INFO writes its lines and sizes, as Redis does.

use std::fmt::Write;

pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n}B")
    } else {
        format!("{value:.2}{}", UNITS[unit])
    }
}

pub(crate) fn line(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(out, "{name}:{value}\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_follows_redis() {
        assert_eq!(human_bytes(0), "0B");
        assert_eq!(human_bytes(1023), "1023B");
        assert_eq!(human_bytes(1024), "1.00K");
        assert_eq!(human_bytes(1536), "1.50K");
        assert_eq!(human_bytes(5 << 20), "5.00M");
        assert_eq!(human_bytes(3 << 30), "3.00G");
    }
}
