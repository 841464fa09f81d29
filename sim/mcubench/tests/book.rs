//! The book under `docs/` builds, and no link in it, or into it, is broken.
//!
//! 1. `mdbook build docs` succeeds without warnings (`bash ci/setup.sh` installs mdbook).
//! 2. In the generated HTML, every relative `href`/`src` names a file of the book, and every
//!    `#fragment` is an `id` in the page it points to.
//! 3. In the Markdown sources (README.md, firmware/README.md, docs/src/**/*.md), every relative
//!    link names an existing file of the repository, and a `#fragment` into a Markdown file names
//!    one of its headings (GitHub's heading anchors), so the README's links work on GitHub.
//!
//! Plain string scanning: the HTML is mdbook's own output, and the Markdown keeps links simple.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// Every file under `dir` whose name ends with `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.to_string_lossy().ends_with(ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `path` with `.` and `..` resolved lexically (the target may not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Links that leave the repository or the book: not checked here.
fn is_external(target: &str) -> bool {
    target.starts_with("//")
        || target.contains("://")
        || ["mailto:", "data:", "javascript:", "tel:"].iter().any(|s| target.starts_with(s))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn html_unescape(text: &str) -> String {
    text.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// The values of every `name="..."` attribute in `html`.
fn attributes<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!(" {name}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&needle) {
        let value = &rest[at + needle.len()..];
        let end = value.find('"').unwrap_or(value.len());
        out.push(&value[..end]);
        rest = &value[end..];
    }
    out
}

/// Builds the book into a temporary directory; panics with what to do when mdbook is missing.
fn build_book(repo: &Path) -> tempfile::TempDir {
    let out = tempfile::tempdir().expect("temporary directory");
    let result = Command::new("mdbook").arg("build").arg(repo.join("docs")).arg("--dest-dir").arg(out.path()).output();
    let result = match result {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("`mdbook` is not installed (or not on PATH): run `bash ci/setup.sh`, which installs it")
        }
        Err(e) => panic!("cannot run `mdbook`: {e}"),
    };
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "`mdbook build docs` failed:\n{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN") || l.contains("ERROR")).collect();
    assert!(warnings.is_empty(), "`mdbook build docs` warned:\n{stderr}");
    out
}

/// Checks the generated HTML; returns one message per broken link.
fn check_html(book: &Path) -> Vec<String> {
    let pages = files(book, ".html");
    assert!(pages.len() > 5, "the book has only {} pages in {}", pages.len(), book.display());
    let mut ids: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let mut texts = HashMap::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        ids.insert(page.clone(), attributes(&text, "id").into_iter().map(html_unescape).collect());
        texts.insert(page.clone(), text);
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = &texts[page];
        let name = page.strip_prefix(book).unwrap_or(page).display().to_string();
        // 404.html sets <base href="/">: its relative links start at the book's root.
        let base = if text.contains("<base href=\"/\"") {
            book.to_path_buf()
        } else {
            page.parent().expect("a page is in a directory").to_path_buf()
        };
        for raw in attributes(text, "href").into_iter().chain(attributes(text, "src")) {
            let link = html_unescape(raw);
            if link.is_empty() || is_external(&link) {
                continue;
            }
            let (rest, fragment) = link.split_once('#').map_or((link.as_str(), None), |(a, b)| (a, Some(b)));
            let path = rest.split('?').next().unwrap_or(rest);
            let target = if path.is_empty() {
                page.clone()
            } else if let Some(absolute) = path.strip_prefix('/') {
                normalize(&book.join(percent_decode(absolute)))
            } else {
                normalize(&base.join(percent_decode(path)))
            };
            let target = if target.is_dir() { target.join("index.html") } else { target };
            if !target.starts_with(book) {
                broken
                    .push(format!("{name}: `{link}` leaves the book (write repository paths as `code`, not as links)"));
                continue;
            }
            if !target.is_file() {
                broken.push(format!("{name}: `{link}`: no such file in the book"));
                continue;
            }
            if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
                let fragment = percent_decode(fragment);
                match ids.get(&target) {
                    Some(known) if known.contains(&fragment) => {}
                    Some(_) => broken.push(format!("{name}: `{link}`: no id `{fragment}` in the target page")),
                    None => broken.push(format!("{name}: `{link}`: a fragment into a file that is not a page")),
                }
            }
        }
    }
    broken
}

/// GitHub's anchor for a heading: lowercase; letters, digits, `-` and `_` kept; spaces become `-`;
/// everything else dropped.
fn github_slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().collect::<String>())
            } else if c == ' ' {
                Some("-".into())
            } else {
                None
            }
        })
        .collect()
}

/// `text` without `[label](target)` targets: `label` stays.
fn link_labels(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let close = rest[at..].find(')').map(|c| at + c);
        out.push_str(&rest[..at]);
        match close {
            Some(c) => rest = &rest[c + 1..],
            None => {
                rest = &rest[at..];
                break;
            }
        }
    }
    out.push_str(rest);
    out.replace('[', "")
}

/// Lines of a Markdown file outside fenced code blocks, with their line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start().trim_start_matches("> ").trim_start();
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                match fence {
                    None => fence = Some(marker),
                    Some(m) if m == marker => fence = None,
                    Some(_) => {}
                }
            }
        }
        if fence.is_none() && !trimmed.starts_with("```") && !trimmed.starts_with("~~~") {
            out.push((i + 1, line));
        }
    }
    out
}

/// The GitHub anchors of every heading in a Markdown file (with `-1`, `-2` for repeats).
fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let mut l = line.trim_start();
        while let Some(rest) = l.strip_prefix('>') {
            l = rest.trim_start();
        }
        let level = l.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&level) || !l[level..].starts_with(' ') {
            continue;
        }
        let slug = github_slug(&link_labels(l[level..].trim().trim_end_matches('#')));
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// `line` without its inline code spans.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let ticks = rest[at..].chars().take_while(|&c| c == '`').count();
        let delimiter = "`".repeat(ticks);
        let body = &rest[at + ticks..];
        match body.find(&delimiter) {
            Some(end) => rest = &body[end + ticks..],
            None => {
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every inline link target `[...](target)` in a Markdown line.
fn markdown_links(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let body = &rest[at + 2..];
        let mut depth = 0usize;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        let target = body[..end].trim();
        // An optional title: `(target "title")`.
        let target = target.split_once(" \"").map_or(target, |(t, _)| t);
        out.push(target.trim_matches(|c| c == '<' || c == '>').to_string());
        rest = &body[end.min(body.len())..];
    }
    out
}

/// Checks the Markdown sources; returns one message per broken link.
fn check_markdown(repo: &Path) -> Vec<String> {
    let mut sources = vec![repo.join("README.md"), repo.join("firmware/README.md")];
    sources.extend(files(&repo.join("docs/src"), ".md"));
    let mut broken = Vec::new();
    for source in &sources {
        let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        let name = source.strip_prefix(repo).unwrap_or(source).display().to_string();
        for (number, line) in prose_lines(&text) {
            for link in markdown_links(line) {
                if link.is_empty() || is_external(&link) {
                    continue;
                }
                let (path, fragment) = link.split_once('#').map_or((link.as_str(), None), |(a, b)| (a, Some(b)));
                let target = if path.is_empty() {
                    source.clone()
                } else {
                    normalize(&source.parent().expect("in a directory").join(percent_decode(path)))
                };
                if !target.starts_with(repo) {
                    broken.push(format!("{name}:{number}: `{link}` leaves the repository"));
                    continue;
                }
                if !target.exists() {
                    broken.push(format!("{name}:{number}: `{link}`: no such file"));
                    continue;
                }
                if let Some(fragment) = fragment.filter(|f| !f.is_empty())
                    && target.extension().is_some_and(|e| e == "md")
                {
                    let target_text = std::fs::read_to_string(&target).expect("readable Markdown");
                    if !heading_anchors(&target_text).contains(&percent_decode(fragment)) {
                        broken.push(format!("{name}:{number}: `{link}`: no heading with anchor `#{fragment}`"));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn the_book_builds_and_every_link_resolves() {
    let repo = repo();
    let book = build_book(&repo);
    let book_dir = book.path().canonicalize().expect("book directory");

    // Every page under docs/src is in SUMMARY.md, so it is built (mdbook skips unlisted files).
    let src = repo.join("docs/src");
    let mut problems: Vec<String> = files(&src, ".md")
        .iter()
        .filter(|md| md.file_name().is_none_or(|n| n != "SUMMARY.md"))
        .filter(|md| !book_dir.join(md.strip_prefix(&src).unwrap().with_extension("html")).is_file())
        .map(|md| format!("{}: not in docs/src/SUMMARY.md, so not in the book", md.display()))
        .collect();
    problems.extend(check_html(&book_dir));
    problems.extend(check_markdown(&repo));
    assert!(problems.is_empty(), "{} broken link(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_link_scanners_see_what_they_must() {
    assert_eq!(github_slug("Baseline and diff"), "baseline-and-diff");
    assert_eq!(github_slug("`cells[].regions[]`"), "cellsregions");
    assert_eq!(github_slug("`regions`"), "regions");
    assert_eq!(github_slug("C (newlib malloc)"), "c-newlib-malloc");
    assert_eq!(
        markdown_links("see [a](x.md#y) and `[not](a link)` and [b](../c/d.md \"title\")"),
        ["x.md#y", "../c/d.md"]
    );
    let anchors = heading_anchors("# Top\n```\n# not a heading\n```\n## Top\n### Uses [a link](x.md)\n");
    assert_eq!(anchors.into_iter().collect::<Vec<_>>(), ["top", "top-1", "uses-a-link"]);
    assert_eq!(attributes(r#"<a href="a.html#b" id="c">"#, "href"), ["a.html#b"]);
    assert_eq!(normalize(Path::new("/b/x/../y/./z.html")), Path::new("/b/y/z.html"));
}
