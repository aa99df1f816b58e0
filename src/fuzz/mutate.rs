//! Mutation operators of the fuzz campaign: text mutations of C and SCG files (lines,
//! tokens, integers, characters, random bytes, truncation, inserted constructs) and value
//! and byte mutations of JSON inputs (counterexamples, certificates). Every function
//! draws only from the generator it is given, so a fixed seed gives the same mutants.

use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::Value;

/// A construct a text mutation may insert: `inside` at the start of a line within braces
/// (a statement in a function body, a clause in an SCG structure), `at_end` appended to
/// the file (a definition the statement uses). Either may be empty.
#[derive(Clone, Copy, Debug)]
pub struct Construct {
    /// Short name, for the mutation's description.
    pub name: &'static str,
    /// Inserted as a line inside braces.
    pub inside: &'static str,
    /// Appended at the end of the file.
    pub at_end: &'static str,
}

/// The language-specific part of the text mutations: which tokens replace each other and
/// which constructs may be inserted.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// Pairs of whole tokens replaced by each other, in either direction.
    pub token_pairs: &'static [(&'static str, &'static str)],
    /// Constructs for [`TextOp::InsertConstruct`].
    pub constructs: &'static [Construct],
    /// Braces of code blocks (C): statements go only where one may start in a function
    /// body (after `;`, `{` or `}` inside a block opened after `)`, `else` or `do`), not
    /// into struct bodies or initialisers; otherwise anywhere inside braces.
    pub code_blocks: bool,
}

const fn c(name: &'static str, inside: &'static str, at_end: &'static str) -> Construct {
    Construct {
        name,
        inside,
        at_end,
    }
}

/// C: operators, fields, `NULL`/`0`, and constructs outside or at the edge of the
/// supported subset (goto, unions, casts, function pointers, `&x`, recursion, endless
/// loops, undefined behaviour).
pub const C: Dialect = Dialect {
    token_pairs: &[
        ("==", "!="),
        ("<", "<="),
        (">", ">="),
        ("->next", "->prev"),
        ("->left", "->right"),
        ("->next", "->data"),
        ("NULL", "0"),
        ("+", "-"),
        ("&&", "||"),
        ("!", ""),
        ("free", "(void)"),
        ("int", "long"),
        ("int", "unsigned"),
        ("while", "if"),
        ("break", "continue"),
    ],
    constructs: &[
        c("goto forward", "goto fz_l1; fz_l1: ;", ""),
        c(
            "goto backward",
            "fz_l2: if (__VERIFIER_nondet_int()) goto fz_l2;",
            "",
        ),
        c(
            "union",
            "{ union { int i; void *p; } fz_u; fz_u.i = 1; if (fz_u.p) fz_u.i = 2; }",
            "",
        ),
        c("global union", "", "union fz_g { int i; char c[4]; } fz_g;"),
        c(
            "cast",
            "{ long fz_c = (long)(void *)&fz_c; int *fz_q = (int *)fz_c; (void)fz_q; }",
            "",
        ),
        c(
            "cast to struct pointer",
            "{ struct node *fz_n = (struct node *)__VERIFIER_nondet_int(); if (fz_n) fz_n = 0; }",
            "",
        ),
        c(
            "function pointer",
            "{ int (*fz_fp)(void) = __VERIFIER_nondet_int; if (fz_fp()) fz_fp = 0; }",
            "",
        ),
        c(
            "address of a local",
            "{ int fz_x = __VERIFIER_nondet_int(); int *fz_p = &fz_x; *fz_p = *fz_p + 1; }",
            "",
        ),
        c(
            "recursion",
            "{ int fz_rec(int); fz_rec(__VERIFIER_nondet_int()); }",
            "int fz_rec(int n) { if (n > 0) return fz_rec(n - 1); return 0; }",
        ),
        c("endless loop", "while(1);", ""),
        c("endless for", "for (;;) { }", ""),
        c("nondet loop", "while (__VERIFIER_nondet_int()) { }", ""),
        c("reach_error", "reach_error();", ""),
        c("abort", "abort();", ""),
        c("early return", "return 0;", ""),
        c(
            "division",
            "{ int fz_d = __VERIFIER_nondet_int(); fz_d = 100 / fz_d; }",
            "",
        ),
        c(
            "double free",
            "{ void *fz_m = malloc(4); free(fz_m); free(fz_m); }",
            "",
        ),
        c(
            "array",
            "{ int fz_a[3]; fz_a[__VERIFIER_nondet_int() & 3] = 1; }",
            "",
        ),
        c(
            "string",
            "{ const char *fz_s = \"a\\0b\"; (void)fz_s[1]; }",
            "",
        ),
        c(
            "switch",
            "switch (__VERIFIER_nondet_int()) { case 1: break; default: ; }",
            "",
        ),
        c(
            "overflow",
            "{ int fz_v = 2147483647; fz_v = fz_v + 1; fz_v = fz_v << 31; }",
            "",
        ),
        c(
            "struct copy",
            "{ struct fz_s { int a; int *b; } fz_s1 = {0}, fz_s2; fz_s2 = fz_s1; (void)fz_s2; }",
            "",
        ),
        c("self-referential global", "", "void *fz_self = &fz_self;"),
    ],
    code_blocks: true,
};

/// SCG DSL (`scg-library/*.scg`): connectives, quantifiers, fields, keywords, and
/// clauses that refer to missing or recursive definitions.
pub const SCG: Dialect = Dialect {
    token_pairs: &[
        ("&", "|"),
        ("E", "A"),
        ("==", "!="),
        ("next", "prev"),
        ("u", "v"),
        ("!", ""),
        ("TC", "tc"),
        ("pred", "nonabs pred"),
        ("always", ""),
        ("requires", "refines"),
        ("family", "structure"),
        ("roles", "requires"),
        (";", ""),
    ],
    constructs: &[
        c(
            "recursive predicate",
            "pred fz[next](v) := fz[next](v);",
            "",
        ),
        c(
            "unknown predicate",
            "pred fz2(v) := nosuch(v) & E w. next(v, w);",
            "",
        ),
        c("unknown invariant", "requires nosuch(next);", ""),
        c("unknown refinement", "refines nosuch (next=next);", ""),
        c("extra role", "roles fz;", ""),
        c("empty family", "family fz3 for x { }", ""),
        c(
            "duplicate structure",
            "",
            "structure sll { roles next; requires acyclic_list(next); }",
        ),
        c("empty structure", "", "structure fz { }"),
        c(
            "deep formula",
            "pred fz4(v) := !!!!!!!!!!(v == v) & TC(a, b: TC(c, d: next(c, d))(a, b))(v, v);",
            "",
        ),
    ],
    code_blocks: false,
};

/// The text mutation operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextOp {
    /// Delete a line.
    DeleteLine,
    /// Duplicate a line.
    DuplicateLine,
    /// Swap two lines.
    SwapLines,
    /// Replace a whole token by its partner in [`Dialect::token_pairs`].
    ReplaceToken,
    /// Replace an integer literal by an interesting value.
    ChangeInteger,
    /// Delete one character (often a brace, parenthesis or semicolon).
    DeleteChar,
    /// Insert 1 to 8 random bytes (NUL, invalid UTF-8, quotes, braces, ...).
    InsertBytes,
    /// Cut the file at a random position.
    Truncate,
    /// Insert one of [`Dialect::constructs`].
    InsertConstruct,
}

impl TextOp {
    /// All operators with their weights (those that mostly break the syntax are rarer:
    /// a mutant that parses reaches the analysis).
    pub const WEIGHTED: &'static [(TextOp, u32)] = &[
        (TextOp::DeleteLine, 3),
        (TextOp::DuplicateLine, 3),
        (TextOp::SwapLines, 3),
        (TextOp::ReplaceToken, 8),
        (TextOp::ChangeInteger, 4),
        (TextOp::DeleteChar, 2),
        (TextOp::InsertBytes, 2),
        (TextOp::Truncate, 1),
        (TextOp::InsertConstruct, 6),
    ];
}

/// Applies 1 to 3 operators (drawn by [`TextOp::WEIGHTED`]) to `input`; returns the
/// mutant and a description of what was done (`; `-separated).
pub fn mutate_text<R: Rng>(rng: &mut R, input: &[u8], dialect: &Dialect) -> (Vec<u8>, String) {
    let rounds = 1 + usize::from(rng.gen_bool(0.3)) + usize::from(rng.gen_bool(0.1));
    let mut cur = input.to_vec();
    let mut what = Vec::new();
    for _ in 0..rounds {
        // an operator may not apply (no token to replace); try a few times
        for _ in 0..8 {
            let op = TextOp::WEIGHTED
                .choose_weighted(rng, |(_, w)| *w)
                .map(|(op, _)| *op)
                .unwrap_or(TextOp::DeleteChar);
            if let Some((next, desc)) = apply_text_op(rng, op, &cur, dialect) {
                cur = next;
                what.push(desc);
                break;
            }
        }
    }
    if what.is_empty() {
        // only for an empty input: give it some bytes
        let (next, desc) = insert_bytes(rng, &cur);
        cur = next;
        what.push(desc);
    }
    (cur, what.join("; "))
}

/// Applies one operator; `None` when it does not apply to `input` (e.g. no line to swap,
/// no token of the dialect).
pub fn apply_text_op<R: Rng>(
    rng: &mut R,
    op: TextOp,
    input: &[u8],
    dialect: &Dialect,
) -> Option<(Vec<u8>, String)> {
    let lines: Vec<&[u8]> = input.split_inclusive(|&b| b == b'\n').collect();
    match op {
        TextOp::DeleteLine => {
            if lines.is_empty() {
                return None;
            }
            let i = rng.gen_range(0..lines.len());
            let mut out = Vec::with_capacity(input.len());
            for (j, l) in lines.iter().enumerate() {
                if j != i {
                    out.extend_from_slice(l);
                }
            }
            Some((out, format!("delete line {}", i + 1)))
        }
        TextOp::DuplicateLine => {
            if lines.is_empty() {
                return None;
            }
            let i = rng.gen_range(0..lines.len());
            let mut out = Vec::with_capacity(input.len() + lines[i].len() + 1);
            for (j, l) in lines.iter().enumerate() {
                out.extend_from_slice(l);
                if j == i {
                    if !l.ends_with(b"\n") {
                        out.push(b'\n');
                    }
                    out.extend_from_slice(l);
                }
            }
            Some((out, format!("duplicate line {}", i + 1)))
        }
        TextOp::SwapLines => {
            if lines.len() < 2 {
                return None;
            }
            // mostly neighbours (more often still a program), sometimes any two lines
            let (i, j) = if rng.gen_bool(0.7) {
                let i = rng.gen_range(0..lines.len() - 1);
                (i, i + 1)
            } else {
                let i = rng.gen_range(0..lines.len());
                let j = rng.gen_range(0..lines.len() - 1);
                (i, if j >= i { j + 1 } else { j })
            };
            let mut order: Vec<&[u8]> = lines.clone();
            order.swap(i, j);
            let mut out = Vec::with_capacity(input.len() + 1);
            for l in order {
                out.extend_from_slice(l);
                if !out.ends_with(b"\n") {
                    out.push(b'\n');
                }
            }
            let (a, b) = (i.min(j) + 1, i.max(j) + 1);
            Some((out, format!("swap lines {a} and {b}")))
        }
        TextOp::ReplaceToken => replace_token(rng, input, dialect.token_pairs),
        TextOp::ChangeInteger => change_integer(rng, input),
        TextOp::DeleteChar => {
            if input.is_empty() {
                return None;
            }
            let structural: Vec<usize> = input
                .iter()
                .enumerate()
                .filter(|(_, b)| b"{}();,[]".contains(b))
                .map(|(i, _)| i)
                .collect();
            let i = if !structural.is_empty() && rng.gen_bool(0.5) {
                *structural.choose(rng)?
            } else {
                rng.gen_range(0..input.len())
            };
            let mut out = input.to_vec();
            let b = out.remove(i);
            Some((
                out,
                format!("delete {} at line {}", show_byte(b), line_of(input, i)),
            ))
        }
        TextOp::InsertBytes => Some(insert_bytes(rng, input)),
        TextOp::Truncate => {
            if input.is_empty() {
                return None;
            }
            let n = rng.gen_range(0..input.len());
            Some((
                input[..n].to_vec(),
                format!("truncate at byte {n} (line {})", line_of(input, n)),
            ))
        }
        TextOp::InsertConstruct => {
            insert_construct(rng, input, &lines, dialect.constructs, dialect.code_blocks)
        }
    }
}

fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// The 1-based line number of byte offset `at`.
fn line_of(input: &[u8], at: usize) -> usize {
    1 + input[..at.min(input.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_op(b: u8) -> bool {
    b"<>=!&|+-*/%^~".contains(&b)
}

/// Whether `tok` occurs at `at` as a whole token: an identifier-like end is not glued to
/// another identifier character, an operator-like end not to another operator character.
fn whole_token_at(input: &[u8], at: usize, tok: &[u8]) -> bool {
    if tok.is_empty() || !input[at..].starts_with(tok) {
        return false;
    }
    let (first, last) = (tok[0], tok[tok.len() - 1]);
    let before = at.checked_sub(1).map(|i| input[i]);
    let after = input.get(at + tok.len()).copied();
    let glued = |edge: u8, nb: Option<u8>| match nb {
        None => false,
        Some(n) => (is_ident(edge) && is_ident(n)) || (is_op(edge) && is_op(n)),
    };
    !glued(first, before) && !glued(last, after)
}

/// Occurrences of `tok` as a whole token.
fn token_positions(input: &[u8], tok: &[u8]) -> Vec<usize> {
    if tok.is_empty() || tok.len() > input.len() {
        return Vec::new();
    }
    (0..=input.len() - tok.len())
        .filter(|&i| whole_token_at(input, i, tok))
        .collect()
}

fn splice(input: &[u8], at: usize, len: usize, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() + with.len());
    out.extend_from_slice(&input[..at]);
    out.extend_from_slice(with);
    out.extend_from_slice(&input[at + len..]);
    out
}

fn replace_token<R: Rng>(
    rng: &mut R,
    input: &[u8],
    pairs: &[(&str, &str)],
) -> Option<(Vec<u8>, String)> {
    // (position, from, to) over both directions of every pair
    let mut cands: Vec<(usize, &str, &str)> = Vec::new();
    for &(a, b) in pairs {
        for (from, to) in [(a, b), (b, a)] {
            for p in token_positions(input, from.as_bytes()) {
                cands.push((p, from, to));
            }
        }
    }
    // pick a pair first, then an occurrence, so that rare tokens get their turn
    let kinds: Vec<(&str, &str)> = {
        let mut k: Vec<(&str, &str)> = cands.iter().map(|&(_, f, t)| (f, t)).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    let &(from, to) = kinds.choose(rng)?;
    let occ: Vec<usize> = cands
        .iter()
        .filter(|&&(_, f, t)| f == from && t == to)
        .map(|&(p, _, _)| p)
        .collect();
    let &at = occ.choose(rng)?;
    Some((
        splice(input, at, from.len(), to.as_bytes()),
        format!("replace `{from}` by `{to}` at line {}", line_of(input, at)),
    ))
}

/// Interesting replacements for an integer literal `n`.
fn integer_replacement<R: Rng>(rng: &mut R, n: &str) -> String {
    let v: Option<i128> = n.parse().ok();
    let fixed = [
        "0",
        "1",
        "2",
        "-1",
        "7",
        "255",
        "256",
        "65536",
        "2147483647",
        "2147483648",
        "-2147483648",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "18446744073709551616",
        "0x7fffffff",
        "010",
    ];
    match (rng.gen_range(0..4), v) {
        (0, Some(v)) => (v + 1).to_string(),
        (1, Some(v)) => (v - 1).to_string(),
        (2, Some(v)) => (v.saturating_mul(1000)).to_string(),
        _ => fixed.choose(rng).copied().unwrap_or("0").to_string(),
    }
}

fn change_integer<R: Rng>(rng: &mut R, input: &[u8]) -> Option<(Vec<u8>, String)> {
    let mut lits = Vec::new();
    let mut i = 0;
    while i < input.len() {
        if input[i].is_ascii_digit()
            && (i == 0 || !(is_ident(input[i - 1]) || input[i - 1] == b'.'))
        {
            let start = i;
            while i < input.len() && input[i].is_ascii_digit() {
                i += 1;
            }
            let glued = input.get(i).is_some_and(|&b| is_ident(b) || b == b'.');
            if !glued {
                lits.push((start, i));
            }
        }
        i += 1;
    }
    let &(s, e) = lits.choose(rng)?;
    let old = String::from_utf8_lossy(&input[s..e]).into_owned();
    let new = integer_replacement(rng, &old);
    Some((
        splice(input, s, e - s, new.as_bytes()),
        format!("integer `{old}` → `{new}` at line {}", line_of(input, s)),
    ))
}

/// Random bytes: NUL, invalid UTF-8, structural characters, comment and string openers.
fn random_bytes<R: Rng>(rng: &mut R) -> Vec<u8> {
    let n = rng.gen_range(1..=8);
    let mut out = Vec::new();
    for _ in 0..n {
        match rng.gen_range(0..8) {
            0 => out.push(0),
            1 => out.push(
                *[0xff, 0xfe, 0xc0, 0x80, 0xed, 0xf4]
                    .choose(rng)
                    .unwrap_or(&0xff),
            ),
            2 => out.extend_from_slice(
                [
                    &b"{"[..],
                    b"}",
                    b"(",
                    b")",
                    b";",
                    b"\"",
                    b"'",
                    b"\\",
                    b"\n",
                    b"/*",
                    b"#",
                    b"??/",
                ]
                .choose(rng)
                .copied()
                .unwrap_or(b";"),
            ),
            _ => out.push(rng.gen()),
        }
    }
    out
}

fn insert_bytes<R: Rng>(rng: &mut R, input: &[u8]) -> (Vec<u8>, String) {
    let at = rng.gen_range(0..=input.len());
    let bytes = random_bytes(rng);
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    (
        splice(input, at, 0, &bytes),
        format!(
            "insert bytes [{}] at line {}",
            hex.join(" "),
            line_of(input, at)
        ),
    )
}

/// The lines (0-based) at whose start a statement (`code_blocks`) or a clause may be
/// inserted: inside braces, and for code only inside a code block right after `;`, `{` or
/// `}`. Comments and strings are not skipped: an approximation is enough most of the time.
fn insertion_lines(input: &[u8], code_blocks: bool) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack: Vec<bool> = Vec::new(); // per open brace: a code block?
    let mut last = b'\n'; // last non-whitespace byte
    let mut word: Vec<u8> = Vec::new(); // the last identifier
    let mut line = 0;
    for (i, &b) in input.iter().enumerate() {
        if i == 0 || input[i - 1] == b'\n' {
            let ok = if code_blocks {
                stack.last() == Some(&true) && b";{}".contains(&last)
            } else {
                !stack.is_empty()
            };
            if ok {
                out.push(line);
            }
        }
        if b == b'\n' {
            line += 1;
        }
        match b {
            b'{' => {
                let code = b");{}".contains(&last)
                    || (is_ident(last) && (word == b"else" || word == b"do"));
                stack.push(code);
            }
            b'}' => {
                stack.pop();
            }
            _ => {}
        }
        if is_ident(b) {
            if i == 0 || !is_ident(input[i - 1]) {
                word.clear();
            }
            word.push(b);
        }
        if !b.is_ascii_whitespace() {
            last = b;
        }
    }
    out
}

fn insert_construct<R: Rng>(
    rng: &mut R,
    input: &[u8],
    lines: &[&[u8]],
    constructs: &[Construct],
    code_blocks: bool,
) -> Option<(Vec<u8>, String)> {
    let k = constructs.choose(rng)?;
    let mut out;
    let mut at_line = None;
    if k.inside.is_empty() {
        out = input.to_vec();
    } else {
        let inside = insertion_lines(input, code_blocks);
        // mostly where a statement may start, sometimes anywhere (e.g. at file scope)
        let line = match inside.choose(rng) {
            Some(&i) if rng.gen_bool(0.9) => i,
            _ => rng.gen_range(0..=lines.len()),
        };
        let offset: usize = lines[..line].iter().map(|l| l.len()).sum();
        let mut text = k.inside.as_bytes().to_vec();
        text.push(b'\n');
        if offset > 0 && input.get(offset - 1) != Some(&b'\n') {
            text.insert(0, b'\n');
        }
        out = splice(input, offset, 0, &text);
        at_line = Some(line + 1);
    }
    if !k.at_end.is_empty() {
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(k.at_end.as_bytes());
        out.push(b'\n');
    }
    let desc = match at_line {
        Some(l) => format!("insert {} at line {l}", k.name),
        None => format!("append {}", k.name),
    };
    Some((out, desc))
}

/// Mutates a JSON input: mostly 1 to 3 value mutations of the parsed document (see
/// [`mutate_json_value`]), serialised again; sometimes (or when it does not parse) a raw
/// byte mutation ([`mutate_bytes`]).
/// A file of several JSON values one after the other (a certificate's header and body)
/// has one of them mutated, the others kept.
pub fn mutate_json<R: Rng>(rng: &mut R, input: &[u8]) -> (Vec<u8>, String) {
    if rng.gen_bool(0.75) {
        let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_slice(input)
            .into_iter::<Value>()
            .collect();
        if let Some(mut vs) = values.ok().filter(|vs| !vs.is_empty()) {
            let k = rng.gen_range(0..vs.len());
            let rounds = 1 + usize::from(rng.gen_bool(0.3)) + usize::from(rng.gen_bool(0.1));
            let what: Vec<String> = (0..rounds)
                .map(|_| mutate_json_value(rng, &mut vs[k]))
                .collect();
            let mut out = Vec::new();
            for v in &vs {
                out.extend(serde_json::to_vec(v).unwrap_or_default());
                out.push(b'\n');
            }
            let which = if vs.len() > 1 {
                format!("value {}: ", k + 1)
            } else {
                String::new()
            };
            return (out, format!("{which}{}", what.join("; ")));
        }
    }
    mutate_bytes(rng, input)
}

/// Number of values in `v` down to `max_depth` (the root has depth 0).
fn count_values(v: &Value, depth: usize, max_depth: usize) -> usize {
    1 + if depth == max_depth {
        0
    } else {
        match v {
            Value::Array(a) => a
                .iter()
                .map(|x| count_values(x, depth + 1, max_depth))
                .sum(),
            Value::Object(o) => o
                .values()
                .map(|x| count_values(x, depth + 1, max_depth))
                .sum(),
            _ => 0,
        }
    }
}

/// The `n`-th value of `v` in pre-order, down to `max_depth`, with its JSON pointer.
fn nth_value<'a>(
    v: &'a mut Value,
    n: &mut usize,
    depth: usize,
    max_depth: usize,
    path: &mut Vec<String>,
) -> Option<&'a mut Value> {
    if *n == 0 {
        return Some(v);
    }
    *n -= 1;
    if depth == max_depth {
        return None;
    }
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                path.push(i.to_string());
                if let Some(r) = nth_value(x, n, depth + 1, max_depth, path) {
                    return Some(r);
                }
                path.pop();
            }
            None
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                path.push(k.clone());
                if let Some(r) = nth_value(x, n, depth + 1, max_depth, path) {
                    return Some(r);
                }
                path.pop();
            }
            None
        }
        _ => None,
    }
}

/// Mutates one value of `doc` (a third of the time one of depth at most 2, where the
/// format, file, CPA and top-level lists are): numbers, strings and booleans changed,
/// keys and elements deleted, duplicated or swapped, or the value's type changed.
/// Returns a description naming the value's JSON pointer.
pub fn mutate_json_value<R: Rng>(rng: &mut R, doc: &mut Value) -> String {
    let max_depth = if rng.gen_bool(1.0 / 3.0) {
        2
    } else {
        usize::MAX
    };
    let total = count_values(doc, 0, max_depth);
    let mut n = rng.gen_range(0..total);
    let mut path = Vec::new();
    let Some(v) = nth_value(doc, &mut n, 0, max_depth, &mut path) else {
        return "no value".to_string();
    };
    let at = format!("/{}", path.join("/"));
    let what = if rng.gen_bool(1.0 / 6.0) {
        let new = [
            Value::Null,
            Value::Bool(true),
            Value::from(0),
            Value::from(""),
            Value::Array(Vec::new()),
            Value::Object(Default::default()),
        ]
        .choose(rng)
        .cloned()
        .unwrap_or(Value::Null);
        let d = format!("replace by {new}");
        *v = new;
        d
    } else {
        mutate_value_in_place(rng, v)
    };
    format!("{at}: {what}")
}

fn mutate_value_in_place<R: Rng>(rng: &mut R, v: &mut Value) -> String {
    match v {
        Value::Null => {
            *v = Value::from(0);
            "null → 0".into()
        }
        Value::Bool(b) => {
            *b = !*b;
            format!("flip to {b}")
        }
        Value::Number(num) => {
            let i = num.as_i64().unwrap_or(0) as i128;
            let new: Value = match rng.gen_range(0..10) {
                0 => Value::from(0),
                1 => Value::from(-1),
                2 => Value::from((i + 1) as i64),
                3 => Value::from((i - 1) as i64),
                4 => Value::from(i64::MAX),
                5 => Value::from(u64::MAX),
                6 => Value::from(i64::MIN),
                7 => Value::from(4294967296u64),
                8 => Value::from(1.5),
                _ => Value::from((i.saturating_mul(1000)) as i64),
            };
            let d = format!("{num} → {new}");
            *v = new;
            d
        }
        Value::String(s) => {
            let old = s.clone();
            *s = match rng.gen_range(0..6) {
                0 => String::new(),
                1 => format!("{old}{old}"),
                2 => old.chars().take(old.chars().count() / 2).collect(),
                3 => "x".into(),
                4 => "\u{0}\u{fffd}é".into(),
                _ => {
                    let mut c: Vec<char> = old.chars().collect();
                    if !c.is_empty() {
                        let i = rng.gen_range(0..c.len());
                        c[i] = *['0', 'Z', '_', ' ', '(', '\u{7f}']
                            .choose(rng)
                            .unwrap_or(&'0');
                    }
                    c.into_iter().collect()
                }
            };
            format!("string {:?} → {:?}", trunc(&old), trunc(s))
        }
        Value::Array(a) => {
            if a.is_empty() {
                a.push(Value::Null);
                return "push null into empty array".into();
            }
            let i = rng.gen_range(0..a.len());
            match rng.gen_range(0..5) {
                0 => {
                    a.remove(i);
                    format!("remove element {i}")
                }
                1 => {
                    let x = a[i].clone();
                    a.insert(i, x);
                    format!("duplicate element {i}")
                }
                2 => {
                    let j = rng.gen_range(0..a.len());
                    a.swap(i, j);
                    format!("swap elements {i} and {j}")
                }
                3 => {
                    a.truncate(i);
                    format!("truncate array to {i}")
                }
                _ => {
                    a.reverse();
                    "reverse array".into()
                }
            }
        }
        Value::Object(o) => {
            let keys: Vec<String> = o.keys().cloned().collect();
            match (rng.gen_range(0..3), keys.choose(rng)) {
                (0, Some(k)) => {
                    o.remove(k);
                    format!("delete key {k:?}")
                }
                (1, Some(k)) => {
                    let x = o.remove(k).unwrap_or(Value::Null);
                    o.insert(format!("{k}_"), x);
                    format!("rename key {k:?}")
                }
                _ => {
                    o.insert("fz".into(), Value::from(1));
                    "add key \"fz\"".into()
                }
            }
        }
    }
}

fn trunc(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Raw byte mutations of any file: truncate, delete a range, flip a byte, duplicate a
/// range, or insert random bytes.
pub fn mutate_bytes<R: Rng>(rng: &mut R, input: &[u8]) -> (Vec<u8>, String) {
    if input.is_empty() {
        return insert_bytes(rng, input);
    }
    let len = input.len();
    let a = rng.gen_range(0..len);
    let b = (a + rng.gen_range(1..=64)).min(len);
    match rng.gen_range(0..5) {
        0 => (input[..a].to_vec(), format!("truncate at byte {a}")),
        1 => (
            splice(input, a, b - a, b""),
            format!("delete bytes {a}..{b}"),
        ),
        2 => {
            let mut out = input.to_vec();
            let bit = 1u8 << rng.gen_range(0..8);
            out[a] ^= bit;
            (out, format!("flip bit {bit:#04x} of byte {a}"))
        }
        3 => (
            splice(input, b, 0, &input[a..b]),
            format!("duplicate bytes {a}..{b}"),
        ),
        _ => insert_bytes(rng, input),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    const PROG: &str = "#include <stdlib.h>\n\
        struct node { int data; struct node *next; struct node *prev; };\n\
        int main(void) {\n\
        \x20 struct node *p = NULL;\n\
        \x20 int x = 10;\n\
        \x20 if (p == NULL && x <= 3) p = p->next;\n\
        \x20 while (x < 20) x = x + 1;\n\
        \x20 return 0;\n\
        }\n";

    fn rng(seed: u64) -> SmallRng {
        SmallRng::seed_from_u64(seed)
    }

    #[test]
    fn a_fixed_seed_gives_the_same_mutants() {
        for s in 0..50 {
            let a = mutate_text(&mut rng(s), PROG.as_bytes(), &C);
            let b = mutate_text(&mut rng(s), PROG.as_bytes(), &C);
            assert_eq!(a, b);
        }
        let distinct: std::collections::HashSet<Vec<u8>> = (0..50)
            .map(|s| mutate_text(&mut rng(s), PROG.as_bytes(), &C).0)
            .collect();
        assert!(distinct.len() > 40, "{}", distinct.len());
    }

    #[test]
    fn every_text_operator_applies_to_a_program_and_changes_it() {
        for &(op, _) in TextOp::WEIGHTED {
            for s in 0..20 {
                let (out, desc) = apply_text_op(&mut rng(s), op, PROG.as_bytes(), &C)
                    .unwrap_or_else(|| panic!("{op:?} did not apply"));
                if op != TextOp::SwapLines {
                    assert_ne!(out, PROG.as_bytes(), "{op:?}: {desc}");
                }
                assert!(!desc.is_empty());
            }
        }
    }

    #[test]
    fn tokens_are_replaced_only_whole() {
        let pairs: &[(&str, &str)] = &[("<", "<="), ("NULL", "0"), ("+", "-")];
        let text = b"a <= b; x10 = 10; p->q; y = 0;";
        let pos = token_positions(text, b"<");
        assert!(pos.is_empty(), "`<` inside `<=`: {pos:?}");
        assert_eq!(token_positions(text, b"<="), vec![2]);
        // `0` only where it stands alone, not in `10` or `x10`
        assert_eq!(token_positions(text, b"0"), vec![28]);
        assert!(token_positions(text, b"-").is_empty(), "`-` of `->`");
        for s in 0..30 {
            let (out, desc) = replace_token(&mut rng(s), text, pairs).expect("applies");
            let out = String::from_utf8(out).expect("ascii");
            assert!(
                out == "a < b; x10 = 10; p->q; y = 0;"
                    || out == "a <= b; x10 = 10; p->q; y = NULL;",
                "{desc}: {out}"
            );
        }
        let (out, _) = replace_token(&mut rng(0), b"p->next", C.token_pairs).expect("applies");
        assert!(out == b"p->prev" || out == b"p->data", "{:?}", out);
    }

    #[test]
    fn integers_change_but_identifiers_with_digits_do_not() {
        for s in 0..30 {
            let (out, desc) = change_integer(&mut rng(s), b"x1 = 42;").expect("applies");
            let out = String::from_utf8(out).expect("ascii");
            assert!(
                out.starts_with("x1 = ") && out != "x1 = 42;",
                "{desc}: {out}"
            );
        }
        assert!(change_integer(&mut rng(0), b"x1 = y2;").is_none());
    }

    #[test]
    fn statements_go_into_function_bodies() {
        let mut inside = 0;
        for s in 0..100 {
            let lines: Vec<&[u8]> = PROG.as_bytes().split_inclusive(|&b| b == b'\n').collect();
            let (out, desc) =
                insert_construct(&mut rng(s), PROG.as_bytes(), &lines, C.constructs, true).unwrap();
            let out = String::from_utf8(out).unwrap();
            if desc.starts_with("insert") {
                let line: usize = desc.rsplit(' ').next().unwrap().parse().unwrap();
                inside += usize::from((4..=9).contains(&line));
            }
            if desc.contains("recursion") {
                assert!(out.contains("fz_rec(n - 1)"), "{out}");
            }
        }
        assert!(inside > 60, "{inside}");
    }

    #[test]
    fn statements_are_not_inserted_into_struct_bodies_or_initialisers() {
        let text = b"struct s {\n int a;\n};\nint g[2] = {\n1,\n2 };\nint f(int x) {\n if (x) {\n x = 1;\n } else {\n x = 2;\n }\n return x;\n}\n";
        assert_eq!(insertion_lines(text, true), (7..=13).collect::<Vec<_>>());
        let scg = b"structure s {\n roles next;\n family f {\n pred p(v) := v == v;\n }\n}\n";
        assert_eq!(insertion_lines(scg, false), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn byte_insertions_include_nul_and_invalid_utf8() {
        let mut nul = false;
        let mut invalid = false;
        for s in 0..200 {
            let (out, _) = insert_bytes(&mut rng(s), b"int x;");
            nul |= out.contains(&0);
            invalid |= std::str::from_utf8(&out).is_err();
        }
        assert!(nul && invalid);
    }

    #[test]
    fn json_mutations_change_a_value_and_stay_json_mostly() {
        let doc = br#"{"format":"f","path":[{"Edge":1},{"Enter":2}],"inputs":{"nondet":[0,5],"alloc_null":[false]}}"#;
        let mut parsed = 0;
        for s in 0..100 {
            let (out, desc) = mutate_json(&mut rng(s), doc);
            assert_ne!(&out[..], &doc[..], "{desc}");
            parsed += usize::from(serde_json::from_slice::<Value>(&out).is_ok());
        }
        assert!(parsed > 60, "{parsed}");
        let mut v: Value = serde_json::from_slice(doc).unwrap();
        let desc = mutate_json_value(&mut rng(3), &mut v);
        assert!(desc.starts_with('/'), "{desc}");
    }

    #[test]
    fn the_nth_value_walks_in_pre_order() {
        let mut v: Value = serde_json::from_str(r#"{"a":[1,{"b":2}],"c":3}"#).unwrap();
        assert_eq!(count_values(&v, 0, usize::MAX), 6);
        assert_eq!(count_values(&v, 0, 1), 3);
        let mut path = Vec::new();
        let x = nth_value(&mut v, &mut 4, 0, usize::MAX, &mut path).unwrap();
        assert_eq!(*x, Value::from(2));
        assert_eq!(path, vec!["a", "1", "b"]);
    }

    #[test]
    fn byte_mutations_handle_tiny_inputs() {
        for s in 0..50 {
            let _ = mutate_bytes(&mut rng(s), b"");
            let _ = mutate_bytes(&mut rng(s), b"{");
            let _ = mutate_text(&mut rng(s), b"", &SCG);
            let _ = mutate_text(&mut rng(s), b"x", &C);
        }
    }
}
