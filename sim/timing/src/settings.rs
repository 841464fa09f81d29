//! The cycle model's parameters by name: how a scenario's `model:` keys and the plugin's
//! `param=<name>:<value>` arguments set [`Params`], and how reports list the effective values.

use crate::{Multiplier, Params};

/// The names [`Params::set`] accepts, in the order [`Params::settings`] lists them.
pub const PARAM_NAMES: &[&str] =
    &["branch-refill", "divide", "m3-multiply-long", "m3-multiply-accumulate-long", "m0-multiplier"];

impl Params {
    /// Sets the parameter `name` from its text; an error names the parameter and what it takes.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let cycles = |lo: u32, hi: u32| -> Result<u32, String> {
            match value.parse::<u32>() {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(format!("`{name}` is a whole number of cycles from {lo} to {hi}, not `{value}`")),
            }
        };
        match name {
            // [M4] §3.3.1: "P ... ranges from 1 to 3"; 0 allowed for a predicted branch (M7).
            "branch-refill" => self.branch_refill = cycles(0, 3)?,
            // [M4] SDIV/UDIV 2–12.
            "divide" => self.divide = cycles(2, 12)?,
            // [M3] UMULL/SMULL 3–5, UMLAL/SMLAL 4–7.
            "m3-multiply-long" => self.m3_multiply_long = cycles(3, 5)?,
            "m3-multiply-accumulate-long" => self.m3_multiply_accumulate_long = cycles(4, 7)?,
            // [M0] MULS 1 or 32 cycles (implementation option).
            "m0-multiplier" => {
                self.m0_multiplier = match value {
                    "fast" => Multiplier::Fast,
                    "small" => Multiplier::Small,
                    _ => return Err(format!("`m0-multiplier` is `fast` (1 cycle) or `small` (32), not `{value}`")),
                }
            }
            _ => return Err(format!("unknown model parameter `{name}`; known: {}", PARAM_NAMES.join(", "))),
        }
        Ok(())
    }

    /// Every parameter by name with its value as [`Params::set`] reads it.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            ("branch-refill", self.branch_refill.to_string()),
            ("divide", self.divide.to_string()),
            ("m3-multiply-long", self.m3_multiply_long.to_string()),
            ("m3-multiply-accumulate-long", self.m3_multiply_accumulate_long.to_string()),
            (
                "m0-multiplier",
                match self.m0_multiplier {
                    Multiplier::Fast => "fast",
                    Multiplier::Small => "small",
                }
                .to_string(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Core;

    #[test]
    fn every_parameter_round_trips_by_name() {
        let mut p = Params::for_core(Core::CortexM3);
        for (name, value) in
            [("branch-refill", "2"), ("divide", "12"), ("m3-multiply-long", "5"), ("m0-multiplier", "small")]
        {
            p.set(name, value).unwrap();
        }
        let mut q = Params::for_core(Core::CortexM3);
        for (name, value) in p.settings() {
            q.set(name, &value).unwrap();
        }
        assert_eq!(p, q);
        assert_eq!(p.branch_refill, 2);
        assert!(p.set("divide", "1").unwrap_err().contains("from 2 to 12"));
        assert!(p.set("refil", "1").unwrap_err().contains("unknown model parameter `refil`"));
        assert_eq!(PARAM_NAMES.len(), p.settings().len());
    }
}
