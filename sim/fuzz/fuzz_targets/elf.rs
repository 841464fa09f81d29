//! Any bytes as an ELF: parsing, the memory report and the static stack analysis never panic
//! and always end (errors are values). The work itself is `mcubench::fuzzing::exercise_elf`,
//! which the regression tests replay findings through.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcubench::fuzzing::exercise_elf(data));
