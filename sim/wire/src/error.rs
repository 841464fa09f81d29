//! [`Error`]: what is wrong with a piece of wire text, and where.

use std::fmt;

/// A malformed plugin argument, functions file or results file. The message names the place
/// (the argument's key, or the line and its text); [`Error::key`] and [`Error::line`] give it to
/// code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
    key: Option<String>,
    line: Option<usize>,
}

impl Error {
    /// An error about the argument `key` (or the arguments as a whole: `None`).
    pub(crate) fn arg(key: Option<&str>, message: impl Into<String>) -> Error {
        Error { message: message.into(), key: key.map(str::to_string), line: None }
    }

    /// An error about line `line` (1-based) of a file, or the file as a whole (`None`).
    pub(crate) fn at_line(line: Option<usize>, message: impl Into<String>) -> Error {
        Error { message: message.into(), key: None, line }
    }

    /// The plugin argument (its key) the error is about.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The line (1-based) of the file the error is about.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
