//! `mcubench boards`: the boards mcubench can run on.

use super::{Error, Exit};

pub fn run() -> Result<Exit, Error> {
    for b in crate::BOARDS {
        println!(
            "{:<11} {:<10} {:<26} -machine {} -cpu {}",
            b.name,
            b.core.label(),
            b.rust_target,
            b.qemu_machine,
            b.qemu_cpu
        );
    }
    Ok(Exit::Pass)
}
