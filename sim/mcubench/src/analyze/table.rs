//! What a declared table needs from the ELF itself, per row: for the secure-boot table, the
//! boot path's code (the functions `sb_boot_<row>` reaches by direct calls), its static stack
//! bound, and the sizes of the header, signature and public key statics.
//!
//! The firmware names its rows by convention (see `firmware/secure-boot/src/main.rs`):
//! `sb_boot_<row>` (a function: the whole verify path), `sb_hdr_<row>` (the header's fixed
//! fields and key hint or digest), and for signature schemes `sb_sig_<row>` and `sb_key_<row>`.

use std::collections::BTreeMap;

use mcubench_elf::ElfImage;
use mcubench_stack::{CallKind, StackReport};
use serde::{Deserialize, Serialize};

use crate::config::table::{TableKind, TableSpec};

/// One row's facts from the ELF (the measured columns come from the row's KATs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowFacts {
    /// The row key (`ed25519`): the suffix of the firmware's symbols and the prefix of its KAT ids.
    pub row: String,
    /// The boot path's function, e.g. `sb_boot_ed25519`.
    pub entry: String,
    /// Bytes of code of the entry and every function it reaches through direct calls and tail
    /// calls; `None` when the stack analysis failed (no call graph).
    pub verify_code: Option<u64>,
    /// How many functions that is.
    pub verify_functions: Option<u32>,
    /// Indirect call sites on those functions: their targets are not in `verify_code`.
    pub indirect_calls: Option<u32>,
    /// Static worst-case stack bound of the entry, bytes; `None` when unbounded.
    pub stack_static: Option<u32>,
    /// `exact`, `bounded` or `unbounded` (why, for unbounded).
    pub stack_static_kind: String,
    /// The entry's bound with the calls into panic/abort functions cut: informative, what the
    /// verify path needs when it does not panic (never used for budgets); `None` when unbounded
    /// even so. Absent from reports written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_static_excl_panic: Option<u32>,
    /// Bytes of the image header: `sb_hdr_<row>` plus `sb_sig_<row>` (the signature travels in
    /// the header).
    pub header: u64,
    /// Bytes of `sb_sig_<row>`; absent for hash-only rows.
    pub signature: Option<u64>,
    /// Bytes of `sb_key_<row>` (the public key the bootloader holds); absent for hash-only rows.
    pub public_key: Option<u64>,
}

const ENTRY: &str = "sb_boot_";

/// The row keys the ELF provides (every `sb_boot_<row>` function), sorted.
pub fn available_rows(image: &ElfImage) -> Vec<String> {
    let mut rows: Vec<String> =
        image.symbols().iter().filter_map(|s| s.name.strip_prefix(ENTRY)).map(str::to_owned).collect();
    rows.sort();
    rows.dedup();
    rows
}

/// The facts of every row `spec` asks for (all the ELF provides when it names none). `Err`: a
/// row the firmware does not provide, or a firmware that provides none, with the ones it has.
pub fn row_facts(spec: &TableSpec, image: &ElfImage, stack: Option<&StackReport>) -> Result<Vec<RowFacts>, String> {
    match spec.kind {
        TableKind::SecureBoot => {}
        // Their rows are KATs, checked after the run (`report::throughput_table::check`).
        TableKind::Throughput | TableKind::Profiles => return Ok(Vec::new()),
    }
    let available = available_rows(image);
    let elf = image.path().display();
    if available.is_empty() {
        return Err(format!(
            "{elf}: the secure-boot table needs `{ENTRY}<alg>` functions (and `sb_hdr_<alg>` statics), and this ELF has \
             none; see docs/src/guide/secure-boot.md for the naming convention"
        ));
    }
    let rows = if spec.rows.is_empty() { available.clone() } else { spec.rows.clone() };
    if let Some(missing) = rows.iter().find(|r| !available.contains(r)) {
        return Err(format!(
            "table.rows: `{missing}` is not an algorithm of {elf}; it provides: {}",
            available.join(", ")
        ));
    }
    rows.iter().map(|row| one_row(row, image, stack)).collect()
}

fn one_row(row: &str, image: &ElfImage, stack: Option<&StackReport>) -> Result<RowFacts, String> {
    let entry = format!("{ENTRY}{row}");
    let size = |name: &str| image.symbol(name).map(|s| s.size);
    let hdr = size(&format!("sb_hdr_{row}"))
        .ok_or_else(|| format!("{}: `{entry}` has no header static `sb_hdr_{row}`", image.path().display()))?;
    let signature = size(&format!("sb_sig_{row}"));
    let public_key = size(&format!("sb_key_{row}"));
    let (mut verify_code, mut verify_functions, mut indirect_calls) = (None, None, None);
    let (mut stack_static, mut stack_static_kind) = (None, "unbounded: no stack analysis".to_string());
    let mut stack_static_excl_panic = None;
    if let Some(report) = stack
        && let Some(i) = report.functions.iter().position(|f| f.name == entry)
    {
        let reach = reachable(report, i);
        verify_code = Some(reach.iter().map(|&j| u64::from(report.functions[j].end - report.functions[j].start)).sum());
        verify_functions = Some(reach.len() as u32);
        indirect_calls = Some(
            reach
                .iter()
                .flat_map(|&j| &report.functions[j].calls)
                .filter(|c| matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail))
                .count() as u32,
        );
        stack_static_excl_panic = report.excluding_panic_bound_of(i);
        if let Some((bound, _)) = report.bound_of(i) {
            stack_static = bound.bytes();
            stack_static_kind = match bound {
                mcubench_stack::Bound::Exact { .. } => "exact".into(),
                mcubench_stack::Bound::Bounded { .. } => "bounded".into(),
                mcubench_stack::Bound::Unbounded { reason } => format!("unbounded: {reason}"),
            };
        }
    }
    Ok(RowFacts {
        row: row.to_string(),
        entry,
        verify_code,
        verify_functions,
        indirect_calls,
        stack_static,
        stack_static_kind,
        stack_static_excl_panic,
        header: hdr + signature.unwrap_or(0),
        signature,
        public_key,
    })
}

/// Function `root` and every function it reaches through direct and tail calls (indices).
fn reachable(report: &StackReport, root: usize) -> Vec<usize> {
    let by_start: BTreeMap<u32, usize> = report.functions.iter().enumerate().map(|(i, f)| (f.start, i)).collect();
    // A call into the middle of a function (libgcc entry points) reaches the function around it.
    let containing =
        |addr: u32| by_start.range(..=addr).next_back().map(|(_, &i)| i).filter(|&i| addr < report.functions[i].end);
    let mut seen = vec![false; report.functions.len()];
    let mut stack = vec![root];
    seen[root] = true;
    while let Some(i) = stack.pop() {
        for c in &report.functions[i].calls {
            let (CallKind::Call { target } | CallKind::Tail { target }) = c.kind else { continue };
            if let Some(j) = containing(target & !1)
                && !seen[j]
            {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    (0..seen.len()).filter(|&i| seen[i]).collect()
}
