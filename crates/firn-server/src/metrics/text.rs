//! The Prometheus text exposition format (version 0.0.4): each family's
//! `# HELP` and `# TYPE` once, then its samples, label values escaped.

use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
    Summary,
    Histogram,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Summary => "summary",
            Kind::Histogram => "histogram",
        }
    }
}

/// A page of metrics being gathered: samples may come in any order, and
/// each family is written once, with its samples, in the order families
/// were first named.
#[derive(Default)]
pub struct Page {
    families: Vec<Family>,
    index: std::collections::HashMap<String, usize>,
}

struct Family {
    name: String,
    kind: Kind,
    help: String,
    /// Written sample lines.
    samples: String,
}

impl Page {
    fn family(&mut self, name: &str, kind: Kind, help: &str) -> &mut Family {
        let at = match self.index.get(name) {
            Some(&at) => at,
            None => {
                self.index.insert(name.to_string(), self.families.len());
                self.families.push(Family {
                    name: name.to_string(),
                    kind,
                    help: help.replace('\\', "\\\\").replace('\n', "\\n"),
                    samples: String::new(),
                });
                self.families.len() - 1
            }
        };
        &mut self.families[at]
    }

    /// A sample of the family `name`.
    pub fn add(&mut self, name: &str, kind: Kind, help: &str, labels: &[(&str, &str)], value: f64) {
        self.add_part(name, kind, help, "", labels, value);
    }

    /// A sample of a summary or histogram family `name`, named `name` +
    /// `suffix` (`_sum`, `_count`, `_bucket`; "" for a quantile).
    pub fn add_part(
        &mut self,
        name: &str,
        kind: Kind,
        help: &str,
        suffix: &str,
        labels: &[(&str, &str)],
        value: f64,
    ) {
        let family = self.family(name, kind, help);
        let out = &mut family.samples;
        out.push_str(name);
        out.push_str(suffix);
        if !labels.is_empty() {
            out.push('{');
            for (i, (label, value)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(label);
                out.push_str("=\"");
                for c in value.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '"' => out.push_str("\\\""),
                        '\n' => out.push_str("\\n"),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            out.push('}');
        }
        out.push(' ');
        push_value(out, value);
        out.push('\n');
    }

    pub fn finish(self) -> String {
        let mut out = String::new();
        for f in self.families {
            let _ = write!(
                out,
                "# HELP {} {}\n# TYPE {} {}\n{}",
                f.name,
                f.help,
                f.name,
                f.kind.name(),
                f.samples
            );
        }
        out
    }
}

fn push_value(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        let _ = write!(out, "{}", value as i64);
    } else {
        let _ = write!(out, "{value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_families_labels_and_values() {
        let mut page = Page::default();
        page.add(
            "redis_db_keys",
            Kind::Gauge,
            "Keys by DB",
            &[("db", "db0")],
            3.0,
        );
        page.add("redis_up", Kind::Gauge, "Up", &[], 1.0);
        page.add(
            "redis_db_keys",
            Kind::Gauge,
            "Keys by DB",
            &[("db", "a\"b\\c\nd")],
            0.25,
        );
        assert_eq!(
            page.finish(),
            "# HELP redis_db_keys Keys by DB\n# TYPE redis_db_keys gauge\n\
             redis_db_keys{db=\"db0\"} 3\n\
             redis_db_keys{db=\"a\\\"b\\\\c\\nd\"} 0.25\n\
             # HELP redis_up Up\n# TYPE redis_up gauge\nredis_up 1\n"
        );
    }

    #[test]
    fn special_values() {
        let mut out = String::new();
        for v in [f64::NAN, f64::INFINITY, -1.5, 1e20, 0.0] {
            push_value(&mut out, v);
            out.push(' ');
        }
        assert_eq!(out, "NaN +Inf -1.5 100000000000000000000 0 ");
    }
}
