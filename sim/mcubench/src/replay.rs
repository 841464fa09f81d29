//! Pricing a run again from its trace, without QEMU: what makes `mcubench calibrate` fast.
//!
//! A cell run with [`crate::RunOptions::trace`] has the plugin also write a run trace
//! (`mcubench_wire::trace`: the translated blocks, the order they ran in, the data loads the
//! memory system prices, the snapshots and the completed region activations). [`replay`] feeds
//! that trace through the run-time pricer the plugin itself prices with
//! (`mcubench_timing::run::Pricer`, blocks priced by `TbPrice::new`), with any model parameters,
//! and returns the run's plugin results with every cycle figure priced again. The cycle model is
//! one implementation: a replay with the traced run's parameters gives its results exactly, and
//! a replay with other parameters gives exactly what a live run with them would (tested against
//! live runs in `tests/calibrate_replay.rs`). Instruction counts do not depend on the model and
//! are the traced run's.
//!
//! DWT cycle-counter intervals are replayed from the reads the trace records.
//!
//! Limits: per-site cycle figures (`sites`) are not replayed (the trace does not pair activations
//! with call sites) and are left out of a replayed result; the per-function profile is not
//! replayed either.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcubench_thumb::Decoder;
use mcubench_timing::run::{Pricer, TbPrice, model_for};
use mcubench_wire::trace::{Event, TraceReader};
use mcubench_wire::{Core, MemoryConfig, Results, WaitStates};

/// What a traced cell run leaves for replays (not part of the report).
#[derive(Debug, Clone, Default)]
pub struct Traced {
    /// The trace file.
    pub trace: PathBuf,
    /// Whether the run priced exceptions (the ELF has handlers).
    pub handlers: bool,
    /// The plugin's results of the traced run.
    pub results: Results,
    /// Each KAT's marker region id, from the firmware's records.
    pub kat_regions: Vec<(String, u32)>,
    /// The pairs of DWT cycle-counter accesses, named and placed as the report gives them (the
    /// live run's counts, which a replay prices again).
    pub counter_pairs: Vec<crate::report::CounterInterval>,
}

/// The cycle model to replay with: what the plugin gets as `core=`, `wait=`, `param=` and the
/// memory-system arguments.
#[derive(Debug, Clone)]
pub struct ModelArgs {
    pub core: Core,
    pub wait_states: Vec<WaitStates>,
    pub params: Vec<(String, String)>,
    pub memory: MemoryConfig,
}

impl ModelArgs {
    /// The model a cell of `scenario` runs with on `board` in build profile `profile` (what
    /// the pipeline gives the plugin).
    pub fn for_cell(scenario: &crate::Scenario, board: &crate::Board, profile: &str) -> ModelArgs {
        let measure = scenario.measure(profile);
        let model = measure.model_for(board);
        ModelArgs {
            core: model.core,
            wait_states: measure.wait_states.clone(),
            params: model.param_args(),
            memory: model.memory.clone(),
        }
    }
}

/// Per region id: the cycles of each completed activation, in completion order.
type Activations = BTreeMap<u32, Vec<u64>>;

/// Prices the run traced in `data` with `model`; `base`: the traced run's results, whose cycle
/// figures are replaced. `Err` for a trace that cannot be read or is incomplete.
pub fn replay(data: &[u8], handlers: bool, model: &ModelArgs, base: &Results) -> Result<Results, String> {
    let m = model_for(model.core, &model.wait_states, &model.params)?;
    let decoder = Decoder::for_core(model.core).map_err(|e| format!("no decoder for {}: {e}", model.core))?;
    let mut pricer = Pricer::new(m, &model.memory, handlers);
    let data_side = pricer.data_side();
    let mut reader = TraceReader::new(data)?;
    let mut blocks: Vec<TbPrice> = Vec::new();
    let mut cycles = 0u64;
    let mut unavailable: Option<String> = None;
    let mut current: Option<usize> = None;
    let mut snapshots: Vec<u64> = Vec::new();
    let (mut regions, mut functions) = (Activations::new(), Activations::new());
    let mut ended = false;
    // DWT cycle-counter reads: the last one (address, cycles through it), the intervals' cycles.
    let mut last_access: Option<(u32, u64)> = None;
    let mut reads: BTreeMap<(u32, u32), (u64, u64, u64)> = BTreeMap::new();
    while let Some(event) = reader.next_event()? {
        match event {
            Event::Block { start, handler, bytes } => {
                let (insns, err) = decoder.decode_block(start, bytes);
                blocks.push(match err {
                    // The plugin's words (`cost::price`), so that a replay says what a live run says.
                    Some(e) => TbPrice::unpriced(
                        &pricer.model,
                        start,
                        handler,
                        format!("undecodable instruction in the block at 0x{start:08x}: {e}"),
                    ),
                    None => TbPrice::new(&pricer.model, pricer.memory(), start, insns, handler),
                });
            }
            Event::Exec { id, snapshot } => {
                let tb = blocks.get(id as usize).ok_or_else(|| format!("block {id} ran before it was translated"))?;
                let step = pricer.enter(tb);
                cycles = cycles.wrapping_add(step.exception).wrapping_add(step.taken);
                if snapshot {
                    snapshots.push(cycles);
                }
                cycles = cycles.wrapping_add(step.own);
                if let Some(e) = &tb.error
                    && unavailable.is_none()
                {
                    unavailable = Some(e.clone());
                }
                current = Some(id as usize);
            }
            Event::Load { addr, size } if data_side => cycles = cycles.wrapping_add(pricer.load(addr, size)),
            Event::Load { .. } => {}
            Event::Access { stopped, read, write } => {
                if let (Some(c), Some(index)) = (current, stopped) {
                    cycles = cycles.wrapping_sub(pricer.abandon(&blocks[c], index as usize));
                }
                if let Some(pc) = read
                    && let Some((from, at)) = last_access
                {
                    let c = cycles.wrapping_sub(at);
                    let (sum, min, max) = reads.entry((from, pc)).or_insert((0, u64::MAX, 0));
                    (*sum, *min, *max) = (*sum + c, (*min).min(c), (*max).max(c));
                }
                // A read or a write of the counter: where the next read counts from.
                if let Some(pc) = read.or(write) {
                    last_access = Some((pc, cycles));
                }
            }
            Event::MarkerSnapshot { index } => {
                let tail = current.map_or(0, |c| blocks[c].cycles_after(&pricer.model, index as usize));
                snapshots.push(cycles.wrapping_sub(tail));
            }
            Event::Activation { function, id, first, last } => {
                let at = |n: u64| {
                    snapshots
                        .get(n as usize)
                        .copied()
                        .ok_or_else(|| format!("activation of region {id}: no snapshot {n}"))
                };
                let c = at(last)?.saturating_sub(at(first)?);
                let map = if function { &mut functions } else { &mut regions };
                map.entry(id).or_default().push(c);
            }
            Event::End => ended = true,
        }
    }
    if !ended {
        return Err("the trace ends before the run did (QEMU was stopped, or the file was cut)".into());
    }
    let mut out = base.clone();
    if let Some(c) = &mut out.cycles {
        c.model = pricer.describe();
        c.total = match unavailable {
            Some(reason) => Err(reason),
            None => Ok(cycles),
        };
    }
    for (pair, interval) in out.intervals.iter_mut() {
        interval.cycles = reads.get(pair).copied().ok_or_else(|| {
            format!("the trace has no reads 0x{:08x} → 0x{:08x} of the DWT cycle counter", pair.0, pair.1)
        })?;
    }
    for (stats, activations) in [(&mut out.regions, &regions), (&mut out.functions, &functions)] {
        for (id, s) in stats.iter_mut() {
            let a = activations.get(id).map_or(&[][..], Vec::as_slice);
            if a.len() as u64 != s.completed {
                return Err(format!(
                    "region {id}: the trace has {} completed activations, the results {}",
                    a.len(),
                    s.completed
                ));
            }
            if s.cycles.is_some() {
                let (sum, min, max) = (a.iter().sum(), a.iter().copied().min(), a.iter().copied().max());
                s.cycles = Some((sum, min.unwrap_or(0), max.unwrap_or(0)));
            }
            for (call, &c) in s.calls.iter_mut().zip(a) {
                if call.cycles.is_some() {
                    call.cycles = Some(c);
                }
            }
            s.sites.clear();
        }
    }
    Ok(out)
}
