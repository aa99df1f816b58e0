//! The sources of `src/` stay readable in pieces: no file over [`MAX_FILE_LINES`]
//! lines and no function over [`MAX_FN_LINES`] lines (issue #31). Like the import-cycle
//! check (`module_deps`), this test reads the sources without compiler help: a
//! function is the text from its `fn` keyword to the brace closing its body (doc
//! comments and attributes not counted), found after comments and literals are
//! blanked. Tests count too. A file or function past a limit is split: submodules by
//! construct family, helper functions with their own doc comment.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a test failure

mod source_util;

use source_util::{rs_files, strip_comments_and_strings};
use std::fs;
use std::path::Path;

/// The most lines a source file under `src/` may have.
const MAX_FILE_LINES: usize = 1500;
/// The most lines a function may have, from `fn` to its closing brace.
const MAX_FN_LINES: usize = 150;

#[test]
fn no_source_file_or_function_is_too_long() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rs_files(&src);
    assert!(files.len() > 20, "read only {} files", files.len());
    let mut problems = Vec::new();
    let mut fns = 0;
    for f in &files {
        let text = fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = f.strip_prefix(&src).unwrap_or(f).display().to_string();
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            problems.push(format!(
                "src/{name}: {lines} lines (at most {MAX_FILE_LINES}: split it into submodules)"
            ));
        }
        for (func, line, len) in functions(&strip_comments_and_strings(&text)) {
            fns += 1;
            if len > MAX_FN_LINES {
                problems.push(format!(
                    "src/{name}:{line}: fn {func} has {len} lines (at most {MAX_FN_LINES}: extract helpers)"
                ));
            }
        }
    }
    assert!(fns > 1000, "found only {fns} functions");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_measures_functions_from_fn_to_the_closing_brace() {
    let code = strip_comments_and_strings(
        "/// doc\n\
         fn a(x: u32) -> u32 {\n\
         \x20   let s = \"}\n}\";\n\
         \x20   /* { */ x\n\
         }\n\
         trait T {\n\
         \x20   fn b(&self);\n\
         \x20   fn c(&self, f: fn(u32) -> u32) -> [u8; 2] { [0; 2] }\n\
         }\n",
    );
    assert_eq!(
        code.lines().count(),
        10,
        "line breaks inside literals are kept"
    );
    assert_eq!(
        functions(&code),
        vec![("a".to_string(), 2, 5), ("c".to_string(), 9, 1)]
    );
}

/// The functions with a body in `code` (comments and literals blanked): name, line of
/// the `fn` keyword (from 1) and number of lines up to the closing brace.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let c: Vec<char> = code.chars().collect();
    // the line of each character (from 1)
    let line_at: Vec<usize> = c
        .iter()
        .scan(1, |line, &ch| {
            let at = *line;
            *line += usize::from(ch == '\n');
            Some(at)
        })
        .collect();
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < c.len() {
        let keyword = c[i] == 'f'
            && c[i + 1] == 'n'
            && c[i + 2].is_whitespace()
            && (i == 0 || !is_ident(c[i - 1]));
        if !keyword {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < c.len() && c[j].is_whitespace() {
            j += 1;
        }
        let name: String = c[j..].iter().take_while(|&&ch| is_ident(ch)).collect();
        if name.is_empty() {
            i += 2;
            continue;
        }
        // the body: the first `{` outside parentheses and brackets; none before a `;`
        let mut depth = 0i32;
        let mut body = None;
        while j < c.len() {
            match c[j] {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    body = Some(j);
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        if let Some(open) = body {
            let mut braces = 0i32;
            let mut end = open;
            for (k, &ch) in c.iter().enumerate().skip(open) {
                match ch {
                    '{' => braces += 1,
                    '}' => braces -= 1,
                    _ => {}
                }
                if braces == 0 {
                    end = k;
                    break;
                }
            }
            let (first, last) = (line_at[i], line_at[end]);
            out.push((name, first, last - first + 1));
        }
        i += 2;
    }
    out
}
