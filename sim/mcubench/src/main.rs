//! The `mcubench` command: a thin layer over the library's [`mcubench::cli`].

fn main() -> std::process::ExitCode {
    mcubench::cli::main()
}
