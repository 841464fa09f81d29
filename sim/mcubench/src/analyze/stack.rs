//! Static stack bounds for a board's ELF: the analyzer of `mcubench-elf` with the board's core
//! and the annotation file that sits next to the scenario (`kat.yaml` → `kat.stack.yaml`),
//! whose `priorities:` groups become [`StackOptions::priority_groups`].

use std::path::Path;

use mcubench_elf::ElfImage;
use mcubench_stack::{StackOptions, StackReport};

use crate::config::board::Board;
use mcubench_stack::annotations::{AnnotationFile, Ignored};

/// Analyzes `image` for `board`; `annotations` is an annotation file (absent = none). Also
/// returns the annotation entries this ELF has no function for (see [`AnnotationFile::resolve`]).
pub fn analyze(
    image: &ElfImage,
    board: &Board,
    annotations: Option<&Path>,
) -> Result<(StackReport, Vec<Ignored>), String> {
    let (arch, fpu) = board.arch();
    let (annotations, priority_groups, ignored) = match annotations {
        Some(path) => {
            let file = AnnotationFile::load(path).map_err(|e| e.to_string())?;
            let (annotations, mut ignored) = file.resolve(image).map_err(|e| e.to_string())?;
            let (groups, more) = file.priority_groups(image);
            ignored.extend(more);
            (annotations, groups, ignored)
        }
        None => Default::default(),
    };
    let options = StackOptions { arch, fpu, annotations, priority_groups, ..StackOptions::default() };
    let report = mcubench_stack::analyze(image, &options).map_err(|e| format!("{}: {e}", image.path().display()))?;
    Ok((report, ignored))
}

/// One board × profile of a scenario, analysed.
#[derive(Debug)]
pub struct Cell {
    pub board: String,
    pub profile: String,
    pub elf: std::path::PathBuf,
    pub report: StackReport,
    /// Annotation entries this ELF has no function for.
    pub ignored: Vec<Ignored>,
    /// The annotation file this cell read, if any.
    pub annotations: Option<std::path::PathBuf>,
}

/// The annotation file of a scenario's cell: `NAME.PROFILE.stack.yaml` next to the scenario when
/// it exists (a build-matrix variant or profile of its own), else `NAME.stack.yaml` when that
/// exists.
pub fn annotation_file(scenario: &Path, profile: &str) -> Option<std::path::PathBuf> {
    let general = mcubench_stack::annotations::path_for_scenario(scenario);
    let stem = scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
    let specific = scenario.with_file_name(format!("{stem}.{profile}.stack.yaml"));
    [specific, general].into_iter().find(|p| p.is_file())
}

/// Whether `path` names a scenario (`.yaml`/`.yml`) rather than an ELF.
pub fn is_scenario_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Analyses every board × profile of the scenario at `path` (those named by `boards` and
/// `profiles` when given): builds Cargo firmware as `mcubench run` does (or takes the prebuilt
/// ELF) and uses `annotations`, else the scenario's own annotation file when it has one
/// ([`mcubench_stack::annotations::path_for_scenario`]).
pub fn analyze_scenario(
    path: &Path,
    boards: &[String],
    profiles: &[String],
    annotations: Option<&Path>,
) -> Result<Vec<Cell>, crate::Error> {
    use crate::Error::Input;
    let mut s = crate::config::scenario::Scenario::load(path).map_err(|e| Input(e.to_string()))?;
    s.restrict(boards, profiles).map_err(Input)?;
    let source = crate::build::ElfSource::new(&s.firmware)?;
    let mut cells = Vec::new();
    for &b in &s.boards {
        for p in &s.profiles {
            let elf = source.elf(b, p)?;
            let image = ElfImage::read(&elf).map_err(|e| Input(e.to_string()))?;
            let file = annotations.map(Path::to_path_buf).or_else(|| annotation_file(path, &p.name));
            let (report, ignored) = analyze(&image, b, file.as_deref()).map_err(Input)?;
            cells.push(Cell {
                board: b.name.to_string(),
                profile: p.name.clone(),
                elf,
                report,
                ignored,
                annotations: file,
            });
        }
    }
    Ok(cells)
}

/// Text for `mcubench stack SCENARIO`: one section per cell.
pub fn cells_text(cells: &[Cell], functions: &[&str]) -> String {
    let mut s = String::new();
    for (k, c) in cells.iter().enumerate() {
        if k > 0 {
            s.push('\n');
        }
        s.push_str(&format!("== {} / {} ({})\n", c.board, c.profile, c.elf.display()));
        s.push_str(&c.report.to_text(functions));
    }
    s
}

/// JSON for `mcubench stack SCENARIO --format json`: an array of cells, each the
/// [`StackReport::view`] with `board`, `profile`, `elf` and `ignored` annotation entries.
pub fn cells_json(cells: &[Cell], functions: &[&str]) -> serde_json::Value {
    serde_json::Value::Array(
        cells
            .iter()
            .map(|c| {
                let mut v = serde_json::to_value(c.report.view(functions)).expect("serializable");
                if let serde_json::Value::Object(m) = &mut v {
                    m.insert("board".into(), c.board.clone().into());
                    m.insert("profile".into(), c.profile.clone().into());
                    m.insert("elf".into(), c.elf.display().to_string().into());
                    let ignored: Vec<String> = c.ignored.iter().map(Ignored::to_string).collect();
                    m.insert("ignored".into(), ignored.into());
                }
                v
            })
            .collect(),
    )
}
