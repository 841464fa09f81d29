//! The tunable parameters of the cycle models: every number a model uses that is not fixed by a
//! TRM table lives here, with a name, a unit and a documented default, so that scenarios and board
//! profiles can set them by name ([`Params::SPECS`], [`Params::get`], [`Params::set`]).

use mcubench_wire::{Core, WaitStates};

use crate::core_timing::CoreTiming;

/// Cortex-M0/M0+ multiplier implementation option ([M0] §3.3: MULS is 1 or 32 cycles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multiplier {
    /// Single-cycle multiplier.
    Fast,
    /// 32-cycle iterative multiplier.
    Small,
}

/// Tunable parts of a model. The defaults are documented per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// Taken-branch refill P; default per core ([`CoreTiming::default_branch_refill`]).
    pub branch_refill: u32,
    /// SDIV/UDIV: 2–12 cycles with early termination ([M3]/[M4] Table 3-1). Operands are not
    /// visible to the plugin, so a fixed estimate is used: 7, the middle of the range.
    pub divide: u32,
    /// [M3] UMULL/SMULL 3–5 cycles (early termination on operand size): default 4.
    pub m3_multiply_long: u32,
    /// [M3] UMLAL/SMLAL 4–7 cycles: default 6.
    pub m3_multiply_accumulate_long: u32,
    /// Cortex-M0/M0+ multiplier option; default fast (the nRF51 and most M0+ parts).
    pub m0_multiplier: Multiplier,
    /// Cortex-M7: the cycles a mispredicted direct conditional branch costs (`crate::m7`,
    /// [m7-meas]: 8, or 6 when the flags were set early); 0 prices every branch as predicted.
    pub m7_mispredict: u32,
    /// Cortex-M7: how many of the last conditional branches' directions choose a branch's
    /// prediction counter besides its address (global history; INFERRED, `crate::run`); 0: by
    /// address only.
    pub m7_history: u32,
    /// Per-range wait states; ranges not listed have none.
    pub wait_states: Vec<WaitStates>,
}

/// The name, unit and meaning of one scalar parameter of [`Params`] (for `model:` keys and for
/// printing the effective values beside the model name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// The key, e.g. `branch-refill`.
    pub name: &'static str,
    /// The unit, e.g. `cycles`.
    pub unit: &'static str,
    /// What it is and where its default comes from.
    pub doc: &'static str,
}

/// A value given for a parameter that it cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown cycle-model parameter `{name}` (known: {known})")]
    Unknown { name: String, known: String },
    #[error("cycle-model parameter `{name}` = {value}: {why}")]
    OutOfRange { name: &'static str, value: u32, why: &'static str },
}

impl Params {
    /// The scalar parameters (everything but the per-range wait states, which have their own
    /// scenario key), in a stable order.
    pub const SPECS: &'static [ParamSpec] = &[
        ParamSpec {
            name: "branch-refill",
            unit: "cycles",
            doc: "taken-branch pipeline refill P at zero wait states (TRM: 1 to 3); default 1, 2 on the Cortex-M0",
        },
        ParamSpec {
            name: "divide",
            unit: "cycles",
            doc: "SDIV/UDIV, data dependent 2-12 (TRM Table 3-1); operands are not visible, default 7",
        },
        ParamSpec {
            name: "m3-multiply-long",
            unit: "cycles",
            doc: "Cortex-M3 UMULL/SMULL, data dependent 3-5 (M3 TRM Table 3-1); default 4",
        },
        ParamSpec {
            name: "m3-multiply-accumulate-long",
            unit: "cycles",
            doc: "Cortex-M3 UMLAL/SMLAL, data dependent 4-7 (M3 TRM Table 3-1); default 6",
        },
        ParamSpec {
            name: "m0-multiplier",
            unit: "cycles per MULS",
            doc: "Cortex-M0/M0+ multiplier option, 1 (fast) or 32 (small) (M0 TRM §3.3); default 1",
        },
        ParamSpec {
            name: "m7-mispredict",
            unit: "cycles",
            doc: "Cortex-M7 mispredicted conditional branch, measured 8 (6 when the flags were set at least 3 cycles \
                  before it) on an STM32H743; default 8, 0 prices every branch as predicted",
        },
        ParamSpec {
            name: "m7-history",
            unit: "branches",
            doc: "Cortex-M7 branch prediction: how many of the last conditional branches' directions select a \
                  branch's two-bit counter besides its address (the scheme is inferred); default 8, fitted to \
                  CoreMark on an i.MX RT1170; 0: the branch's own counter only",
        },
    ];

    pub fn for_core(core: Core) -> Params {
        Params {
            branch_refill: core.default_branch_refill(),
            divide: 7,
            m3_multiply_long: 4,
            m3_multiply_accumulate_long: 6,
            m0_multiplier: Multiplier::Fast,
            m7_mispredict: 8,
            m7_history: 8,
            wait_states: Vec::new(),
        }
    }

    /// The value of the scalar parameter `name` (one of [`Params::SPECS`]).
    pub fn get(&self, name: &str) -> Option<u32> {
        Some(match name {
            "branch-refill" => self.branch_refill,
            "divide" => self.divide,
            "m3-multiply-long" => self.m3_multiply_long,
            "m3-multiply-accumulate-long" => self.m3_multiply_accumulate_long,
            "m0-multiplier" => match self.m0_multiplier {
                Multiplier::Fast => 1,
                Multiplier::Small => 32,
            },
            "m7-mispredict" => self.m7_mispredict,
            "m7-history" => self.m7_history,
            _ => return None,
        })
    }

    /// Sets the scalar parameter `name` (one of [`Params::SPECS`]) to `value`.
    pub fn set(&mut self, name: &str, value: u32) -> Result<(), ParamError> {
        let range = |name: &'static str, lo: u32, hi: u32, why: &'static str| {
            if (lo..=hi).contains(&value) { Ok(value) } else { Err(ParamError::OutOfRange { name, value, why }) }
        };
        match name {
            "branch-refill" => self.branch_refill = range("branch-refill", 0, 16, "must be 0 to 16 cycles")?,
            "divide" => self.divide = range("divide", 1, 32, "must be 1 to 32 cycles")?,
            "m3-multiply-long" => self.m3_multiply_long = range("m3-multiply-long", 1, 16, "must be 1 to 16 cycles")?,
            "m3-multiply-accumulate-long" => {
                self.m3_multiply_accumulate_long =
                    range("m3-multiply-accumulate-long", 1, 16, "must be 1 to 16 cycles")?
            }
            "m0-multiplier" => {
                self.m0_multiplier = match value {
                    1 => Multiplier::Fast,
                    32 => Multiplier::Small,
                    _ => {
                        return Err(ParamError::OutOfRange {
                            name: "m0-multiplier",
                            value,
                            why: "must be 1 (fast multiplier) or 32 (small multiplier)",
                        });
                    }
                }
            }
            "m7-mispredict" => self.m7_mispredict = range("m7-mispredict", 0, 16, "must be 0 to 16 cycles")?,
            "m7-history" => self.m7_history = range("m7-history", 0, 16, "must be 0 to 16 branches")?,
            _ => {
                let known = Params::SPECS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ");
                return Err(ParamError::Unknown { name: name.to_string(), known });
            }
        }
        Ok(())
    }

    /// The wait states of the range holding `addr`, if any.
    pub(crate) fn wait_at(&self, addr: u32) -> Option<&WaitStates> {
        self.wait_states.iter().find(|w| w.start <= addr && addr < w.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_reads_and_writes_by_name() {
        let mut p = Params::for_core(Core::CortexM4);
        for spec in Params::SPECS {
            let v = p.get(spec.name).unwrap_or_else(|| panic!("{}", spec.name));
            p.set(spec.name, v).unwrap();
            assert!(!spec.unit.is_empty() && !spec.doc.is_empty(), "{}", spec.name);
        }
        assert_eq!(p, Params::for_core(Core::CortexM4));
        p.set("divide", 12).unwrap();
        assert_eq!(p.divide, 12);
        let e = p.set("m0-multiplier", 3).unwrap_err().to_string();
        assert!(e.contains("m0-multiplier") && e.contains("32"), "{e}");
        let e = p.set("refill", 1).unwrap_err().to_string();
        assert!(e.contains("`refill`") && e.contains("branch-refill"), "{e}");
    }
}
