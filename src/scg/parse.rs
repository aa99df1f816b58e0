//! Parsers for the FO(TC) formula syntax (as printed by [`Formula`]'s `Display`) and
//! for SCG DSL files. Errors carry 1-based line and column.
//!
//! Formula grammar (loosest binding first; `E`/`A` bodies extend as far right as possible):
//! ```text
//! f   := imp ('<->' imp)*            left associative
//! imp := or ('->' imp)?              right associative
//! or  := and ('|' and)*              one n-ary Or
//! and := un ('&' un)*                one n-ary And
//! un  := '!' un | ('E'|'A') var '.' f | atom
//! atom:= '(' f ')' | '0' | '1' | '1/2' | var '==' var
//!      | 'TC' '(' var ',' var ':' f ')' '(' var ',' var ')'
//!      | name ('[' params ']')? '(' (var (',' var)*)? ')'
//! ```
//! Names are `[A-Za-z_][A-Za-z0-9_]*` with embedded `.name` parts (flattened fields
//! such as `list.next`); write a space after a quantifier's dot. Predicate parameters
//! are raw text split at top-level commas and trimmed (`fd[data == 0]`).
//! `#` starts a comment to the end of the line.

use super::dsl::{Constraint, FamilyDef, Pos, PredTemplate, Refinement, Requirement, StructureDef};
use crate::tvla::formula::{Formula, Kleene, PredSym};
use std::fmt;

/// A parse error at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

type PResult<T> = Result<T, ParseError>;

const KEYWORDS: [&str; 3] = ["E", "A", "TC"];

/// True if `s` is a name the formula parser reads as one identifier (and not a keyword).
pub fn is_formula_ident(s: &str) -> bool {
    let mut c = Cursor::new(s);
    match c.ident() {
        Some(id) => c.pos == s.len() && !KEYWORDS.contains(&id.as_str()),
        None => false,
    }
}

/// A position in the source text with helpers for the hand-written parsers.
pub(crate) struct Cursor<'a> {
    src: &'a str,
    pos: usize,
    /// Current nesting depth of formula parsing (bounded by [`MAX_DEPTH`]).
    depth: usize,
}

/// The deepest formula nesting the parser accepts (keeps recursion bounded).
pub const MAX_DEPTH: usize = 600;

impl<'a> Cursor<'a> {
    pub(crate) fn new(src: &'a str) -> Cursor<'a> {
        Cursor {
            src,
            pos: 0,
            depth: 0,
        }
    }
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }
    fn peek_char(&self) -> Option<char> {
        self.rest().chars().next()
    }
    /// Position of the byte offset `at` as (line, col).
    fn line_col(&self, at: usize) -> Pos {
        let before = &self.src[..at.min(self.src.len())];
        let line = before.matches('\n').count() as u32 + 1;
        let col = match before.rfind('\n') {
            Some(i) => before[i + 1..].chars().count(),
            None => before.chars().count(),
        } as u32
            + 1;
        Pos { line, col }
    }
    pub(crate) fn here(&mut self) -> Pos {
        self.skip_ws();
        self.line_col(self.pos)
    }
    fn err<T>(&mut self, msg: impl Into<String>) -> PResult<T> {
        let p = self.here();
        Err(ParseError {
            line: p.line,
            col: p.col,
            msg: msg.into(),
        })
    }
    fn skip_ws(&mut self) {
        loop {
            let r = self.rest();
            let t = r.trim_start();
            self.pos += r.len() - t.len();
            if t.starts_with('#') {
                let n = t.find('\n').unwrap_or(t.len());
                self.pos += n;
            } else {
                break;
            }
        }
    }
    fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos >= self.src.len()
    }
    /// Consumes `tok` (after white space) if present.
    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(tok) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, tok: &str) -> PResult<()> {
        if self.eat(tok) {
            Ok(())
        } else {
            let found = self.describe_next();
            self.err(format!("expected `{tok}`, found {found}"))
        }
    }
    fn describe_next(&mut self) -> String {
        self.skip_ws();
        match self.peek_char() {
            None => "end of input".to_string(),
            Some(_) => {
                let w: String = self
                    .rest()
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(12)
                    .collect();
                format!("`{w}`")
            }
        }
    }
    /// Reads a formula identifier (with embedded `.name` parts) if one starts here.
    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let b = self.rest().as_bytes();
        let start_ok = |c: u8| c.is_ascii_alphabetic() || c == b'_';
        if b.is_empty() || !start_ok(b[0]) {
            return None;
        }
        let mut i = 1;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphanumeric() || c == b'_' {
                i += 1;
            } else if c == b'.' && i + 1 < b.len() && start_ok(b[i + 1]) {
                i += 2;
            } else {
                break;
            }
        }
        let s = self.rest()[..i].to_string();
        self.pos += i;
        Some(s)
    }
    /// Reads a plain name `[A-Za-z_][A-Za-z0-9_]*` (plus `-` when `dash`).
    fn plain_name(&mut self, dash: bool) -> Option<String> {
        self.skip_ws();
        let b = self.rest().as_bytes();
        if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
            return None;
        }
        let i = b
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || (dash && c == b'-')))
            .unwrap_or(b.len());
        let s = self.rest()[..i].to_string();
        self.pos += i;
        Some(s)
    }
    fn expect_plain(&mut self, what: &str, dash: bool) -> PResult<String> {
        match self.plain_name(dash) {
            Some(s) => Ok(s),
            None => {
                let found = self.describe_next();
                self.err(format!("expected {what}, found {found}"))
            }
        }
    }
    /// Peeks whether the next identifier is exactly `kw` (not a prefix of a longer name).
    fn peek_keyword(&mut self, kw: &str) -> bool {
        let save = self.pos;
        let r = self.plain_name(true).as_deref() == Some(kw);
        self.pos = save;
        r
    }
    fn var(&mut self) -> PResult<String> {
        let save = self.pos;
        match self.ident() {
            Some(v) if !KEYWORDS.contains(&v.as_str()) => Ok(v),
            _ => {
                self.pos = save;
                let found = self.describe_next();
                self.err(format!("expected a logical variable, found {found}"))
            }
        }
    }

    // ---------------------------------------------------------------- formulas

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("formula nested more than {MAX_DEPTH} levels deep"));
        }
        Ok(())
    }
    pub(crate) fn formula(&mut self) -> PResult<Formula> {
        self.enter()?;
        let mut f = self.implication()?;
        while self.eat("<->") {
            let g = self.implication()?;
            f = Formula::Iff(Box::new(f), Box::new(g));
        }
        self.depth -= 1;
        Ok(f)
    }
    fn implication(&mut self) -> PResult<Formula> {
        self.enter()?;
        let f = self.disjunction()?;
        let r = if self.eat("->") {
            let g = self.implication()?;
            Formula::Implies(Box::new(f), Box::new(g))
        } else {
            f
        };
        self.depth -= 1;
        Ok(r)
    }
    fn disjunction(&mut self) -> PResult<Formula> {
        let mut fs = vec![self.conjunction()?];
        while self.eat("|") {
            fs.push(self.conjunction()?);
        }
        Ok(if fs.len() == 1 {
            fs.remove(0)
        } else {
            Formula::Or(fs)
        })
    }
    fn conjunction(&mut self) -> PResult<Formula> {
        let mut fs = vec![self.unary()?];
        while self.eat("&") {
            fs.push(self.unary()?);
        }
        Ok(if fs.len() == 1 {
            fs.remove(0)
        } else {
            Formula::And(fs)
        })
    }
    fn unary(&mut self) -> PResult<Formula> {
        self.enter()?;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }
    fn unary_inner(&mut self) -> PResult<Formula> {
        if self.eat("!") {
            return Ok(Formula::Not(Box::new(self.unary()?)));
        }
        for q in ["E", "A"] {
            let save = self.pos;
            if self.ident().as_deref() == Some(q) {
                let save2 = self.pos;
                if let Some(v) = self.ident() {
                    if !KEYWORDS.contains(&v.as_str()) {
                        self.expect(".")?;
                        let body = Box::new(self.formula()?);
                        return Ok(if q == "E" {
                            Formula::Exists(v, body)
                        } else {
                            Formula::Forall(v, body)
                        });
                    }
                }
                self.pos = save2;
            }
            self.pos = save;
        }
        self.atom()
    }
    fn atom(&mut self) -> PResult<Formula> {
        self.skip_ws();
        if self.eat("(") {
            let f = self.formula()?;
            self.expect(")")?;
            return Ok(f);
        }
        if self.eat("1/2") {
            return Ok(Formula::Const(Kleene::Half));
        }
        let b = self.rest().as_bytes();
        if !b.is_empty() && (b[0] == b'0' || b[0] == b'1') {
            let k = if b[0] == b'0' {
                Kleene::False
            } else {
                Kleene::True
            };
            if b.len() > 1 && b[1].is_ascii_alphanumeric() {
                return self.err("expected a formula");
            }
            self.pos += 1;
            return Ok(Formula::Const(k));
        }
        let save = self.pos;
        let name = match self.ident() {
            Some(n) => n,
            None => {
                let found = self.describe_next();
                return self.err(format!("expected a formula, found {found}"));
            }
        };
        if name == "TC" {
            self.expect("(")?;
            let u = self.var()?;
            self.expect(",")?;
            let w = self.var()?;
            self.expect(":")?;
            let body = Box::new(self.formula()?);
            self.expect(")")?;
            self.expect("(")?;
            let from = self.var()?;
            self.expect(",")?;
            let to = self.var()?;
            self.expect(")")?;
            return Ok(Formula::TC {
                u,
                w,
                body,
                from,
                to,
            });
        }
        if KEYWORDS.contains(&name.as_str()) {
            self.pos = save;
            return self.err(format!("`{name}` is a keyword and cannot name a predicate"));
        }
        if self.eat("==") {
            let w = self.var()?;
            return Ok(Formula::Eq(name, w));
        }
        let params = if self.rest().starts_with('[') {
            self.pos += 1;
            self.raw_params()?
        } else {
            Vec::new()
        };
        if !self.eat("(") {
            let found = self.describe_next();
            return self.err(format!(
                "expected `(` (predicate application) or `==` after `{name}`, found {found}"
            ));
        }
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.var()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(Formula::Pred(PredSym { name, params }, args))
    }
    /// Reads raw parameter text up to the matching `]` (the `[` is consumed).
    fn raw_params(&mut self) -> PResult<Vec<String>> {
        let start = self.pos;
        let mut depth = 0i32;
        let mut parts = Vec::new();
        let mut last = start;
        for (i, c) in self.rest().char_indices() {
            let at = start + i;
            match c {
                '[' | '(' => depth += 1,
                ')' => depth -= 1,
                ']' if depth == 0 => {
                    parts.push(self.src[last..at].trim().to_string());
                    self.pos = at + 1;
                    if parts.len() == 1 && parts[0].is_empty() {
                        return Ok(Vec::new());
                    }
                    if parts.iter().any(|p| p.is_empty()) {
                        self.pos = start;
                        return self.err("empty predicate parameter");
                    }
                    return Ok(parts);
                }
                ']' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(self.src[last..at].trim().to_string());
                    last = at + 1;
                }
                '\n' | ';' => break,
                _ => {}
            }
        }
        self.pos = start;
        self.err("unterminated predicate parameters: missing `]`")
    }

    // ---------------------------------------------------------------- DSL

    fn structure(&mut self) -> PResult<StructureDef> {
        let pos = self.here();
        if !self.peek_keyword("structure") {
            let found = self.describe_next();
            return self.err(format!("expected `structure`, found {found}"));
        }
        self.plain_name(true);
        let name = self.expect_plain("a structure name", true)?;
        self.expect("{")?;
        let mut s = StructureDef {
            name,
            roles: Vec::new(),
            requires: Vec::new(),
            refines: Vec::new(),
            families: Vec::new(),
            pos,
        };
        let mut saw_roles = false;
        loop {
            if self.eat("}") {
                break;
            }
            let ipos = self.here();
            let kw = match self.plain_name(false) {
                Some(k) => k,
                None => {
                    let found = self.describe_next();
                    return self.err(format!(
                        "expected `roles`, `requires`, `refines`, `family`, `always family` or `}}`, found {found}"
                    ));
                }
            };
            match kw.as_str() {
                "roles" => {
                    if saw_roles {
                        return self.err_at(ipos, "duplicate `roles` declaration");
                    }
                    saw_roles = true;
                    s.roles = self.name_list("a role name")?;
                    self.expect(";")?;
                }
                "requires" => {
                    let invariant = self.expect_plain("an invariant name", false)?;
                    self.expect("(")?;
                    let roles = self.name_list("a role name")?;
                    self.expect(")")?;
                    self.expect(";")?;
                    s.requires.push(Requirement {
                        invariant,
                        roles,
                        pos: ipos,
                    });
                }
                "refines" => {
                    let coarser = self.expect_plain("a structure name", true)?;
                    self.expect("(")?;
                    let mut role_map = Vec::new();
                    if !self.eat(")") {
                        loop {
                            let c = self.expect_plain("a role of the coarser structure", false)?;
                            self.expect("=")?;
                            let f = self.expect_plain("a role of this structure", false)?;
                            role_map.push((c, f));
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    self.expect(";")?;
                    s.refines.push(Refinement {
                        coarser,
                        role_map,
                        pos: ipos,
                    });
                }
                "family" => s.families.push(self.family(ipos, false)?),
                "always" => {
                    if self.plain_name(false).as_deref() != Some("family") {
                        return self.err_at(ipos, "expected `family` after `always`");
                    }
                    s.families.push(self.family(ipos, true)?)
                }
                other => {
                    return self.err_at(
                        ipos,
                        format!(
                            "unknown declaration `{other}` (expected `roles`, `requires`, `refines` or `family`)"
                        ),
                    )
                }
            }
        }
        if !saw_roles {
            return self.err_at(s.pos, format!("structure `{}` declares no `roles`", s.name));
        }
        Ok(s)
    }
    fn err_at<T>(&self, p: Pos, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            line: p.line,
            col: p.col,
            msg: msg.into(),
        })
    }
    fn name_list(&mut self, what: &str) -> PResult<Vec<String>> {
        let mut v = vec![self.expect_plain(what, false)?];
        while self.eat(",") {
            v.push(self.expect_plain(what, false)?);
        }
        Ok(v)
    }
    fn family(&mut self, pos: Pos, always: bool) -> PResult<FamilyDef> {
        let name = self.expect_plain("a family name", false)?;
        let pointers = if self.peek_keyword("for") {
            self.plain_name(false);
            self.name_list("a pointer placeholder")?
        } else {
            Vec::new()
        };
        self.expect("{")?;
        let mut fam = FamilyDef {
            name,
            always,
            pointers,
            preds: Vec::new(),
            constraints: Vec::new(),
            pos,
        };
        loop {
            if self.eat("}") {
                break;
            }
            let ipos = self.here();
            let mut item = self.plain_name(false);
            let nonabs = item.as_deref() == Some("nonabs");
            if nonabs {
                item = self.plain_name(false);
                if item.as_deref() != Some("pred") {
                    return self.err_at(ipos, "expected `pred` after `nonabs`");
                }
            }
            match item.as_deref() {
                Some("pred") => {
                    let head = self.atom()?;
                    let (sym, vars) = match head {
                        Formula::Pred(sym, vars) => (sym, vars),
                        _ => {
                            return self.err_at(ipos, "expected a predicate head `name[params](v)`")
                        }
                    };
                    self.expect(":=")?;
                    let def = self.formula()?;
                    self.expect(";")?;
                    if nonabs && vars.len() != 1 {
                        return self.err_at(ipos, "`nonabs` is for unary predicates");
                    }
                    fam.preds.push(PredTemplate {
                        sym,
                        vars,
                        def,
                        nonabs,
                        pos: ipos,
                    });
                }
                Some("constraint") => {
                    let formula = self.formula()?;
                    self.expect(";")?;
                    fam.constraints.push(Constraint { formula, pos: ipos });
                }
                _ => return self.err_at(ipos, "expected `pred`, `constraint` or `}` in a family"),
            }
        }
        Ok(fam)
    }
}

/// Parses one FO(TC) formula (the whole input).
pub fn parse_formula(src: &str) -> Result<Formula, ParseError> {
    let mut c = Cursor::new(src);
    let f = c.formula()?;
    if !c.at_end() {
        let found = c.describe_next();
        return c.err(format!("unexpected {found} after the formula"));
    }
    Ok(f)
}

/// Parses a DSL file: zero or more `structure` entries. Only syntax is checked here;
/// [`super::library`] checks names, arities and the refinement relation.
pub fn parse_dsl(src: &str) -> Result<Vec<StructureDef>, ParseError> {
    let mut c = Cursor::new(src);
    let mut out = Vec::new();
    while !c.at_end() {
        out.push(c.structure()?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_var() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["v", "w", "u", "v1", "v2", "a", "b_2", "Ex"])
            .prop_map(|s| s.to_string())
    }
    fn arb_sym() -> impl Strategy<Value = PredSym> {
        let names =
            prop::sample::select(vec!["sm", "pt", "next", "list.next", "r", "cancel", "fd"]);
        let params = prop::collection::vec(
            prop::sample::select(vec![
                "x",
                "main::p",
                "s#1",
                "next",
                "data == 0",
                "f(a, b) < 3",
                "a[0] == 1",
            ]),
            0..3,
        );
        (names, params).prop_map(|(n, ps)| PredSym {
            name: n.to_string(),
            params: ps.into_iter().map(String::from).collect(),
        })
    }
    /// Random formulas in the normal form the printer preserves (And/Or with >= 2 parts).
    pub(crate) fn arb_formula() -> impl Strategy<Value = Formula> {
        let leaf = prop_oneof![
            prop::sample::select(vec![Kleene::False, Kleene::Half, Kleene::True])
                .prop_map(Formula::Const),
            (arb_sym(), prop::collection::vec(arb_var(), 0..3))
                .prop_map(|(p, a)| Formula::Pred(p, a)),
            (arb_var(), arb_var()).prop_map(|(a, b)| Formula::Eq(a, b)),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|f| Formula::Not(Box::new(f))),
                prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
                prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::Or),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Formula::Iff(Box::new(a), Box::new(b))),
                (arb_var(), inner.clone()).prop_map(|(v, f)| Formula::Exists(v, Box::new(f))),
                (arb_var(), inner.clone()).prop_map(|(v, f)| Formula::Forall(v, Box::new(f))),
                (arb_var(), arb_var(), inner, arb_var(), arb_var()).prop_map(
                    |(u, w, b, from, to)| Formula::TC {
                        u,
                        w,
                        body: Box::new(b),
                        from,
                        to
                    }
                ),
            ]
        })
    }

    fn arb_name() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "next", "prev", "left", "x", "y", "reach", "for_", "a1",
        ])
        .prop_map(String::from)
    }
    fn arb_names() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(arb_name(), 1..4)
    }
    fn arb_structure() -> impl Strategy<Value = StructureDef> {
        let req = (arb_name(), arb_names()).prop_map(|(invariant, roles)| Requirement {
            invariant,
            roles,
            pos: Pos::default(),
        });
        let refi = (
            prop::sample::select(vec!["sll", "tree-parent", "a-b-c"]),
            prop::collection::vec((arb_name(), arb_name()), 0..3),
        )
            .prop_map(|(c, role_map)| Refinement {
                coarser: c.to_string(),
                role_map,
                pos: Pos::default(),
            });
        let pred = (
            arb_sym(),
            prop::sample::select(vec![vec!["v"], vec!["v1", "v2"]]),
            arb_formula(),
            any::<bool>(),
        )
            .prop_map(|(sym, vars, def, na)| PredTemplate {
                sym,
                nonabs: na && vars.len() == 1,
                vars: vars.into_iter().map(String::from).collect(),
                def,
                pos: Pos::default(),
            });
        let cons = arb_formula().prop_map(|formula| Constraint {
            formula,
            pos: Pos::default(),
        });
        let fam = (
            arb_name(),
            prop::collection::vec(arb_name(), 0..3),
            prop::collection::vec(pred, 0..3),
            prop::collection::vec(cons, 0..2),
        )
            .prop_map(|(name, pointers, preds, constraints)| FamilyDef {
                always: name.len() % 3 == 0,
                name,
                pointers,
                preds,
                constraints,
                pos: Pos::default(),
            });
        (
            prop::sample::select(vec!["sll", "cyclic-sll", "list_of-lists2"]),
            arb_names(),
            prop::collection::vec(req, 0..3),
            prop::collection::vec(refi, 0..2),
            prop::collection::vec(fam, 0..4),
        )
            .prop_map(|(name, roles, requires, refines, families)| StructureDef {
                name: name.to_string(),
                roles,
                requires,
                refines,
                families,
                pos: Pos::default(),
            })
    }

    proptest! {
        /// parse(print(file)) == file for whole DSL files (syntax only; the library
        /// checks names and arities separately).
        #[test]
        fn dsl_round_trip(ss in prop::collection::vec(arb_structure(), 1..3)) {
            let text: String = ss.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("\n");
            let back = parse_dsl(&text);
            prop_assert_eq!(back, Ok(ss), "printed:\n{}", text);
        }

        #[test]
        fn formula_round_trip(f in arb_formula()) {
            let printed = f.to_string();
            let back = parse_formula(&printed);
            prop_assert_eq!(back, Ok(f), "printed: {}", printed);
        }
    }

    #[test]
    fn precedence_and_quantifier_scope() {
        let f = parse_formula("E u. pt[x](u) & (u == v | TC(a, b: next(a, b))(u, v))").unwrap();
        assert_eq!(
            f.to_string(),
            "(E u. (pt[x](u) & (u == v | TC(a, b: next(a, b))(u, v))))"
        );
        let g = parse_formula("a() -> b() -> c() <-> d()").unwrap();
        assert_eq!(g.to_string(), "((a() -> (b() -> c())) <-> d())");
        let h = parse_formula("!p(v) | q(v) & r(v)").unwrap();
        assert_eq!(h.to_string(), "(!(p(v)) | (q(v) & r(v)))");
        let k = parse_formula("fd[data == 0](v) & list.next(v, w)").unwrap();
        assert_eq!(k.to_string(), "(fd[data == 0](v) & list.next(v, w))");
    }

    #[test]
    fn errors_have_positions() {
        let e = parse_formula("p(v) &\n  q(v").unwrap_err();
        assert_eq!((e.line, e.col), (2, 6), "{e}");
        let e = parse_formula("E v p(v)").unwrap_err();
        assert_eq!((e.line, e.col), (1, 5), "{e}");
        assert!(parse_formula("p[x(v)").is_err());
        assert!(parse_formula("").is_err());
        assert!(parse_formula("TC(v)").is_err());
        assert!(parse_formula("p(v) q(v)").is_err());
    }

    proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,80}") {
            let _ = parse_formula(&s);
            let _ = parse_dsl(&s);
        }

        #[test]
        fn mutated_library_text_never_panics(cut in 0usize..2000, len in 0usize..20, ins in "[(){};:=\\[\\],.#a-z!&|<>-]{0,3}") {
            let src = include_str!("../../scg-library/dll.scg");
            let mut b = cut.min(src.len());
            while !src.is_char_boundary(b) { b -= 1; }
            let mut e = (b + len).min(src.len());
            while !src.is_char_boundary(e) { e -= 1; }
            let text = format!("{}{}{}", &src[..b], ins, &src[e..]);
            if let Err(err) = parse_dsl(&text) {
                prop_assert!(err.line >= 1 && err.col >= 1);
            }
            // the library checks never panic either, and report positions
            let sll = include_str!("../../scg-library/sll.scg").to_string();
            let files = [("sll.scg".into(), sll), ("dll.scg".into(), text)];
            if let Err(errs) = crate::scg::Library::from_sources(files) {
                prop_assert!(!errs.is_empty());
                prop_assert!(errs.iter().all(|e| e.line >= 1 && e.col >= 1), "{:?}", errs);
            }
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        for (open, close) in [("(", ")"), ("!", ""), ("E v. ", ""), ("p() -> ", "")] {
            let src = format!("{}p(){}", open.repeat(100_000), close.repeat(100_000));
            let e = parse_formula(&src).unwrap_err();
            assert!(e.msg.contains("nested more than"), "{e}");
        }
        let ok = format!("{}p(){}", "(".repeat(50), ")".repeat(50));
        assert!(parse_formula(&ok).is_ok());
    }

    #[test]
    fn dsl_errors_have_positions() {
        let cases = [
            (
                "structure s {\n  roles next;\n  bogus x;\n}",
                (3, 3),
                "unknown declaration `bogus`",
            ),
            (
                "structure s {\n  requires r(next);\n}",
                (1, 1),
                "declares no `roles`",
            ),
            (
                "structure s {\n  roles next;\n  family f {\n    pred p(v) := next(v, ;\n  }\n}",
                (4, 26),
                "expected a logical variable",
            ),
            (
                "structure s {\n  roles next;\n  family f {\n    pred p(v) = 1;\n  }\n}",
                (4, 15),
                "expected `:=`",
            ),
            ("structure {", (1, 11), "expected a structure name"),
            ("roles x;", (1, 1), "expected `structure`"),
            (
                "structure s {\n  roles a, b;\n  refines t (a = );\n}",
                (3, 18),
                "expected a role of this structure",
            ),
        ];
        for (src, (line, col), msg) in cases {
            let e = parse_dsl(src).unwrap_err();
            assert_eq!((e.line, e.col), (line, col), "{src}: {e}");
            assert!(e.msg.contains(msg), "{src}: {e}");
        }
        // comments and an empty file
        assert_eq!(parse_dsl("# nothing\n"), Ok(vec![]));
    }
}
