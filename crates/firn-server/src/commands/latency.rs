//! LATENCY: the latency monitor's events (LATEST, HISTORY, GRAPH, RESET,
//! DOCTOR) and the per-command histograms (HISTOGRAM); the state and what
//! it records are in `latency.rs`.

use bytes::Bytes;
use firn_resp::Reply;

use super::{def, Ctx, Def};
use crate::commands::replies::help_reply;
use crate::errors::{CmdError, CmdResult};

pub const COMMANDS: &[Def] = &[
    def("latency|latest", latency_latest),
    def("latency|history", latency_history),
    def("latency|graph", latency_graph),
    def("latency|reset", latency_reset),
    def("latency|doctor", latency_doctor),
    def("latency|histogram", latency_histogram),
    def("latency|help", latency_help),
];

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    A few sentences on the events the monitor recorded.",
    "GRAPH <event>",
    "    A text chart of the <event>'s samples.",
    "HISTORY <event>",
    "    The <event>'s samples: Unix time and milliseconds, oldest first.",
    "LATEST",
    "    Each event's newest sample and its worst ever.",
    "RESET [<event> ...]",
    "    Forgets the events named;",
    "    with no event named, every event.",
    "HISTOGRAM [<command> ...]",
    "    Each command's calls and their latency distribution, in buckets of",
    "    powers of two microseconds (by default every command called).",
    "HELP",
    "    Prints this help.",
];

fn int(n: u64) -> Reply {
    Reply::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

fn latency_latest(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let events = ctx.server.latency.events();
    Ok(Reply::Array(
        events
            .iter()
            .filter_map(|(event, series)| {
                let (time, ms) = *series.samples.last()?;
                Some(Reply::Array(vec![
                    Reply::Bulk(Bytes::from_static(event.as_bytes())),
                    int(time),
                    int(ms),
                    int(series.max_ms),
                ]))
            })
            .collect(),
    ))
}

fn latency_history(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&args[2]).to_ascii_lowercase();
    let events = ctx.server.latency.events();
    let samples = events
        .get(name.as_str())
        .map(|series| series.samples.clone())
        .unwrap_or_default();
    Ok(Reply::Array(
        samples
            .into_iter()
            .map(|(time, ms)| Reply::Array(vec![int(time), int(ms)]))
            .collect(),
    ))
}

/// A chart of the event's samples, one column per sample, scaled between
/// its lowest and highest sample, with each column's age below it.
fn latency_graph(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&args[2]).into_owned();
    let events = ctx.server.latency.events();
    let Some(series) = events
        .get(name.to_ascii_lowercase().as_str())
        .filter(|s| !s.samples.is_empty())
    else {
        return Err(CmdError::Owned(format!(
            "ERR No samples available for event '{name}'"
        )));
    };
    Ok(Reply::Verbatim {
        format: *b"txt",
        text: Bytes::from(chart(&name, series, firn_storage::now_ms() / 1000)),
    })
}

const CHART_ROWS: u64 = 4;

fn chart(name: &str, series: &crate::latency::Series, now_secs: u64) -> String {
    let high = series.samples.iter().map(|s| s.1).max().unwrap_or(0);
    let low = series.samples.iter().map(|s| s.1).min().unwrap_or(0);
    let mut out = format!(
        "{name} - high {high} ms, low {low} ms (all time high {} ms)\n{}\n",
        series.max_ms,
        "-".repeat(80)
    );
    let span = (high - low).max(1);
    for row in (1..=CHART_ROWS).rev() {
        let line: String = series
            .samples
            .iter()
            .map(|&(_, ms)| {
                let height = (ms - low) * CHART_ROWS / span;
                if height >= row || (row == 1 && high == low) {
                    '#'
                } else {
                    ' '
                }
            })
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let ages: Vec<String> = series
        .samples
        .iter()
        .map(|&(time, _)| age(now_secs.saturating_sub(time)))
        .collect();
    out.push_str(&format!("ages: {}\n", ages.join(" ")));
    out
}

/// "5s", "3m", "2h", "1d": how long ago a sample was taken.
fn age(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn latency_reset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let names: Vec<String> = args[2..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    Ok(int(ctx.server.latency.reset(&names) as u64))
}

fn latency_doctor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let threshold = ctx.server.config().latency_monitor_threshold_ms;
    let events = ctx.server.latency.events();
    let mut report = String::new();
    if threshold == 0 {
        report.push_str(
            "The latency monitor is off: CONFIG SET latency-monitor-threshold <ms> turns it on, \
             and it then records every command at least that slow.\n",
        );
    } else if events.is_empty() {
        report.push_str(&format!(
            "No command took {threshold} ms or more since the monitor was turned on or reset.\n"
        ));
    } else {
        for (event, series) in &events {
            let count = series.samples.len() as u64;
            let mean = series.samples.iter().map(|s| s.1).sum::<u64>() / count.max(1);
            report.push_str(&format!(
                "{event}: {count} second(s) with a command of {threshold} ms or more, \
                 {mean} ms on average, {} ms at worst.\n",
                series.max_ms
            ));
        }
        report.push_str(
            "SLOWLOG GET names the slow commands; a command reading cold data waits for the \
             disk, which INFO storage counts (cold_commands).\n",
        );
    }
    Ok(Reply::Verbatim {
        format: *b"txt",
        text: Bytes::from(report),
    })
}

fn latency_histogram(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let latency = &ctx.server.latency;
    let names: Vec<&'static str> = if args.len() == 2 {
        latency.tracked()
    } else {
        let tracked = latency.tracked();
        let mut wanted = Vec::new();
        for arg in &args[2..] {
            let asked = String::from_utf8_lossy(arg).to_ascii_lowercase();
            // A container names itself and each of its subcommands.
            for name in &tracked {
                let of_container = name
                    .split_once('|')
                    .is_some_and(|(container, _)| container == asked);
                if (*name == asked || of_container) && !wanted.contains(name) {
                    wanted.push(*name);
                }
            }
        }
        wanted
    };
    let mut map = Vec::new();
    for name in names {
        let Some((calls, buckets)) = latency.histogram(name) else {
            continue;
        };
        map.push((
            Reply::Bulk(Bytes::from_static(name.as_bytes())),
            Reply::Map(vec![
                (Reply::Bulk(Bytes::from_static(b"calls")), int(calls)),
                (
                    Reply::Bulk(Bytes::from_static(b"histogram_usec")),
                    Reply::Map(
                        buckets
                            .into_iter()
                            .map(|(micros, count)| (int(micros), int(count)))
                            .collect(),
                    ),
                ),
            ]),
        ));
    }
    Ok(Reply::Map(map))
}

fn latency_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(LATENCY_HELP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_names_its_range_and_each_samples_age() {
        let series = crate::latency::Series {
            samples: vec![(100, 5), (101, 20), (105, 12)],
            max_ms: 30,
        };
        let text = chart("command", &series, 110);
        assert!(text.starts_with("command - high 20 ms, low 5 ms (all time high 30 ms)\n"));
        assert!(text.ends_with("ages: 10s 9s 5s\n"), "{text}");
        assert_eq!(text.matches('#').count(), 4 + 1, "{text}");
    }
}
