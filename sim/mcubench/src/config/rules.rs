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

/// How a run that passes ends (`verdict.exit`, `--exit-code`): exit with this code (semihosting
/// `SYS_EXIT`, newlib's `exit()` with rdimon); `loop`: reach a branch to itself or an idle loop
/// outside every exception handler, as firmware for a board ends (`while (1) {}` after `main`,
/// libnosys's `_exit`, `while (1) { __WFI(); }`), where the run ends; or `reset`: ask for a
/// system reset (`NVIC_SystemReset()`), which ends the run (QEMU runs with `-no-reboot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitRule {
    Code(i32),
    Loop,
    Reset,
}

impl Default for ExitRule {
    fn default() -> ExitRule {
        ExitRule::Code(0)
    }
}

impl ExitRule {
    pub fn parse(text: &str) -> Result<ExitRule, String> {
        match text {
            "loop" => Ok(ExitRule::Loop),
            "reset" => Ok(ExitRule::Reset),
            _ => text.parse().map(ExitRule::Code).map_err(|_| {
                format!(
                    "`{text}` is not an exit code (a number), `loop` (the firmware ends in a loop on itself or an \
                     idle loop) or `reset` (it asks for a system reset)"
                )
            }),
        }
    }
}

impl fmt::Display for ExitRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitRule::Code(code) => write!(f, "{code}"),
            ExitRule::Loop => f.write_str("loop"),
            ExitRule::Reset => f.write_str("reset"),
        }
    }
}

impl<'de> Deserialize<'de> for ExitRule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ExitRule;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an exit code (a number), `loop` or `reset`")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ExitRule, E> {
                i32::try_from(v)
                    .map(ExitRule::Code)
                    .map_err(|_| E::custom(format!("exit code {v} does not fit 32 bits")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ExitRule, E> {
                i32::try_from(v)
                    .map(ExitRule::Code)
                    .map_err(|_| E::custom(format!("exit code {v} does not fit 32 bits")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ExitRule, E> {
                ExitRule::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The scenario's `verdict:` rules.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleRules {
    /// How a pass ends: the exit code it needs (`SYS_EXIT`/`exit()`; default 0), `loop` or `reset`.
    #[serde(default)]
    pub exit: ExitRule,
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
