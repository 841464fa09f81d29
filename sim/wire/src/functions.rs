//! The functions file (`functions=`): the host's list of the ELF's functions for the plugin's
//! shadow call stack, one line per function:
//!
//! ```text
//! 0x<start> <size>[ <region>]
//! ```
//!
//! `start` is hexadecimal (the Thumb bit is ignored), `size` the function's size in bytes and
//! `region` (decimal, optional) the function region its calls activate: an index into the
//! scenario's `regions` list. The line number (from 0) is the function's index, which the
//! results file's `stack` lines use.

use std::fmt::Write as _;

use crate::Error;

/// One function of the functions file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// First address (Thumb bit cleared).
    pub start: u32,
    /// Size in bytes.
    pub size: u32,
    /// The function region its calls are activations of.
    pub region: Option<u32>,
}

/// The whole file: the functions by index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionsFile {
    pub functions: Vec<Function>,
}

impl FunctionsFile {
    /// The file's text.
    pub fn write(&self) -> String {
        let mut out = String::new();
        for f in &self.functions {
            let _ = write!(out, "0x{:x} {}", f.start, f.size);
            if let Some(r) = f.region {
                let _ = write!(out, " {r}");
            }
            out.push('\n');
        }
        out
    }

    /// Parses the file strictly; an error names the line.
    pub fn parse(text: &str) -> Result<FunctionsFile, Error> {
        let mut functions = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let bad = || {
                Error::at_line(
                    Some(i + 1),
                    format!("functions file line {}: `{line}` is not `0x<start> <size>[ <region>]`", i + 1),
                )
            };
            let mut fields = line.split(' ');
            let (Some(a), Some(s)) = (fields.next(), fields.next()) else { return Err(bad()) };
            let start = u32::from_str_radix(a.strip_prefix("0x").ok_or_else(bad)?, 16).map_err(|_| bad())? & !1;
            let size: u32 = s.parse().map_err(|_| bad())?;
            let region = fields.next().map(|r| r.parse::<u32>().map_err(|_| bad())).transpose()?;
            if fields.next().is_some() {
                return Err(bad());
            }
            functions.push(Function { start, size, region });
        }
        Ok(FunctionsFile { functions })
    }
}
