//! Sizes, durations and regression limits as users write them in scenarios and on the command
//! line (`24 KiB`, `20 s`, `2 %`): one parser each, shared by the YAML loader and the CLI.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// A scalar written as a number or a string (`4096`, `24 KiB`, `3`, `s`), as text. Visiting the
/// value directly (rather than through an untagged enum, which buffers it) keeps the YAML error
/// location on the value itself; anything else is an error that says what was `expected`.
pub(crate) fn scalar_text<'de, D: Deserializer<'de>>(d: D, expected: &'static str) -> Result<String, D::Error> {
    struct Scalar(&'static str);
    impl serde::de::Visitor<'_> for Scalar {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_owned())
        }
    }
    d.deserialize_any(Scalar(expected))
}

/// A byte count written as `24 KiB`, `1 MiB`, `512 B` or a plain integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    pub fn parse(text: &str) -> Result<Bytes, String> {
        let text = text.trim();
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: u64 =
            number.parse().map_err(|_| format!("`{text}` is not a size; write e.g. `24 KiB`, `512 B` or `4096`"))?;
        let scale = match unit.trim() {
            "" | "B" => 1,
            "KiB" | "K" | "KB" | "kB" => 1024,
            "MiB" | "M" | "MB" => 1024 * 1024,
            other => {
                return Err(format!("unknown size unit `{other}` in `{text}`; use B, KiB or MiB"));
            }
        };
        number.checked_mul(scale).map(Bytes).ok_or_else(|| format!("size `{text}` is too large"))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = scalar_text(d, "a size such as `24 KiB`, `512 B` or `4096`")?;
        Bytes::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A duration written as `20 s`, `500 ms`, `2 min` or a plain number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(pub Duration);

impl Timeout {
    pub fn parse(text: &str) -> Result<Timeout, String> {
        let text = text.trim();
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let n: u64 =
            number.parse().map_err(|_| format!("`{text}` is not a duration; write e.g. `20 s` or `500 ms`"))?;
        let d = match unit.trim() {
            "" | "s" => Duration::from_secs(n),
            "ms" => Duration::from_millis(n),
            "min" => Duration::from_secs(n.saturating_mul(60)),
            other => return Err(format!("unknown time unit `{other}` in `{text}`; use ms, s or min")),
        };
        if d.is_zero() {
            return Err("a timeout of zero would kill every run; give a positive duration".into());
        }
        Ok(Timeout(d))
    }
}

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = scalar_text(d, "a duration such as `20 s` or `500 ms`")?;
        Timeout::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// How much a metric may grow against a baseline before `mcubench diff` calls it a regression:
/// `2 %` (relative) or `256 B` / `1000` (absolute bytes or instructions/cycles).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Limit {
    Percent(f64),
    Absolute(u64),
}

impl Limit {
    pub fn parse(text: &str) -> Result<Limit, String> {
        let t = text.trim();
        if let Some(p) = t.strip_suffix('%') {
            let p: f64 = p.trim().parse().map_err(|_| format!("`{text}` is not a percentage such as `2 %`"))?;
            if !(p >= 0.0 && p.is_finite()) {
                return Err(format!("`{text}`: a regression limit cannot be negative"));
            }
            return Ok(Limit::Percent(p));
        }
        Bytes::parse(t)
            .map(|b| Limit::Absolute(b.0))
            .map_err(|_| format!("`{text}` is not a limit; write `2 %`, `256 B` or a plain number"))
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = scalar_text(d, "a limit such as `2 %`, `256 B` or `1000`")?;
        Limit::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A clock frequency written as `320 MHz`, `25 MHz`, `32768 Hz` or `1 GHz`, in Hz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Hertz(pub u64);

impl Hertz {
    pub fn parse(text: &str) -> Result<Hertz, String> {
        let text = text.trim();
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let n: u64 = number.parse().map_err(|_| format!("`{text}` is not a frequency; write e.g. `320 MHz`"))?;
        let scale = match unit.trim() {
            "Hz" => 1,
            "kHz" => 1_000,
            "MHz" => 1_000_000,
            "GHz" => 1_000_000_000,
            "" => return Err(format!("`{text}`: give a unit (Hz, kHz, MHz or GHz), e.g. `320 MHz`")),
            other => return Err(format!("unknown frequency unit `{other}` in `{text}`; use Hz, kHz, MHz or GHz")),
        };
        match n.checked_mul(scale) {
            Some(0) => Err("a clock of 0 Hz gives no time; give a positive frequency".into()),
            Some(hz) => Ok(Hertz(hz)),
            None => Err(format!("frequency `{text}` is too large")),
        }
    }
}

impl<'de> Deserialize<'de> for Hertz {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = scalar_text(d, "a frequency such as `320 MHz`")?;
        Hertz::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A time limit written as `12 ms`, `800 us` (or `µs`) or `1 s`, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Micros(pub u64);

impl Micros {
    pub fn parse(text: &str) -> Result<Micros, String> {
        let text = text.trim();
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let n: u64 = number.parse().map_err(|_| format!("`{text}` is not a time; write e.g. `12 ms` or `800 us`"))?;
        let scale = match unit.trim() {
            "us" | "µs" => 1,
            "ms" => 1_000,
            "s" => 1_000_000,
            "" => return Err(format!("`{text}`: give a unit (us, ms or s), e.g. `12 ms`")),
            other => return Err(format!("unknown time unit `{other}` in `{text}`; use us, ms or s")),
        };
        n.checked_mul(scale).map(Micros).ok_or_else(|| format!("time `{text}` is too large"))
    }
}

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = scalar_text(d, "a time such as `12 ms` or `800 us`")?;
        Micros::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod clock_and_time_tests {
    use super::*;

    #[test]
    fn frequencies_and_times_parse_with_units_and_refuse_nonsense() {
        assert_eq!(Hertz::parse("320 MHz"), Ok(Hertz(320_000_000)));
        assert_eq!(Hertz::parse("32768Hz"), Ok(Hertz(32_768)));
        assert!(Hertz::parse("320").unwrap_err().contains("give a unit"));
        assert!(Hertz::parse("0 MHz").unwrap_err().contains("0 Hz"));
        assert!(Hertz::parse("3 THz").unwrap_err().contains("unknown frequency unit `THz`"));
        assert_eq!(Micros::parse("12 ms"), Ok(Micros(12_000)));
        assert_eq!(Micros::parse("800 µs"), Ok(Micros(800)));
        assert!(Micros::parse("5").unwrap_err().contains("give a unit"));
    }
}
