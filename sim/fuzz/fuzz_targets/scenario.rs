//! Any text as a scenario file: a scenario or an error that names the file, never a panic.
//! Relative paths resolve in a fixture directory that holds a firmware crate (`fw/Cargo.toml`),
//! an ELF (`app.elf`) and a vector file (`v.txt`), so valid scenarios get past the path checks.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcubench::Scenario;

fn fixture() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mcubench-fuzz-scenario-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("fw")).unwrap();
        std::fs::write(dir.join("fw/Cargo.toml"), "[package]\nname = \"fw\"\n").unwrap();
        std::fs::write(dir.join("app.elf"), b"\x7fELF").unwrap();
        std::fs::write(dir.join("v.txt"), "a/1 SHA3-256 msg=cc out=00\n").unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = fixture().join("s.yaml");
    match Scenario::from_yaml(&path, text) {
        Ok(s) => {
            assert!(!s.boards.is_empty() && !s.profiles.is_empty());
            for p in &s.profiles {
                let _ = s.regressions(&p.name);
            }
        }
        Err(e) => assert!(e.to_string().starts_with(&path.display().to_string()), "{e}"),
    }
});
