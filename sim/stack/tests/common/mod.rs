//! Builds real ARM ELFs with the GNU Arm toolchain for the tests. No mocks: if a tool is missing,
//! the tests fail with a message saying how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcubench-stack-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `tool` (arm-none-eabi-gcc, -as, -ld) with `args` in `dir`; panics with its stderr when
/// it fails, or with how to install it when it is missing.
pub fn run(tool: &str, args: &[&str], dir: &Path) {
    let output = Command::new(tool).args(args).current_dir(dir).output().unwrap_or_else(|e| {
        panic!("{tool} could not be run ({e}): install the GNU Arm toolchain (apt-get install gcc-arm-none-eabi, see ci/setup.sh)")
    });
    assert!(output.status.success(), "{tool} {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
}
