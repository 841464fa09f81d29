//! The one place where outcomes become process exit codes (documented in the README and the
//! book's CLI reference).

use std::process::ExitCode;

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

/// Why a command stopped before it had a result, by whose fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input or usage is wrong (a file, a flag, a name): exit 2.
    #[error("{0}")]
    Input(String),
    /// The work could not be done here (a firmware build failed, QEMU or the plugin is missing,
    /// a report cannot be written): exit 1, never "bad input".
    #[error("{0}")]
    Setup(String),
    /// The firmware's run gave nothing to show (a timeout, a crash, a refused host access): exit 1.
    #[error("{0}")]
    Run(String),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Input(_) => Exit::BadInput,
            Error::Setup(_) | Error::Run(_) => Exit::RunFailed,
        }
    }
}

impl From<crate::config::scenario::ScenarioError> for Error {
    fn from(e: crate::config::scenario::ScenarioError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<mcubench_elf::ElfError> for Error {
    fn from(e: mcubench_elf::ElfError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<crate::diff::DiffError> for Error {
    fn from(e: crate::diff::DiffError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<crate::build::BuildError> for Error {
    fn from(e: crate::build::BuildError) -> Error {
        Error::Setup(e.to_string())
    }
}

impl From<crate::stack_annotations::AnnotationError> for Error {
    fn from(e: crate::stack_annotations::AnnotationError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<crate::config::vectors::VectorError> for Error {
    fn from(e: crate::config::vectors::VectorError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<crate::profile::ProfileError> for Error {
    fn from(e: crate::profile::ProfileError) -> Error {
        use crate::profile::ProfileError;
        match e {
            ProfileError::Input(m) => Error::Input(m),
            ProfileError::Setup(m) => Error::Setup(m),
            ProfileError::Run(m) => Error::Run(m),
        }
    }
}

impl From<crate::analyze::stack::ScenarioStackError> for Error {
    fn from(e: crate::analyze::stack::ScenarioStackError) -> Error {
        use crate::analyze::stack::ScenarioStackError;
        match e {
            ScenarioStackError::Input(m) => Error::Input(m),
            ScenarioStackError::Build(b) => b.into(),
        }
    }
}
