//! mcubench: runs Cortex-M firmware under QEMU and reports known-answer-test results, instruction
//! counts, flash/RAM/stack per build profile, and budget violations.
//!
//! Modules follow the data flow: [`scenario`] → [`build`] → [`qemu`] (run) → [`protocol`] and
//! [`verdict`] (judge) → [`report`] → [`gate`]; [`run`] drives them for a whole scenario.
//! [`plugin`] finds or builds the QEMU TCG plugin that makes instruction counts exact.

pub mod board;
pub mod budget_check;
pub mod build;
pub mod contain;
pub mod diff;
pub mod fuzzing;
pub mod gate;
pub mod junit;
pub mod markdown;
pub mod openmetrics;
pub mod plugin;
pub mod profile;
pub mod protocol;
pub mod qemu;
pub mod report;
pub mod run;
pub mod scenario;
pub mod shard;
pub mod stack;
pub mod vectors;
pub mod verdict;

pub use board::{BOARDS, Board};
pub use report::{RunReport, Status};
pub use run::{RunOptions, run_scenario};
pub use scenario::Scenario;
