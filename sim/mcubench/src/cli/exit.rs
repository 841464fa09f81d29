//! The one place where outcomes and errors become process exit codes (documented in the README
//! and the book's CLI reference).

use std::process::ExitCode;

use crate::Error;
use crate::diff::DiffStatus;
use crate::report::Status;

/// What the process tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every run passed and every budget holds.
    Pass = 0,
    /// A run did not pass (fail, fault, timeout, no-verdict, setup-error), or the machine could
    /// not do the work (a build failed, QEMU is missing).
    RunFailed = 1,
    /// Bad input or usage: the message names the file and the place.
    BadInput = 2,
    /// Every run passed, but a budget was crossed.
    BudgetViolated = 3,
    /// `diff`: a metric grew past its regression limit.
    Regression = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

impl From<Status> for Exit {
    fn from(status: Status) -> Exit {
        match status {
            Status::Pass => Exit::Pass,
            Status::RunFailed => Exit::RunFailed,
            Status::BudgetViolated => Exit::BudgetViolated,
        }
    }
}

impl From<DiffStatus> for Exit {
    fn from(status: DiffStatus) -> Exit {
        match status {
            DiffStatus::Pass => Exit::Pass,
            DiffStatus::RunFailed => Exit::RunFailed,
            DiffStatus::BudgetViolated => Exit::BudgetViolated,
            DiffStatus::Regression => Exit::Regression,
        }
    }
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Input(_) => Exit::BadInput,
            Error::Setup(_) | Error::Run(_) => Exit::RunFailed,
        }
    }
}
