//! Why a library operation stopped before it had a result, by whose fault: the CLI turns each
//! kind into its exit code ([`crate::cli::exit`]), so a build failure or a timeout is never
//! reported as bad input.

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

impl From<mcubench_stack::annotations::AnnotationError> for Error {
    fn from(e: mcubench_stack::annotations::AnnotationError) -> Error {
        Error::Input(e.to_string())
    }
}

impl From<crate::config::vectors::VectorError> for Error {
    fn from(e: crate::config::vectors::VectorError) -> Error {
        Error::Input(e.to_string())
    }
}
