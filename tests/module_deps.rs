//! The dependencies between the top-level modules of `src/` go one way (no import
//! cycle): `main` → `cli` → the commands' modules → the analyses → `cfa`. This test
//! reads the sources (no compiler help): every `crate::…` and `super::…` path outside
//! `#[cfg(test)]` items is resolved to the module it names, and the graph of top-level
//! modules must be acyclic. Tests may reach upwards (a `tvla` test parses a formula
//! with `scg`'s parser), so test code is left out.
//!
//! Inside a top-level module, cycles between sibling submodules are allowed only where
//! [`ALLOWED_INNER_CYCLES`] lists them with the reason; a new one fails too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod source_util;

use source_util::{rs_files, strip_comments_and_strings};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Cycles between the submodules of one top-level module that are kept, each with the
/// reason it is not broken (sets of `module::submodule` names, as the test prints them).
const ALLOWED_INNER_CYCLES: &[(&[&str], &str)] = &[
    (
        &["frontend::lower", "frontend::types"],
        "the C type translation and the lowering of expressions call each other \
         (sizeof/typeof of an expression, array sizes): the type conversions are \
         methods of the lowering state `lower::Ctx` and report `lower::Unsup`",
    ),
    (
        &["tvla::coerce", "tvla::eval", "tvla::structure"],
        "a vocabulary (in structure.rs) holds its compiled formulas (eval), evaluation \
         reads structures, and a structure's own operations evaluate and coerce: one \
         data type and its algorithms, split by size; breaking it means moving Vocab \
         and the structure operations that evaluate into new modules",
    ),
];

/// One source file: its module path (`["tvla", "eval"]`) and its text with comments,
/// string literals and `#[cfg(test)]` items removed.
struct Source {
    module: Vec<String>,
    file: PathBuf,
    code: String,
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = read_sources(&src);
    assert!(sources.len() > 20, "read only {} files", sources.len());
    let tops: BTreeSet<String> = sources.iter().map(|s| s.module[0].clone()).collect();
    for m in ["cfa", "cegar", "tvla", "cli", "scg"] {
        assert!(tops.contains(m), "module {m} not found: {tops:?}");
    }
    // top-level edges, with the files that make them
    let mut top: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    // sibling edges inside a top-level module (`tvla::eval` -> `tvla::structure`)
    let mut inner: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let subs: BTreeSet<(String, String)> = sources
        .iter()
        .filter(|s| s.module.len() >= 2)
        .map(|s| (s.module[0].clone(), s.module[1].clone()))
        .collect();
    for s in &sources {
        let file = s
            .file
            .strip_prefix(&src)
            .unwrap_or(&s.file)
            .display()
            .to_string();
        for target in referenced_modules(&s.module, &s.code) {
            let Some(t0) = target.first() else { continue };
            if !tops.contains(t0) {
                continue;
            }
            if *t0 != s.module[0] {
                top.entry(s.module[0].clone())
                    .or_default()
                    .entry(t0.clone())
                    .or_default()
                    .insert(file.clone());
            } else if s.module.len() >= 2 && target.len() >= 2 {
                let (a, b) = (&s.module[1], &target[1]);
                if a != b && subs.contains(&(t0.clone(), b.clone())) {
                    inner
                        .entry(format!("{t0}::{a}"))
                        .or_default()
                        .entry(format!("{t0}::{b}"))
                        .or_default()
                        .insert(file.clone());
                }
            }
        }
    }
    let mut problems = Vec::new();
    for scc in cycles(&top) {
        problems.push(format!(
            "import cycle between top-level modules {}:\n{}",
            scc.iter().cloned().collect::<Vec<_>>().join(", "),
            describe(&top, &scc)
        ));
    }
    let inner_cycles = cycles(&inner);
    for (set, _) in ALLOWED_INNER_CYCLES {
        let still = inner_cycles
            .iter()
            .any(|scc| scc.iter().filter(|m| set.contains(&m.as_str())).count() >= 2);
        if !still {
            problems.push(format!(
                "the cycle {set:?} is gone: remove it from ALLOWED_INNER_CYCLES (and ARCHITECTURE.md)"
            ));
        }
    }
    for scc in inner_cycles {
        let allowed = ALLOWED_INNER_CYCLES
            .iter()
            .any(|(set, _)| scc.iter().all(|m| set.contains(&m.as_str())));
        if !allowed {
            problems.push(format!(
                "import cycle between submodules {} (break it, or list it with the reason in ALLOWED_INNER_CYCLES):\n{}",
                scc.iter().cloned().collect::<Vec<_>>().join(", "),
                describe(&inner, &scc)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_paths_groups_and_supers_and_skips_tests() {
    let code = strip(
        "use crate::{cfa::{Program, Op}, smt};\n\
         // use crate::commented;\n\
         fn f() { let s = \"crate::in_string\"; crate::interp::run(); super::sibling::g(); }\n\
         #[cfg(test)]\nmod tests { use crate::cli::Cli; }\n\
         #[cfg(test)]\nuse crate::bench::Task;\n",
    );
    let module = vec!["tvla".to_string(), "eval".to_string()];
    let got: BTreeSet<Vec<String>> = referenced_modules(&module, &code).into_iter().collect();
    let want: BTreeSet<Vec<String>> = [
        vec!["cfa", "Program"],
        vec!["cfa", "Op"],
        vec!["smt"],
        vec!["interp", "run"],
        vec!["tvla", "sibling"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    assert_eq!(got, want);
    let mut g: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(a.into())
            .or_default()
            .entry(b.into())
            .or_default()
            .insert("f.rs".into());
    }
    let sccs = cycles(&g);
    assert_eq!(sccs.len(), 1);
    assert_eq!(
        sccs[0],
        ["a", "b", "c"].into_iter().map(String::from).collect()
    );
}

/// Every `.rs` file under `src` except the binaries (`main.rs`, `bin/`), which sit
/// above everything, and the files of `#[cfg(test)] mod x;` declarations.
fn read_sources(src: &Path) -> Vec<Source> {
    let files = rs_files(src);
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut out = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap_or(f);
        if rel == Path::new("main.rs") || rel == Path::new("lib.rs") || rel.starts_with("bin") {
            continue;
        }
        let text = fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let no_comments = strip_comments_and_strings(&text);
        // `#[cfg(test)] mod x;`: x's file is test code
        let dir = if f.file_name().is_some_and(|n| n == "mod.rs") {
            f.parent().map(Path::to_path_buf)
        } else {
            Some(f.with_extension(""))
        };
        for m in cfg_test_mod_decls(&no_comments) {
            if let Some(d) = &dir {
                test_files.insert(d.join(format!("{m}.rs")));
                test_files.insert(d.join(&m).join("mod.rs"));
            }
        }
        let mut module: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|l| l == "mod") {
            module.pop();
        }
        out.push(Source {
            module,
            file: f.clone(),
            code: remove_cfg_test(&no_comments),
        });
    }
    out.retain(|s| !test_files.contains(&s.file));
    out
}

/// The source without comments, string and character literals, and `#[cfg(test)]` items.
fn strip(text: &str) -> String {
    remove_cfg_test(&strip_comments_and_strings(text))
}

/// Removes every item that follows `#[cfg(test)]` (a `mod`/`fn`/`impl` block up to
/// its closing brace, or a declaration up to its `;`).
fn remove_cfg_test(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let b: Vec<char> = item.chars().collect();
        // the item ends at the first `;` outside brackets, or at the brace closing
        // its first block
        let mut depth = 0i32;
        let mut end = b.len();
        for (k, &ch) in b.iter().enumerate() {
            match ch {
                '{' | '(' | '[' => depth += 1,
                '}' | ')' | ']' => {
                    depth -= 1;
                    if depth < 0 {
                        // the attribute was on the last field or statement of a block
                        end = k;
                        break;
                    }
                    if depth == 0 && ch == '}' {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        let skipped: String = b[..end].iter().collect();
        rest = &item[skipped.len()..];
    }
    out.push_str(rest);
    out
}

/// The names of `#[cfg(test)] mod x;` declarations (module files that are test code).
fn cfg_test_mod_decls(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let words: Vec<&str> = rest
            .split(|c: char| c.is_whitespace())
            .filter(|w| !w.is_empty())
            .take(3)
            .collect();
        let decl = match words.as_slice() {
            ["mod", name, ..] => Some(*name),
            ["pub" | "pub(crate)", "mod", name] => Some(*name),
            _ => None,
        };
        if let Some(name) = decl.and_then(|n| n.strip_suffix(';')) {
            out.push(name.to_string());
        }
    }
    out
}

/// The absolute module paths (first two segments at most) that the paths of `code`
/// starting with `crate::`, `super::` or `self::` name, from inside module `module`.
fn referenced_modules(module: &[String], code: &str) -> Vec<Vec<String>> {
    let toks = tokens(code);
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let t = toks[i].as_str();
        if !matches!(t, "crate" | "super" | "self") {
            continue;
        }
        // only the start of a path: not `x::super`, not `pub(crate)` / `pub(super)`
        if i >= 1 && toks[i - 1] == "::" {
            continue;
        }
        if toks.get(i + 1).map(String::as_str) != Some("::") {
            continue;
        }
        // the base module, then the segments after it
        let mut base: Vec<String> = match t {
            "crate" => Vec::new(),
            _ => module.to_vec(),
        };
        let mut j = i;
        if t == "super" {
            base.pop();
            j += 2;
            while toks.get(j).map(String::as_str) == Some("super")
                && toks.get(j + 1).map(String::as_str) == Some("::")
            {
                base.pop();
                j += 2;
            }
        } else {
            j += 2;
        }
        for tail in expand(&toks, j, 3) {
            let mut p = base.clone();
            p.extend(tail);
            p.truncate(2);
            if !p.is_empty() {
                out.push(p);
            }
        }
    }
    out
}

/// The continuations of a path at token `j`: identifiers joined by `::`, where a
/// `{a, b::c}` group yields one continuation per item; at most `max` segments.
fn expand(toks: &[String], j: usize, max: usize) -> Vec<Vec<String>> {
    if max == 0 {
        return vec![Vec::new()];
    }
    match toks.get(j).map(String::as_str) {
        Some("{") => {
            let mut out = Vec::new();
            let mut depth = 0;
            let mut start = j + 1;
            let mut k = j + 1;
            while k < toks.len() {
                match toks[k].as_str() {
                    "{" => depth += 1,
                    "}" if depth == 0 => {
                        if start < k {
                            out.extend(expand(toks, start, max));
                        }
                        break;
                    }
                    "}" => depth -= 1,
                    "," if depth == 0 => {
                        if start < k {
                            out.extend(expand(toks, start, max));
                        }
                        start = k + 1;
                    }
                    _ => {}
                }
                k += 1;
            }
            out
        }
        Some(id) if is_ident(id) && id != "self" => {
            let mut rest = if toks.get(j + 1).map(String::as_str) == Some("::") {
                expand(toks, j + 2, max - 1)
            } else {
                vec![Vec::new()]
            };
            for r in &mut rest {
                r.insert(0, id.to_string());
            }
            rest
        }
        _ => vec![Vec::new()],
    }
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphanumeric() || c[i] == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[s..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else if c[i].is_whitespace() {
            i += 1;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(succ) = t.g.get(v) {
            for w in succ.keys() {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(lw));
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(iw));
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The edges inside a component, with the files that make them.
fn describe(
    g: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    scc: &BTreeSet<String>,
) -> String {
    let mut s = String::new();
    for (a, succ) in g {
        if !scc.contains(a) {
            continue;
        }
        for (b, files) in succ {
            if scc.contains(b) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                s.push_str(&format!("  {a} -> {b} ({})\n", files.join(", ")));
            }
        }
    }
    s
}
