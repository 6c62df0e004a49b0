//! The `notify-keyspace-events` value: Redis's class letters to a mask
//! and back. Configuration parses it; nothing here depends on the server.

use firn_storage::notify_class as class;

/// Redis's class letters, in the order `CONFIG GET` prints them.
const CLASS_LETTERS: [(char, u32); 11] = [
    ('g', class::GENERIC),
    ('$', class::STRING),
    ('l', class::LIST),
    ('s', class::SET),
    ('h', class::HASH),
    ('z', class::ZSET),
    ('x', class::EXPIRED),
    ('e', class::EVICTED),
    ('t', class::STREAM),
    ('d', class::MODULE),
    ('n', class::NEW),
];

/// Parses a `notify-keyspace-events` value (Redis's
/// `keyspaceEventsStringToFlags`).
pub fn parse_flags(text: &str) -> Result<u32, String> {
    let mut flags = 0;
    for c in text.chars() {
        flags |= match c {
            'A' => class::ALL,
            'K' => class::KEYSPACE,
            'E' => class::KEYEVENT,
            'm' => class::KEY_MISS,
            _ => CLASS_LETTERS
                .iter()
                .find(|(letter, _)| *letter == c)
                .map(|(_, bit)| *bit)
                .ok_or_else(|| {
                    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_string()
                })?,
        };
    }
    Ok(flags)
}

/// Prints a mask as Redis's `CONFIG GET` does (`keyspaceEventsFlagsToString`):
/// `A` stands for all of its classes and hides `n`.
pub fn render_flags(flags: u32) -> String {
    let mut out = String::new();
    if flags & class::ALL == class::ALL {
        out.push('A');
    } else {
        for (letter, bit) in CLASS_LETTERS {
            if flags & bit != 0 {
                out.push(letter);
            }
        }
    }
    for (letter, bit) in [
        ('K', class::KEYSPACE),
        ('E', class::KEYEVENT),
        ('m', class::KEY_MISS),
    ] {
        if flags & bit != 0 {
            out.push(letter);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_print_as_redis_prints_them() {
        // Pairs checked against redis-server 7.0.15 (CONFIG SET then GET).
        for (given, shown) in [
            ("", ""),
            ("A", "A"),
            ("AKE", "AKE"),
            ("Ag", "A"),
            ("KEA", "AKE"),
            ("n", "n"),
            ("An", "A"),
            ("AKEn", "AKE"),
            ("Kg$lshzxetdnm", "AKm"),
            ("Ag$", "A"),
            ("KEm", "KEm"),
            ("x", "x"),
            ("gg", "g"),
            ("Elg", "glE"),
            ("nzK", "znK"),
        ] {
            assert_eq!(render_flags(parse_flags(given).unwrap()), shown, "{given}");
        }
        assert!(parse_flags("Q").is_err());
        assert!(parse_flags("AKE ").is_err());
    }

    #[test]
    fn a_covers_every_class_but_key_miss_and_new() {
        let all = parse_flags("A").unwrap();
        assert_eq!(all & class::NEW, 0);
        assert_eq!(all & class::KEY_MISS, 0);
        assert_eq!(all, parse_flags("g$lshzxetd").unwrap());
    }
}
