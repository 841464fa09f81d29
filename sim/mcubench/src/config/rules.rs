//! Verdict rules for firmware that does not speak mcubench's result protocol (most C firmware):
//! the exit code a pass needs, console lines that must appear (optionally in order), lines that
//! must not, and named captures that become report metrics — in the spirit of Zephyr twister's
//! console harness. The scenario's `verdict:` key, or `run --elf` flags.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A regular expression as written in a scenario; an invalid one is refused at load time, with
/// the YAML line and column of the pattern.
#[derive(Clone)]
pub struct Pattern(pub regex::Regex);

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, String> {
        regex::Regex::new(text).map(Pattern).map_err(|e| format!("`{text}` is not a valid regular expression: {e}"))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0.as_str())
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Pattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A `record` pattern: a regular expression with at least one named capture group, each of
/// which becomes a metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Record(pub Pattern);

impl Record {
    pub fn parse(text: &str) -> Result<Record, String> {
        let p = Pattern::parse(text)?;
        if p.0.capture_names().flatten().next().is_none() {
            return Err(format!(
                "`{text}` has no named capture group; write e.g. `cycles: (?P<cycles>[0-9]+)`: each name becomes a metric"
            ));
        }
        Ok(Record(p))
    }

    /// The metric names this pattern records.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.0.capture_names().flatten()
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Record::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The scenario's `verdict:` rules.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleRules {
    /// The exit code a pass needs (`SYS_EXIT`/`exit()`); default 0.
    #[serde(default)]
    pub exit: i32,
    /// Each must match a console line.
    #[serde(default)]
    pub expect: Vec<Pattern>,
    /// `expect` must match in this order (each after the line the previous one matched).
    #[serde(default)]
    pub ordered: bool,
    /// No console line may match any of these.
    #[serde(default)]
    pub reject: Vec<Pattern>,
    /// Named captures become report metrics (numbers), e.g. `sig bytes: (?P<sig_bytes>[0-9]+)`.
    #[serde(default)]
    pub record: Vec<Record>,
}

impl ConsoleRules {
    /// Rules that judge nothing and record nothing are a mistake, not a pass-anything switch.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for name in self.record.iter().flat_map(Record::names) {
            if !seen.insert(name) {
                return Err(format!("verdict.record: the metric `{name}` is captured by two patterns"));
            }
        }
        if self.ordered && self.expect.len() < 2 {
            return Err("verdict.ordered needs at least two `expect` patterns".into());
        }
        Ok(())
    }
}
