//! Static stack bounds for a board's ELF: the analyzer of `mcubench-elf` with the board's core
//! and the annotation file that sits next to the scenario (`kat.yaml` → `kat.stack.yaml`).

use std::path::Path;

use mcubench_elf::ElfImage;
use mcubench_elf::stack::{StackOptions, StackReport};

use crate::board::Board;
use crate::stack_annotations::AnnotationFile;

/// Analyzes `image` for `board`; `annotations` is an annotation file (absent = none). Also
/// returns the annotation entries this ELF has no function for (see [`AnnotationFile::resolve`]).
pub fn analyze(
    image: &ElfImage,
    board: &Board,
    annotations: Option<&Path>,
) -> Result<(StackReport, Vec<String>), String> {
    let (arch, fpu) = board.arch();
    let (annotations, ignored) = match annotations {
        Some(path) => AnnotationFile::load(path).and_then(|file| file.resolve(image)).map_err(|e| e.to_string())?,
        None => Default::default(),
    };
    let report =
        mcubench_elf::stack::analyze(image, &StackOptions { arch, fpu, annotations, ..StackOptions::default() })
            .map_err(|e| format!("{}: {e}", image.path().display()))?;
    Ok((report, ignored))
}
