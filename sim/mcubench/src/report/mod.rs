//! The results of a scenario run: the report model every format renders ([`json`], [`table`],
//! [`markdown`], [`junit`], [`openmetrics`]). Everything here is a pure function of the run's
//! records and the ELFs, so the same ELF and scenario give byte-identical reports: no host time,
//! no absolute paths.

use std::collections::BTreeMap;

use mcubench_elf::MemoryReport;
use mcubench_wire::Core;
use serde::{Deserialize, Serialize};

use crate::gate::{BudgetCheck, BudgetStatus};
use crate::judge::protocol::KatResult;
use crate::judge::verdict::{Outcome, Verdict};

mod json;
pub mod junit;
pub mod markdown;
pub mod openmetrics;
pub mod profile_table;
mod regions;
mod table;
pub mod tables;
pub mod throughput_table;

pub use regions::{CallGroup, CallerReport, CounterInterval, PerCall, PerCallTime, RegionReport, SizeReport, per_byte};
pub use table::{memory_table, render};

pub const SCHEMA: &str = "mcubench-run/1";

/// Where an instruction count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountSource {
    /// Exact: the QEMU plugin's count between the operation's region markers (the operation plus
    /// a constant marker overhead of a few instructions; see `docs/src/reference/protocol.md`).
    Plugin,
    /// SysTick ticks × instructions per tick under `-icount shift=0`: resolution one tick.
    Systick,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KatReport {
    pub id: String,
    pub alg: String,
    pub op: String,
    pub result: KatResult,
    /// Instructions executed by the operation; exact or tick-derived, see `instructions_source`.
    pub instructions: u64,
    pub instructions_source: CountSource,
    /// Estimated cycles (the cell's `cycle_model` names the model); `None` without a model.
    pub cycles: Option<u64>,
    /// SysTick ticks around the operation, as the firmware reported them (kept beside exact counts).
    pub ticks: u64,
    /// Stack the operation used below its caller's SP (painted, a lower bound of the excursion).
    pub stack: u32,
    /// Stack probe (`stack-probe: true`): the lowest stack address a store wrote during the
    /// operation (between its region markers); absent without the probe or without a store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_lowest: Option<u32>,
    /// Stack probe: bytes below the SP at the operation's region entry that a store reached;
    /// absent without the probe or when the plugin lost track of SP at the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_probe_bytes: Option<u32>,
    /// Heap bytes the operation took above what was in use when it started (`heap=` on its `kat`
    /// record); absent when the firmware does not report its heap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<u32>,
    /// Message bytes the operation processed (`bytes=` on its `kat` record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `cycles / bytes`, when both are known and `bytes` is not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_byte: Option<f64>,
    /// Estimated time in microseconds: `cycles` at the cell's `clock_hz` (absent without a clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<f64>,
}

/// The stack probe's whole-run result (`stack-probe: true`): store callbacks, not painting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackProbe {
    /// Lowest address of the stack region a store wrote (stores by the reset handler and the
    /// firmware's stack-painting helpers excluded; stores to the heap and outside the region are
    /// not stack stores); `None` when nothing was written or there was no probe.
    pub lowest: Option<u32>,
    /// Bytes below the run's entry SP (the initial SP, vector table word 0) that stores reached:
    /// initial SP minus `lowest`; `None` when the stack region was not found (see `note`).
    pub bytes: Option<u32>,
    /// The stack region the probe counted, `[low, high)`; `None` when not found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<[u32; 2]>,
    /// Where the region's low end came from (a linker symbol, or the end of static data), or why
    /// no region was found.
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellReport {
    /// Position in the scenario's board × profile matrix (board-major); `merge` restores the
    /// scenario's order from it.
    pub index: usize,
    pub board: String,
    /// The board's core by its label (`Cortex-M4F`).
    #[serde(with = "core_label")]
    pub core: Core,
    pub profile: String,
    /// File name of the ELF that ran.
    pub elf: Option<String>,
    /// SHA-256 of the ELF file, hex: the same hash means the same firmware.
    pub elf_sha256: Option<String>,
    /// Compilers and linkers named in the ELF's `.comment` section (`rustc version …`,
    /// `GCC: (…) 12.2.1 …`, `Linker: LLD …`), in order.
    pub toolchain: Vec<String>,
    pub verdict: Verdict,
    /// Where the run ended with `verdict.exit: loop`: the branch to itself, `0x… (symbol+0x…)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_end: Option<String>,
    /// Instructions per SysTick tick: the resolution of tick-derived instruction counts.
    pub instructions_per_tick: f64,
    /// The QEMU version that ran the cell (`qemu-system-arm --version`, e.g. `7.2.22`); absent
    /// when the cell stopped before a QEMU was chosen (a failed build, no supported QEMU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qemu: Option<String>,
    /// The cycle model behind `cycles`, e.g. `cortex-m4 model: Cortex-M4 TRM table, P=1, 0 WS`.
    pub cycle_model: Option<String>,
    /// Every effective parameter of that model by its scenario key (`core`, `branch-refill`,
    /// `flash`, `icache`, `clock`, `timing`, ...), as text.
    /// Sorted by key: a JSON object's order is not kept by every reader (`merge`, `diff`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cycle_params: BTreeMap<String, String>,
    /// The core clock of the board timing profile or `model.clock`, Hz: times are cycles at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<u64>,
    pub kats: Vec<KatReport>,
    /// Whole-run stack high-water mark from the painted stack, bytes.
    pub stack_high_water: Option<u32>,
    /// Whole-run heap peak, bytes (`heap=` on the `end` record); absent when the firmware does
    /// not report its heap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_peak: Option<u32>,
    /// Whole-run stack probe (`stack-probe: true` in the scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_probe: Option<StackProbe>,
    /// Static worst-case stack bound from the call graph (`mcubench stack`).
    pub stack_static: Option<StaticStack>,
    pub memory: Option<MemoryReport>,
    pub budgets: Vec<BudgetCheck>,
    /// Whole-run instructions, exact (the TCG plugin counts every executed instruction); absent
    /// without the plugin or when the run did not end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_total: Option<u64>,
    /// Whole-run estimated cycles with `cycle_model`; absent without a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_total: Option<u64>,
    /// `cycles_total` at `clock_hz`, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_total_us: Option<f64>,
    /// The firmware's console: semihosting output that is not a protocol record, the semihosting
    /// console (SYS_WRITEC/SYS_WRITE0) and each UART, as separate non-empty streams.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<ConsoleStream>,
    /// Metrics the scenario's `verdict.record` patterns captured from the console.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricValue>,
    /// Function regions (`regions:` in the scenario), in the scenario's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<RegionReport>,
    /// The firmware's own DWT cycle-counter reads: the estimated cycles between consecutive
    /// reads (QEMU's counter reads 0), per pair of reading instructions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycle_counter: Vec<CounterInterval>,
    /// With `cycle-counter: estimated`: how many of the firmware's loads of the counter read the
    /// estimate (the rest read 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_counter_served: Option<u64>,
    /// Per row of the scenario's `table:`, what the ELF shows (code, static stack, header and
    /// signature sizes); the measured columns come from the row's KATs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_rows: Vec<crate::analyze::table::RowFacts>,
    /// Entries of the scenario's annotation file this cell's ELF has no function for (not in
    /// the report: the CLI refuses entries that no cell has; see `mcubench_stack::annotations`).
    #[serde(skip)]
    pub annotations_ignored: Vec<mcubench_stack::annotations::Ignored>,
    /// The run trace and what a replay needs, when the run was traced (`RunOptions::trace`; not
    /// in the report).
    #[serde(skip)]
    pub traced: Option<crate::replay::Traced>,
}

/// One channel of the firmware's console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleStream {
    /// `semihosting`, `semihosting-console` (SYS_WRITEC/SYS_WRITE0) or `uart0`, `uart1`, ...
    pub source: String,
    /// Sanitised text (no control characters but tab and newline), at most 64 KiB: its end.
    pub text: String,
    /// Bytes cut from the start of the stream to keep it within the limit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A number the firmware printed and a `verdict.record` pattern captured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MetricValue {
    Int(i64),
    Float(f64),
}

impl MetricValue {
    /// An integer (`2420`, `-3`) or a finite decimal (`1.5`, `2e3`).
    pub fn parse(text: &str) -> Option<MetricValue> {
        if let Ok(i) = text.parse::<i64>() {
            return Some(MetricValue::Int(i));
        }
        text.parse::<f64>().ok().filter(|f| f.is_finite()).map(MetricValue::Float)
    }

    pub fn as_f64(self) -> f64 {
        match self {
            MetricValue::Int(i) => i as f64,
            MetricValue::Float(f) => f,
        }
    }
}

impl std::fmt::Display for MetricValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricValue::Int(i) => write!(f, "{i}"),
            MetricValue::Float(x) => write!(f, "{x}"),
        }
    }
}

/// The static stack bound of a cell's ELF: the reset path, and the main stack with every exception
/// handler nested on top of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticStack {
    /// `exact`, `bounded` (assumptions listed by `mcubench stack`) or `unbounded`.
    pub kind: String,
    /// Bytes of the reset path; `None` when unbounded.
    pub reset: Option<u32>,
    /// Bytes of the main stack including nested handlers; `None` when unbounded.
    pub msp: Option<u32>,
    /// Why it is unbounded, or how many assumptions a bounded result rests on.
    pub note: String,
    /// The function that adds the most to the reset path's worst path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<mcubench_stack::Contributor>,
    /// The bounds without panic/abort paths and fault handlers ("bound excl. panic/fault
    /// paths"): informative, never a bound of the program; the `stack-static` budget checks it
    /// only with `stack-static-budget: excluding-panic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluding_panic: Option<StaticExcludingPanic>,
}

/// [`StaticStack::excluding_panic`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticExcludingPanic {
    /// Bytes of the reset path without panic/abort paths; `None` when unbounded.
    pub reset: Option<u32>,
    /// Bytes of the main stack without them and without the fault handlers; `None` when unbounded.
    pub msp: Option<u32>,
    /// The function that adds the most to that reset path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<mcubench_stack::Contributor>,
}

impl CellReport {
    /// A cell that has not run yet: no ELF, no measurements, a setup-error verdict with no
    /// message until the pipeline says more.
    pub fn unrun(index: usize, board: &crate::Board, profile: &str) -> CellReport {
        CellReport {
            index,
            board: board.name.into(),
            core: board.core,
            profile: profile.into(),
            elf: None,
            elf_sha256: None,
            toolchain: Vec::new(),
            verdict: Verdict { outcome: Outcome::SetupError, message: String::new() },
            loop_end: None,
            instructions_per_tick: board.instructions_per_tick(),
            qemu: None,
            cycle_model: None,
            cycle_params: BTreeMap::new(),
            clock_hz: None,
            kats: Vec::new(),
            stack_high_water: None,
            heap_peak: None,
            stack_probe: None,
            stack_static: None,
            memory: None,
            budgets: Vec::new(),
            regions: Vec::new(),
            cycle_counter: Vec::new(),
            cycle_counter_served: None,
            table_rows: Vec::new(),
            instructions_total: None,
            cycles_total: None,
            time_total_us: None,
            console: Vec::new(),
            metrics: BTreeMap::new(),
            annotations_ignored: Vec::new(),
            traced: None,
        }
    }

    pub fn flash_bytes(&self) -> Option<u64> {
        self.memory.as_ref().map(|m| m.flash.used)
    }

    pub fn ram_bytes(&self) -> Option<u64> {
        self.memory.as_ref().map(|m| m.ram.used)
    }

    pub fn budgets_hold(&self) -> bool {
        self.budgets.iter().all(|b| b.status == BudgetStatus::Ok)
    }

    /// `cycles` at the cell's clock, in microseconds (`None` without a clock).
    pub fn time_us(&self, cycles: Option<u64>) -> Option<f64> {
        time_us(cycles, self.clock_hz)
    }

    pub fn kats_passed(&self) -> usize {
        self.kats.iter().filter(|k| k.result == KatResult::Pass).count()
    }
}

/// `cycles` at `clock_hz`, in microseconds.
pub fn time_us(cycles: Option<u64>, clock_hz: Option<u64>) -> Option<f64> {
    Some(cycles? as f64 * 1e6 / clock_hz.filter(|&h| h > 0)? as f64)
}

/// The effective cycle model parameters of a cell on one line: `core=cortex-m4f, clock=168 MHz, ...`.
pub fn params_text(c: &CellReport) -> String {
    c.cycle_params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

/// A time in microseconds as people write it: `812 ns`, `75.6 µs`, `12.3 ms`, `1.20 s`.
pub fn format_time(us: f64) -> String {
    if us < 1.0 {
        format!("{:.0} ns", us * 1e3)
    } else if us < 1e3 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// One run of a scenario: the document `--format json` prints and `mcubench diff`/`merge` read.
/// Documented field by field in `docs/src/reference/report-schema.md`; `schema` changes when a field changes
/// meaning or goes away.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    pub schema: String,
    pub tool_version: String,
    pub scenario: String,
    /// The scenario's `table:` (kind, clock, rows, columns), so the report renders it alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<crate::config::table::TableSpec>,
    pub cells: Vec<CellReport>,
}

/// How a whole run ends, for the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every cell passed and every budget holds.
    Pass,
    /// Some run did not pass.
    RunFailed,
    /// Every run passed, but a budget was crossed (or could not be checked).
    BudgetViolated,
}

impl RunReport {
    pub fn status(&self) -> Status {
        if self.cells.iter().any(|c| c.verdict.outcome != Outcome::Pass) {
            Status::RunFailed
        } else if self.cells.iter().any(|c| !c.budgets_hold()) {
            Status::BudgetViolated
        } else {
            Status::Pass
        }
    }
}

impl RunReport {
    /// Joins reports of one scenario (e.g. the shards of `run --shard I/N`) into one, cells in
    /// the scenario's matrix order. Refuses reports of different scenarios or schemas and cells
    /// that appear twice.
    pub fn merge(reports: Vec<RunReport>) -> Result<RunReport, String> {
        let mut reports = reports.into_iter();
        let mut merged = reports.next().ok_or("no reports to merge")?;
        for r in reports {
            if r.scenario != merged.scenario {
                return Err(format!("cannot merge scenario `{}` into `{}`", r.scenario, merged.scenario));
            }
            if r.tool_version != merged.tool_version {
                return Err(format!(
                    "reports from mcubench {} and {} do not merge; rerun the shards with one version",
                    r.tool_version, merged.tool_version
                ));
            }
            merged.cells.extend(r.cells);
        }
        merged.cells.sort_by_key(|c| c.index);
        if let Some(w) = merged.cells.windows(2).find(|w| w[0].index == w[1].index) {
            return Err(format!("{} / {} appears in two reports", w[1].board, w[1].profile));
        }
        Ok(merged)
    }
}

/// [`Core`] in reports: its label, e.g. `Cortex-M4F`.
mod core_label {
    use mcubench_wire::Core;
    use serde::de::{Error, Unexpected};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(core: &Core, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(core.label())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Core, D::Error> {
        let label = String::deserialize(d)?;
        Core::ALL
            .into_iter()
            .find(|c| c.label() == label)
            .ok_or_else(|| D::Error::invalid_value(Unexpected::Str(&label), &"a core label such as `Cortex-M4F`"))
    }
}
