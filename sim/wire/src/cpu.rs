//! [`Core`]: which Cortex-M processor, for every crate of mcubench.

use std::fmt;
use std::str::FromStr;

/// A Cortex-M processor core mcubench knows.
///
/// The Cortex-M4 with and without its FPU are two cores here ([`Core::CortexM4`],
/// [`Core::CortexM4F`]): they run different code (the decoder refuses FP instructions on a plain
/// M4), but share one cycle model ([`Core::model_name`] is `cortex-m4` for both). The Cortex-M7
/// and Cortex-M33 are taken with their FPU, the configuration every board mcubench knows has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Core {
    CortexM0,
    CortexM0Plus,
    CortexM3,
    CortexM4,
    CortexM4F,
    CortexM7,
    CortexM33,
}

impl Core {
    /// Every core, in the order above.
    pub const ALL: [Core; 7] = [
        Core::CortexM0,
        Core::CortexM0Plus,
        Core::CortexM3,
        Core::CortexM4,
        Core::CortexM4F,
        Core::CortexM7,
        Core::CortexM33,
    ];

    /// The name users and the plugin's `core=` argument write, e.g. `cortex-m4f`; [`FromStr`]
    /// reads it back (and [`fmt::Display`] writes it).
    pub fn name(self) -> &'static str {
        match self {
            Core::CortexM0 => "cortex-m0",
            Core::CortexM0Plus => "cortex-m0+",
            Core::CortexM3 => "cortex-m3",
            Core::CortexM4 => "cortex-m4",
            Core::CortexM4F => "cortex-m4f",
            Core::CortexM7 => "cortex-m7",
            Core::CortexM33 => "cortex-m33",
        }
    }

    /// The label of reports (the `core` field of a run report, the table's core column), e.g.
    /// `Cortex-M4F`.
    pub fn label(self) -> &'static str {
        match self {
            Core::CortexM0 => "Cortex-M0",
            Core::CortexM0Plus => "Cortex-M0+",
            Core::CortexM3 => "Cortex-M3",
            Core::CortexM4 => "Cortex-M4",
            Core::CortexM4F => "Cortex-M4F",
            Core::CortexM7 => "Cortex-M7",
            Core::CortexM33 => "Cortex-M33",
        }
    }

    /// The name of the core's cycle model, which opens its description (`cortex-m4 model: ...`):
    /// the M4 and the M4F share the `cortex-m4` model (the FPU adds instructions, not timing
    /// rules for the others).
    pub fn model_name(self) -> &'static str {
        match self {
            Core::CortexM4F => Core::CortexM4.name(),
            core => core.name(),
        }
    }

    /// Whether the core has a floating-point unit (and so FP instructions in its code).
    pub fn has_fpu(self) -> bool {
        matches!(self, Core::CortexM4F | Core::CortexM7 | Core::CortexM33)
    }
}

impl fmt::Display for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a string names no [`Core`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCore(pub String);

impl fmt::Display for UnknownCore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Core::ALL.iter().map(|c| c.name()).collect();
        write!(f, "unknown core `{}` ({})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownCore {}

impl FromStr for Core {
    type Err = UnknownCore;

    /// A [`Core::name`], case-insensitively (so a [`Core::label`] too); `cortex-m0plus` is
    /// `cortex-m0+`.
    fn from_str(s: &str) -> Result<Core, UnknownCore> {
        let lower = s.to_ascii_lowercase();
        if lower == "cortex-m0plus" {
            return Ok(Core::CortexM0Plus);
        }
        Core::ALL.into_iter().find(|c| c.name() == lower).ok_or_else(|| UnknownCore(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels_read_back() {
        for core in Core::ALL {
            assert_eq!(core.name().parse(), Ok(core));
            assert_eq!(core.label().parse(), Ok(core));
            assert_eq!(core.to_string().parse(), Ok(core));
        }
        assert_eq!("cortex-m0plus".parse(), Ok(Core::CortexM0Plus));
        let e = "cortex-a9".parse::<Core>().unwrap_err();
        assert!(e.to_string().starts_with("unknown core `cortex-a9` (cortex-m0, cortex-m0+,"), "{e}");
    }

    #[test]
    fn the_m4f_is_an_m4_with_an_fpu() {
        assert_eq!(Core::CortexM4F.label(), "Cortex-M4F");
        assert_eq!(Core::CortexM4F.model_name(), "cortex-m4");
        assert_eq!(Core::CortexM4.model_name(), "cortex-m4");
        assert!(Core::CortexM4F.has_fpu() && !Core::CortexM4.has_fpu());
        assert!(!Core::CortexM0.has_fpu() && !Core::CortexM3.has_fpu());
    }
}
