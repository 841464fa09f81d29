//! The firmware's console as the report shows it and the verdict rules read it: semihosting
//! stdout (without the result protocol's record lines), the semihosting console (SYS_WRITEC,
//! SYS_WRITE0) and each UART, each as its own stream. Text is sanitised (no control characters
//! but tab and newline; `\r\n` as `\n`) and capped, keeping the end, where failures show.

use std::collections::BTreeMap;

use crate::config::rules::ConsoleRules;
use crate::exec::qemu::QemuRun;
use crate::judge::protocol::Transcript;
use crate::report::{ConsoleStream, MetricValue};

/// Bytes of each stream kept in the report (the run itself keeps up to 4 MiB per stream).
pub const CONSOLE_LIMIT: usize = 64 * 1024;

/// The non-empty streams of a run, in a fixed order: `semihosting`, `semihosting-console`,
/// `uart0`, `uart1`, ...
pub fn streams(run: &QemuRun, transcript: Option<&Transcript>) -> Vec<ConsoleStream> {
    // Record lines are structured elsewhere in the report; an unreadable transcript is shown whole.
    let semihosting = match transcript {
        Some(t) => t.log.iter().map(|(_, line)| format!("{line}\n")).collect::<String>(),
        None => run.stdout.clone(),
    };
    let named = [("semihosting".to_string(), semihosting), ("semihosting-console".to_string(), run.console.clone())];
    let uarts = run.uarts.iter().enumerate().map(|(i, text)| (format!("uart{i}"), text.clone()));
    named
        .into_iter()
        .chain(uarts)
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(source, text)| {
            let clean = sanitize(&text);
            let dropped = clean.len().saturating_sub(CONSOLE_LIMIT);
            let mut start = dropped;
            while !clean.is_char_boundary(start) {
                start += 1;
            }
            ConsoleStream { source, text: clean[start..].to_string(), dropped_bytes: start as u64 }
        })
        .collect()
}

fn sanitize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .chars()
        .map(|c| if c.is_control() && c != '\n' && c != '\t' { '\u{fffd}' } else { c })
        .collect()
}

/// Every console line with where it came from (`uart0 line 3`), in stream order.
pub fn lines(streams: &[ConsoleStream]) -> Vec<(String, &str)> {
    streams
        .iter()
        .flat_map(|s| s.text.lines().enumerate().map(move |(i, l)| (format!("{} line {}", s.source, i + 1), l)))
        .collect()
}

/// The last `n` console lines, for messages.
pub fn tail(streams: &[ConsoleStream], n: usize) -> String {
    let all = lines(streams);
    let shown: Vec<&str> = all[all.len().saturating_sub(n)..].iter().map(|(_, l)| *l).collect();
    if shown.is_empty() {
        "the firmware printed nothing".into()
    } else {
        format!("console ends: {}", shown.join(" | "))
    }
}

/// Named captures of the `record` patterns as metrics; the last match of a name wins. A
/// captured value that is not a number is a problem of the run, named.
pub fn recorded(rules: &ConsoleRules, streams: &[ConsoleStream]) -> (BTreeMap<String, MetricValue>, Vec<String>) {
    let mut metrics = BTreeMap::new();
    let mut problems = Vec::new();
    for (place, line) in lines(streams) {
        for record in &rules.record {
            let Some(caps) = record.0.0.captures(line) else { continue };
            for name in record.names() {
                let Some(m) = caps.name(name) else { continue };
                match MetricValue::parse(m.as_str()) {
                    Some(v) => {
                        metrics.insert(name.to_string(), v);
                    }
                    None => problems
                        .push(format!("record `{name}` captured `{}` ({place}), which is not a number", m.as_str())),
                }
            }
        }
    }
    (metrics, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::qemu::ProcessEnd;

    fn run(stdout: &str, console: &str, uart0: &str) -> QemuRun {
        QemuRun {
            end: ProcessEnd::Exited(0),
            stdout: stdout.into(),
            stderr: String::new(),
            console: console.into(),
            uarts: vec![uart0.into(), String::new()],
            command: String::new(),
            at_timeout: None,
        }
    }

    #[test]
    fn streams_drop_records_and_empty_channels_and_clean_text() {
        let r = run("@mcubench/1 begin fw=x\nhello\n", "", "a\r\nb\u{1b}[31m\n");
        let t = Transcript::parse(&r.stdout).unwrap();
        let s = streams(&r, Some(&t));
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].source.as_str(), s[0].text.as_str()), ("semihosting", "hello\n"));
        assert_eq!((s[1].source.as_str(), s[1].text.as_str()), ("uart0", "a\nb\u{fffd}[31m\n"));
        assert_eq!(lines(&s)[2].0, "uart0 line 2");
    }

    #[test]
    fn a_long_stream_keeps_its_end() {
        let long = format!("{}end\n", "x".repeat(CONSOLE_LIMIT));
        let s = streams(&run("", &long, ""), None);
        assert_eq!(s[0].dropped_bytes, 4);
        assert!(s[0].text.ends_with("end\n"));
        assert_eq!(s[0].text.len(), CONSOLE_LIMIT);
    }

    #[test]
    fn records_capture_numbers_and_name_what_is_not_one() {
        let rules = ConsoleRules {
            record: vec![
                crate::config::rules::Record::parse(r"cycles: (?P<cycles>\S+)").unwrap(),
                crate::config::rules::Record::parse(r"ratio (?P<ratio>[0-9.]+)").unwrap(),
            ],
            ..ConsoleRules::default()
        };
        let s = streams(&run("cycles: 12\nratio 1.5\ncycles: 15\n", "cycles: lots\n", ""), None);
        let (metrics, problems) = recorded(&rules, &s);
        assert_eq!(metrics["cycles"], MetricValue::Int(15));
        assert_eq!(metrics["ratio"], MetricValue::Float(1.5));
        assert_eq!(problems, ["record `cycles` captured `lots` (semihosting-console line 1), which is not a number"]);
    }
}
