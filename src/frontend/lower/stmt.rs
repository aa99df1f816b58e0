//! Statements: blocks, declarations, `if`, loops, `break`/`continue`, `return`,
//! `goto` and labels, `switch`.

use super::{loc, unsup, FnLower, R};
use crate::cfa::{BinOp, Expr, Op, SrcLoc};
use crate::frontend::clang::Cursor;
use crate::frontend::types::wrap_const;
use clang_sys::*;

impl<'c, 't> FnLower<'c, 't> {
    /// Lowers a statement at the current location.
    pub(super) fn stmt(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        match c.kind() {
            CXCursor_CompoundStmt => {
                for s in c.children() {
                    self.stmt(s)?;
                }
            }
            CXCursor_DeclStmt => {
                for d in c.children() {
                    match d.kind() {
                        CXCursor_VarDecl => self.decl_var(d)?,
                        CXCursor_TypedefDecl
                        | CXCursor_StructDecl
                        | CXCursor_EnumDecl
                        | CXCursor_FunctionDecl => {}
                        CXCursor_UnionDecl => return unsup(d, "union"),
                        _ => return unsup(d, &format!("declaration `{}`", d.kind_name())),
                    }
                }
            }
            CXCursor_NullStmt => {}
            CXCursor_IfStmt => {
                let ch = c.children();
                if ch.len() < 2 || ch.len() > 3 {
                    return unsup(c, "internal: if statement shape");
                }
                let (nt, nf, join) = (self.node(src), self.node(src), self.node(src));
                self.cond(ch[0], Some(nt), Some(nf))?;
                self.cur = nt;
                self.stmt(ch[1])?;
                self.jump(join, src);
                self.cur = nf;
                if let Some(&e) = ch.get(2) {
                    self.stmt(e)?;
                }
                self.jump(join, src);
                self.cur = join;
            }
            CXCursor_WhileStmt => {
                let ch = c.children();
                if ch.len() != 2 {
                    return unsup(c, "internal: while statement shape");
                }
                let (head, body, exit) = (self.node(src), self.node(src), self.node(src));
                self.jump(head, src);
                self.cur = head;
                self.cond(ch[0], Some(body), Some(exit))?;
                self.loop_body(ch[1], body, head, exit)?;
                self.cur = exit;
            }
            CXCursor_DoStmt => {
                let ch = c.children();
                if ch.len() != 2 {
                    return unsup(c, "internal: do statement shape");
                }
                let (body, condn, exit) = (self.node(src), self.node(src), self.node(src));
                self.jump(body, src);
                self.loop_body(ch[0], body, condn, exit)?;
                self.cur = condn;
                self.cond(ch[1], Some(body), Some(exit))?;
                self.cur = exit;
            }
            CXCursor_ForStmt => self.for_stmt(c)?,
            CXCursor_BreakStmt => match self.breaks.last() {
                Some(&b) => self.jump(b, src),
                None => return unsup(c, "break outside a loop or switch"),
            },
            CXCursor_ContinueStmt => match self.continues.last() {
                Some(&b) => self.jump(b, src),
                None => return unsup(c, "continue outside a loop"),
            },
            CXCursor_ReturnStmt => {
                if let Some(&e) = c.expr_children().first() {
                    match self.cx.prog.functions[self.fid].ret {
                        Some(r) => self.rhs_into(e, r)?,
                        None => self.effect(e)?,
                    }
                }
                let exit = self.g.exit;
                self.jump(exit, src);
            }
            CXCursor_GotoStmt => {
                let Some(l) = c
                    .children()
                    .into_iter()
                    .find(|x| x.kind() == CXCursor_LabelRef)
                else {
                    return unsup(c, "internal: goto without label");
                };
                let n = self.label(&l.spelling(), src);
                self.jump(n, src);
            }
            CXCursor_LabelStmt => {
                let n = self.label(&c.spelling(), src);
                self.jump(n, src);
                self.cur = n;
                if let Some(&s) = c.children().last() {
                    self.stmt(s)?;
                }
            }
            CXCursor_SwitchStmt => self.switch_stmt(c)?,
            CXCursor_CaseStmt | CXCursor_DefaultStmt => {
                let n = self
                    .switches
                    .last()
                    .and_then(|m| m.iter().find(|(k, _)| *k == c).map(|(_, n)| *n));
                let Some(n) = n else {
                    return unsup(c, "case label outside a switch");
                };
                self.jump(n, src);
                self.cur = n;
                if let Some(&s) = c.children().last() {
                    if c.kind() == CXCursor_DefaultStmt || c.children().len() >= 2 {
                        self.stmt(s)?;
                    }
                }
            }
            CXCursor_AsmStmt | CXCursor_MSAsmStmt => return unsup(c, "inline assembly"),
            CXCursor_IndirectGotoStmt => return unsup(c, "computed goto"),
            _ if c.is_expression() => self.effect(c)?,
            _ => return unsup(c, &format!("statement `{}`", c.kind_name())),
        }
        Ok(())
    }

    fn label(&mut self, name: &str, src: SrcLoc) -> usize {
        if let Some(&n) = self.labels.get(name) {
            return n;
        }
        let n = self.node(src);
        self.labels.insert(name.to_string(), n);
        n
    }

    fn loop_body(&mut self, body: Cursor<'t>, start: usize, cont: usize, exit: usize) -> R<()> {
        self.cur = start;
        self.breaks.push(exit);
        self.continues.push(cont);
        let r = self.stmt(body);
        self.breaks.pop();
        self.continues.pop();
        r?;
        self.jump(cont, loc(body));
        Ok(())
    }

    fn for_stmt(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        let ch = c.children();
        let Some((&body, parts)) = ch.split_last() else {
            return unsup(c, "internal: for statement shape");
        };
        let (mut init, mut cnd, mut inc) = (None, None, None);
        if parts.len() == 3 {
            (init, cnd, inc) = (Some(parts[0]), Some(parts[1]), Some(parts[2]));
        } else if !parts.is_empty() {
            // find the two `;` of the header to classify the parts present
            if c.in_macro() {
                return unsup(c, "for loop with omitted header parts inside a macro");
            }
            let toks = self.cx.tu.tokens(c);
            let mut depth = 0i32;
            let mut semis = Vec::new();
            for (s, off) in &toks {
                match s.as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    ";" if depth == 1 => semis.push(*off),
                    _ => {}
                }
                if semis.len() == 2 {
                    break;
                }
            }
            if semis.len() != 2 {
                return unsup(c, "internal: for header");
            }
            for &p in parts {
                let (start, _) = p.extent_offsets();
                if start < semis[0] {
                    init = Some(p);
                } else if start < semis[1] {
                    cnd = Some(p);
                } else {
                    inc = Some(p);
                }
            }
        }
        if let Some(i) = init {
            if i.kind() == CXCursor_DeclStmt {
                self.stmt(i)?;
            } else {
                self.effect(i)?;
            }
        }
        let (head, bodyn, contn, exit) = (
            self.node(src),
            self.node(src),
            self.node(src),
            self.node(src),
        );
        self.jump(head, src);
        self.cur = head;
        match cnd {
            Some(e) => self.cond(e, Some(bodyn), Some(exit))?,
            None => self.jump(bodyn, src),
        }
        self.loop_body(body, bodyn, contn, exit)?;
        self.cur = contn;
        if let Some(i) = inc {
            self.effect(i)?;
        }
        self.jump(head, src);
        self.cur = exit;
        Ok(())
    }

    fn collect_cases(c: Cursor<'t>, out: &mut Vec<Cursor<'t>>) {
        for ch in c.children() {
            match ch.kind() {
                CXCursor_SwitchStmt => {}
                CXCursor_CaseStmt | CXCursor_DefaultStmt => {
                    out.push(ch);
                    Self::collect_cases(ch, out);
                }
                _ if ch.is_expression() => {}
                _ => Self::collect_cases(ch, out),
            }
        }
    }

    fn switch_stmt(&mut self, c: Cursor<'t>) -> R<()> {
        let src = loc(c);
        let ch = c.children();
        if ch.len() != 2 {
            return unsup(c, "internal: switch statement shape");
        }
        let ty = self.ety(ch[0])?;
        let e = self.rv(ch[0])?;
        let mut cases = Vec::new();
        Self::collect_cases(ch[1], &mut cases);
        let exit = self.node(src);
        let mut map = Vec::new();
        let mut default = None;
        for k in &cases {
            let n = self.node(loc(*k));
            map.push((*k, n));
            if k.kind() == CXCursor_DefaultStmt {
                default = Some(n);
                continue;
            }
            let kc = k.children();
            if kc.len() != 2 {
                return unsup(*k, "case range");
            }
            let Some(v) = kc[0].eval_int() else {
                return unsup(*k, "non-constant case label");
            };
            let v = wrap_const(v, &ty);
            let cond = Expr::bin(BinOp::Eq, e.clone(), Expr::Int(v));
            let next = self.node(loc(*k));
            let cur = self.cur;
            self.edge(cur, n, Op::Assume { cond: cond.clone() }, loc(*k));
            self.edge(
                cur,
                next,
                Op::Assume {
                    cond: cond.negate(),
                },
                loc(*k),
            );
            self.cur = next;
        }
        self.jump(default.unwrap_or(exit), src);
        self.switches.push(map);
        self.breaks.push(exit);
        let r = self.stmt(ch[1]);
        self.breaks.pop();
        self.switches.pop();
        r?;
        self.jump(exit, src);
        self.cur = exit;
        Ok(())
    }
}
