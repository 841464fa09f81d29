//! The `table:` key of a scenario: which published table the run's report renders (the
//! secure-boot, throughput or profile table), at which clock its time column is given, and which
//! rows, sizes and columns it shows. The table is a view of report fields (see `report/tables.rs`,
//! `report/throughput_table.rs`, `report/profile_table.rs` and the guide pages); this is only what
//! the user asked for.

use serde::{Deserialize, Serialize};

use crate::config::units::{Bytes, Hertz};

/// The kinds of table a scenario can declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    /// Per verify algorithm: code size, stack, header and signature size, hash/verify/boot
    /// cycles and boot time (firmware naming convention in `analyze/table.rs`).
    SecureBoot,
    /// Per algorithm and message size: cycles per byte, and MB/s at the cell's clock (KATs
    /// `<alg>/<size>` with `bytes=`), then cycles per operation of the other KATs (`ed25519/sign`).
    Throughput,
    /// Per profile and scheme: Mcycles per operation, stack, static RAM and heap.
    Profiles,
}

/// A column of the secure-boot table (`table.columns`), in the order given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Column {
    /// The whole firmware's flash use (every algorithm is in one image).
    FirmwareFlash,
    /// Bytes of the functions the row's boot path reaches through direct calls.
    VerifyCode,
    StackStatic,
    /// The static bound with the panic/abort paths cut (informative, never a sound bound).
    StackStaticExclPanic,
    StackMeasured,
    Header,
    Signature,
    PublicKey,
    HashCycles,
    VerifyCycles,
    BootCycles,
    BootTime,
    Kats,
}

impl Column {
    pub const ALL: [Column; 13] = [
        Column::FirmwareFlash,
        Column::VerifyCode,
        Column::StackStatic,
        Column::StackStaticExclPanic,
        Column::StackMeasured,
        Column::Header,
        Column::Signature,
        Column::PublicKey,
        Column::HashCycles,
        Column::VerifyCycles,
        Column::BootCycles,
        Column::BootTime,
        Column::Kats,
    ];
}

/// A scenario's `table:`, as the report carries it (so a report renders its table alone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSpec {
    pub kind: TableKind,
    /// The clock the time column is given at, Hz. Stated by the user, with 0 wait states (the
    /// cycle model's default); a board timing profile's clock takes its place. Required by the
    /// secure-boot table; optional for the others (cells without a clock then show no time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<u64>,
    /// The row keys to show, in order (`sha256`, `ed25519`, ...); empty: every row the firmware has.
    pub rows: Vec<String>,
    /// Throughput table: the message sizes to show, bytes, in order; empty: every size measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<u64>,
    /// The columns to show after board, profile and algorithm; empty: all.
    pub columns: Vec<Column>,
}

impl TableSpec {
    pub fn columns(&self) -> Vec<Column> {
        if self.columns.is_empty() { Column::ALL.to_vec() } else { self.columns.clone() }
    }
}

/// `table:` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTable {
    kind: TableKind,
    clock: Option<Hertz>,
    #[serde(default)]
    rows: Vec<String>,
    #[serde(default)]
    sizes: Vec<Bytes>,
    #[serde(default)]
    columns: Vec<Column>,
}

impl RawTable {
    pub(crate) fn spec(&self) -> Result<TableSpec, String> {
        if self.kind == TableKind::SecureBoot && self.clock.is_none() {
            return Err("table: missing field `clock` (the secure-boot table's time column needs a clock, e.g. \
                        `clock: 320 MHz`)"
                .into());
        }
        if self.kind != TableKind::Throughput && !self.sizes.is_empty() {
            return Err("table.sizes: only the throughput table has message sizes".into());
        }
        if self.kind != TableKind::SecureBoot && !self.columns.is_empty() {
            return Err("table.columns: only the secure-boot table has selectable columns".into());
        }
        for (i, b) in self.sizes.iter().enumerate() {
            if self.sizes[..i].contains(b) {
                return Err(format!("table.sizes: `{b}` is listed twice"));
            }
        }
        for (i, r) in self.rows.iter().enumerate() {
            if self.rows[..i].contains(r) {
                return Err(format!("table.rows: `{r}` is listed twice"));
            }
        }
        for (i, c) in self.columns.iter().enumerate() {
            if self.columns[..i].contains(c) {
                return Err(format!(
                    "table.columns: `{}` is listed twice",
                    serde_yaml_ng::to_string(c).unwrap_or_default().trim()
                ));
            }
        }
        Ok(TableSpec {
            kind: self.kind,
            clock_hz: self.clock.map(|c| c.0),
            rows: self.rows.clone(),
            sizes: self.sizes.iter().map(|b| b.0).collect(),
            columns: self.columns.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::scenario::Scenario;

    fn load(extra: &str) -> Result<Scenario, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.elf"), b"\x7fELF").unwrap();
        let yaml = format!("name: s\nfirmware: {{ elf: a.elf }}\nboards: [mps2-an505]\n{extra}");
        Scenario::from_yaml(&dir.path().join("s.yaml"), &yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_table_is_parsed_strictly() {
        let s = load("table: { kind: secure-boot, clock: 320 MHz, rows: [ed25519], columns: [boot-time] }\n").unwrap();
        let t = s.table.unwrap();
        assert_eq!((t.clock_hz, t.rows.len(), t.columns.len()), (Some(320_000_000), 1, 1));
        assert!(load("table: { kind: cycles, clock: 1 MHz }\n").unwrap_err().contains("unknown variant `cycles`"));
        assert!(load("table: { kind: secure-boot }\n").unwrap_err().contains("missing field `clock`"));
        assert!(load("table: { kind: secure-boot, clock: 320 }\n").unwrap_err().contains("give a unit"));
        assert!(
            load("table: { kind: secure-boot, clock: 1 MHz, rows: [a, a] }\n")
                .unwrap_err()
                .contains("`a` is listed twice")
        );
        assert!(
            load("table: { kind: secure-boot, clock: 1 MHz, columns: [boot-ms] }\n")
                .unwrap_err()
                .contains("unknown variant `boot-ms`")
        );
    }

    #[test]
    fn throughput_and_profile_tables_take_sizes_and_an_optional_clock() {
        let t = load("table: { kind: throughput, rows: [sha256], sizes: [16 B, 1 KiB] }\n").unwrap().table.unwrap();
        assert_eq!((t.kind, t.clock_hz, t.sizes), (super::TableKind::Throughput, None, vec![16, 1024]));
        assert!(load("table: { kind: profiles }\n").is_ok());
        let err = load("table: { kind: profiles, sizes: [16 B] }\n").unwrap_err();
        assert!(err.contains("only the throughput table has message sizes"), "{err}");
        let err = load("table: { kind: throughput, columns: [kats] }\n").unwrap_err();
        assert!(err.contains("only the secure-boot table has selectable columns"), "{err}");
        let err = load("table: { kind: throughput, sizes: [1 KiB, 1024] }\n").unwrap_err();
        assert!(err.contains("`1024 B` is listed twice"), "{err}");
        let err = load("table: { kind: throughput, sizes: [1 kb] }\n").unwrap_err();
        assert!(err.contains("unknown size unit `kb`"), "{err}");
    }

    #[test]
    fn a_time_budget_needs_a_clock_the_boards_or_the_tables() {
        let err = load("budgets: { time: { ed25519/boot: 12 ms } }\n").unwrap_err();
        assert!(err.contains("budgets.time: `ed25519/boot` needs a clock"), "{err}");
        let ok =
            load("budgets: { time: { ed25519/boot: 12 ms } }\ntable: { kind: secure-boot, clock: 320 MHz }\n").unwrap();
        assert_eq!(ok.measure("prebuilt").region_budgets.time["ed25519/boot"].0, 12_000);
        // A board timing profile's clock is enough on its own.
        let ok = load("budgets: { time: { ed25519/boot: 12 ms } }\ntiming: stm32h563\n").unwrap();
        assert_eq!(ok.measure("prebuilt").region_budgets.time["ed25519/boot"].0, 12_000);
    }
}
