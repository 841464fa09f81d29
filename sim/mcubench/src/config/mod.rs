//! What the user gives mcubench: scenario files, the boards they name, sizes and durations,
//! budgets and regression limits, and the host's copy of KAT vectors. Everything here is loaded
//! strictly: an error names the file, the key path, the line and the column.

pub mod board;
pub mod budgets;
pub mod machine;
pub mod regions;
pub mod rules;
pub mod scenario;
pub mod table;
pub mod timing;
pub mod units;
pub mod user_board;
pub mod vectors;
