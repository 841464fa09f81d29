//! `mcubench boards`: the boards mcubench can run on.

use super::{Error, Exit};

pub fn run() -> Result<Exit, Error> {
    let width = crate::BOARDS.iter().map(|b| b.name.len()).max().unwrap_or(0);
    for b in crate::BOARDS {
        println!(
            "{:<width$} {:<10} {:<26} -machine {} -cpu {}",
            b.name,
            b.core.label(),
            b.rust_target,
            b.qemu_machine,
            b.qemu_cpu
        );
    }
    Ok(Exit::Pass)
}
