//! Entailment between [`SymHeap`]s: the coverage check of the symbolic-heap CPA.
//!
//! `entails(s, t)` looks for a map σ from `t`'s ids to `s`'s values under which every
//! variable of `t` holds in `s`, every atom of `t` is matched by atoms of `s` (an
//! object by an object with the same known fields; a segment by a chain of objects
//! and segments of `s` with the same links, at least as long as the segment needs),
//! no atom of `s` is used twice, and every disequality of `t` is proved by `s`. Atoms
//! of `s` that nothing matches are garbage to `t` (its frame). Each of these steps
//! only concludes what `s`'s meaning guarantees, so `true` means every state of `s`
//! is one of `t`; a `false` may be incompleteness (e.g. a chain that would have to
//! stop inside one of `s`'s segments).
//!
//! Where `t` leaves the end of a segment open, the chain of `s` is extended as long
//! as the next object is referenced only by the chain: the same rule
//! [`super::fold`] hides objects by, so folded states match.

use super::cells::{Shape, MAX_SHAPES};
use super::{cells, counts, order, Atom, Cells, Id, SymHeap, Val};
use std::collections::HashMap;

/// True if every concrete state of `s` is one of `t`.
pub fn entails(s: &SymHeap, t: &SymHeap) -> bool {
    if t.top {
        return true;
    }
    if s.top {
        return false;
    }
    if s == t {
        return true;
    }
    if s.vars == t.vars && s.atoms == t.atoms && s.neq == t.neq {
        // one heap, other counts (a merge's hull and what went into it): the identity
        // is the map, each segment its own image (the greedy matching below could
        // extend a segment past an object the identity keeps apart)
        let images: Vec<(usize, counts::Image)> = t
            .atoms
            .iter()
            .filter_map(|a| a.len_col())
            .map(|c| {
                let img = counts::Image {
                    cols: vec![c],
                    objects: 0,
                };
                (c, img)
            })
            .collect();
        return counts::implies(s, t, &images);
    }
    let mut m = Matcher {
        s,
        map: HashMap::new(),
        used: vec![false; s.atoms.len()],
        owned: Vec::new(),
        rc: std::cell::OnceCell::new(),
        want: Vec::new(),
        cells: Cells::default(),
        links: Vec::new(),
        chain: Vec::new(),
    };
    for &(x, tv) in &t.vars {
        if !m.val(tv, s.get(x)) {
            return false;
        }
    }
    let mut done = vec![false; t.atoms.len()];
    // per segment of `t` with counts: its length column and the pieces that match it
    let mut images: Vec<(usize, counts::Image)> = Vec::new();
    loop {
        let mut progress = false;
        for (k, a) in t.atoms.iter().enumerate() {
            if done[k] {
                continue;
            }
            let counted = t.counts.is_some() && a.len_col().is_some();
            let before = if counted { m.used.clone() } else { Vec::new() };
            match m.map.get(&a.start()) {
                None => {
                    // a doubly-linked segment known by its last object only
                    let Atom::Dls {
                        strukt,
                        next,
                        prev,
                        first,
                        back,
                        last,
                        fwd,
                        data,
                        by_field,
                        cells,
                        order,
                        ..
                    } = a
                    else {
                        continue;
                    };
                    m.want = data.clone();
                    m.cells = cells.clone();
                    m.links.clear();
                    m.links.extend([*next, *prev]);
                    let Some(&Val::Id(j)) = m.map.get(last) else {
                        continue;
                    };
                    m.chain.clear();
                    if !m.dls_back(*strukt, (*next, *prev, *by_field), j, *first, *back, *fwd) {
                        return false;
                    }
                    m.chain.reverse();
                    if !m.order_ok(order) {
                        return false;
                    }
                }
                Some(Val::Id(j)) => {
                    let j = *j;
                    if !m.atom(a, j) {
                        return false;
                    }
                }
                Some(_) => return false,
            }
            if let (true, Some(col)) = (counted, a.len_col()) {
                let mut img = counts::Image::default();
                for (j, piece) in s.atoms.iter().enumerate() {
                    if m.used[j] && !before[j] && m.owned.get(j) != Some(&true) {
                        match piece.len_col() {
                            Some(c) => img.cols.push(c),
                            None => img.objects += 1,
                        }
                    }
                }
                images.push((col, img));
            }
            done[k] = true;
            progress = true;
        }
        if !progress {
            break;
        }
    }
    if done.iter().any(|d| !d) {
        return false;
    }
    t.neq.iter().all(|&(a, b)| match (m.image(a), m.image(b)) {
        (Some(a), Some(b)) => s.distinct(a, b),
        _ => false,
    }) && counts::implies(s, t, &images)
}

/// A doubly-linked segment's `next` and `prev` fields, and whether its links back
/// are field addresses.
type DlsLinks = (usize, usize, bool);

struct Matcher<'a> {
    s: &'a SymHeap,
    /// σ: `t`'s ids to `s`'s values.
    map: HashMap<Id, Val>,
    /// `s`'s atoms already matched.
    used: Vec<bool>,
    /// `s`'s atoms matched as what a segment's object owns (not pieces of it; empty
    /// until one is).
    owned: Vec<bool>,
    /// `s`'s reference counts, computed when a chain first needs them.
    rc: std::cell::OnceCell<HashMap<Id, usize>>,
    /// The integer facts the segment being matched needs of every piece it takes.
    want: super::Facts,
    /// The cells the segment being matched needs of every piece it takes.
    cells: Cells,
    /// The links of the segment being matched.
    links: Vec<usize>,
    /// The pieces of `s` the segment being matched took, in chain order (backwards
    /// while [`Matcher::dls_back`] walks).
    chain: Vec<usize>,
}

impl Matcher<'_> {
    /// Whether the chain the segment being matched took keeps the segment's orders
    /// `want` ([`order`]): its pieces' orders composed are included in them.
    fn order_ok(&self, want: &order::Orders) -> bool {
        if want.is_empty() {
            return true;
        }
        let pieces: Vec<&Atom> = self.chain.iter().map(|&k| &self.s.atoms[k]).collect();
        let got = order::of_chain(&pieces, want.iter().map(|o| o.field));
        want.iter().all(|w| {
            got.iter()
                .find(|o| o.field == w.field)
                .is_some_and(|o| order::entails(o, w))
        })
    }

    /// Matches `t`'s value `tv` with `s`'s `sv`, extending σ.
    /// Whether the piece `k` of `s` has the integer facts [`Matcher::want`] names.
    fn satisfies(&self, k: usize) -> bool {
        self.want.iter().all(|(f, ks)| match &self.s.atoms[k] {
            Atom::Pt { fields, data, .. } => match fields.get(*f) {
                Some(Val::Int(v)) => ks.contains(v),
                _ => data
                    .iter()
                    .any(|(g, ks2)| g == f && ks2.iter().all(|v| ks.contains(v))),
            },
            Atom::Ls { data, .. } | Atom::Dls { data, .. } => data
                .iter()
                .any(|(g, ks2)| g == f && ks2.iter().all(|v| ks.contains(v))),
            Atom::Block { .. } => false,
        })
    }

    fn val(&mut self, tv: Val, sv: Val) -> bool {
        match tv {
            Val::Unknown => true,
            Val::Null | Val::Int(_) => sv == tv,
            Val::Id(k) => {
                if sv == Val::Unknown {
                    return false;
                }
                match self.map.get(&k) {
                    Some(&v) => v == sv,
                    None => {
                        self.map.insert(k, sv);
                        true
                    }
                }
            }
            // a field address matches the same field of the object σ maps to
            Val::Field(k, f) => {
                let Val::Field(j, g) = sv else {
                    return false;
                };
                f == g && self.val(Val::Id(k), Val::Id(j))
            }
        }
    }

    fn image(&self, v: Val) -> Option<Val> {
        match v {
            Val::Null => Some(Val::Null),
            Val::Unknown | Val::Int(_) => None,
            Val::Id(k) => self.map.get(&k).copied(),
            Val::Field(k, f) => match self.map.get(&k) {
                Some(Val::Id(j)) => Some(Val::Field(*j, f)),
                _ => None,
            },
        }
    }

    /// The unused atom of `s` whose piece starts at `j`.
    fn piece_at(&self, j: Id) -> Option<usize> {
        self.s
            .atoms
            .iter()
            .enumerate()
            .find_map(|(k, a)| (a.start() == j && !self.used[k]).then_some(k))
    }

    fn refs(&self, j: Id) -> usize {
        let rc = self.rc.get_or_init(|| self.s.refcounts());
        rc.get(&j).copied().unwrap_or(0)
    }

    /// [`Matcher::refs`] less the references from the region of the object at `j`
    /// (over the links of the segment being matched), as [`super::fold`] counts them.
    fn ext_refs(&self, j: Id) -> usize {
        let all = self.refs(j);
        if all <= 1 {
            return all;
        }
        match self
            .s
            .atoms
            .iter()
            .position(|a| matches!(a, Atom::Pt { at, .. } if *at == j))
        {
            Some(k) => all - cells::region(self.s, k, &self.links, &|_| false, 0).self_refs,
            None => all,
        }
    }

    /// Whether piece `k` of `s` has the cells ([`Matcher::cells`]) the segment being
    /// matched needs: the common values (extending σ) and, where the segment has
    /// shapes, shapes that entail them (an object's region, whose atoms are then
    /// used). σ and the used atoms are unchanged when not.
    fn cells_ok(&mut self, k: usize) -> bool {
        if self.cells.is_empty() {
            return true;
        }
        let want = std::mem::take(&mut self.cells);
        let saved = (self.map.clone(), self.used.clone(), self.owned.clone());
        // (only segments with cells get here: plain ones return above)
        let ok = self.cells_match(k, &want);
        if !ok {
            (self.map, self.used, self.owned) = saved;
        }
        self.cells = want;
        ok
    }

    fn cells_match(&mut self, k: usize, want: &Cells) -> bool {
        match &self.s.atoms[k] {
            Atom::Pt { fields, .. } => {
                let fields = fields.clone();
                for &(f, v) in &want.common {
                    match fields.get(f) {
                        Some(&sv) if self.val(v, sv) => {}
                        _ => return false,
                    }
                }
                if want.shapes.is_empty() {
                    return true;
                }
                let r = cells::region(self.s, k, &self.links, &|_| true, 0);
                let Some(shape) = r.shape else {
                    return false;
                };
                if r.atoms.iter().any(|&j| self.used[j])
                    || !shapes_entail(std::slice::from_ref(&shape), &want.shapes)
                {
                    return false;
                }
                self.owned.resize(self.s.atoms.len(), false);
                for j in r.atoms {
                    self.used[j] = true;
                    self.owned[j] = true;
                }
                true
            }
            Atom::Ls { cells, .. } | Atom::Dls { cells, .. } => {
                let cells = cells.clone();
                for &(f, v) in &want.common {
                    match cells.common.iter().find(|p| p.0 == f) {
                        Some(&(_, sv)) if self.val(v, sv) => {}
                        _ => return false,
                    }
                }
                shapes_entail(&cells.shapes, &want.shapes)
            }
            Atom::Block { .. } => false,
        }
    }

    /// Matches `t`'s atom `a`, whose start σ maps to `j`.
    fn atom(&mut self, a: &Atom, j: Id) -> bool {
        match a {
            Atom::Pt {
                strukt,
                fields,
                heap,
                data,
                ..
            } => {
                let Some(k) = self.piece_at(j) else {
                    return false;
                };
                let Atom::Pt {
                    strukt: s2,
                    fields: f2,
                    heap: h2,
                    ..
                } = &self.s.atoms[k]
                else {
                    return false;
                };
                if s2 != strukt || f2.len() != fields.len() || h2 != heap {
                    return false;
                }
                let f2 = f2.clone();
                // the covering object's value sets hold of the covered one
                self.want = data.clone();
                if !self.satisfies(k) {
                    return false;
                }
                self.used[k] = true;
                fields.iter().zip(f2).all(|(tv, sv)| self.val(*tv, sv))
            }
            Atom::Block { heap, .. } => match self.piece_at(j) {
                Some(k) if self.s.atoms[k] == (Atom::Block { at: j, heap: *heap }) => {
                    self.used[k] = true;
                    true
                }
                _ => false,
            },
            Atom::Ls {
                strukt,
                link,
                to,
                data,
                cells,
                order,
                ..
            } => {
                self.want = data.clone();
                self.cells = cells.clone();
                self.links.clear();
                self.links.push(*link);
                self.chain.clear();
                self.ls(*strukt, *link, j, *to) && self.order_ok(order)
            }
            Atom::Dls {
                strukt,
                next,
                prev,
                back,
                last,
                fwd,
                data,
                by_field,
                cells,
                order,
                ..
            } => {
                self.want = data.clone();
                self.cells = cells.clone();
                self.links.clear();
                self.links.extend([*next, *prev]);
                self.chain.clear();
                self.dls(*strukt, (*next, *prev, *by_field), j, *back, *last, *fwd)
                    && self.order_ok(order)
            }
        }
    }

    /// One singly-linked step from the piece at `cur`: the value after it.
    fn ls_step(&mut self, strukt: usize, link: usize, cur: Id) -> Option<Val> {
        let k = self.piece_at(cur)?;
        let next = match &self.s.atoms[k] {
            Atom::Pt {
                strukt: s2,
                fields,
                heap: true,
                ..
            } if *s2 == strukt => *fields.get(link)?,
            Atom::Ls {
                strukt: s2,
                link: l2,
                to,
                ..
            } if *s2 == strukt && *l2 == link => *to,
            Atom::Dls {
                strukt: s2,
                next: n2,
                fwd,
                ..
            } if *s2 == strukt && *n2 == link => *fwd,
            _ => return None,
        };
        if !self.satisfies(k) || !self.cells_ok(k) {
            return None;
        }
        self.used[k] = true;
        self.chain.push(k);
        Some(next)
    }

    /// Whether the object at `cur` (if an object) has a field other than `link` that
    /// holds one of `ids`: fold refuses such a singly-linked merge.
    fn points_into(&self, cur: Id, link: usize, ids: &[Id]) -> bool {
        self.s.atoms.iter().any(|a| match a {
            Atom::Pt { at, fields, .. } if *at == cur => fields
                .iter()
                .enumerate()
                .any(|(f, v)| f != link && v.id().is_some_and(|i| ids.contains(&i))),
            _ => false,
        })
    }

    fn ls(&mut self, strukt: usize, link: usize, j: Id, to: Val) -> bool {
        // references from the other fields of the objects the chain took: folding
        // forgets them with the objects, so they do not keep an object named
        let mut inner: HashMap<Id, usize> = HashMap::new();
        self.note_other_fields(j, link, &mut inner);
        let Some(mut next) = self.ls_step(strukt, link, j) else {
            return false;
        };
        let mut first_step = true;
        let wanted = self.image(to);
        loop {
            if wanted == Some(next) {
                break;
            }
            let greedy = wanted.is_none();
            let Val::Id(n) = next else {
                if greedy {
                    break;
                }
                return false;
            };
            let refs = self.ext_refs(n);
            let outer = refs - inner.get(&n).copied().unwrap_or(0).min(refs);
            if greedy
                && (outer != 1
                    || self.points_into(n, link, &[j, n])
                    || (first_step && self.points_into(j, link, &[j, n])))
            {
                break;
            }
            first_step = false;
            self.note_other_fields(n, link, &mut inner);
            match self.ls_step(strukt, link, n) {
                Some(v) => next = v,
                None if greedy => break,
                None => return false,
            }
        }
        self.val(to, next)
    }

    /// Counts the ids in the fields other than `link` of the object at `cur`.
    fn note_other_fields(&self, cur: Id, link: usize, inner: &mut HashMap<Id, usize>) {
        for a in &self.s.atoms {
            if let Atom::Pt { at, fields, .. } = a {
                if *at == cur {
                    for (f, v) in fields.iter().enumerate() {
                        if let (true, Val::Id(i)) = (f != link, v) {
                            *inner.entry(*i).or_default() += 1;
                        }
                    }
                }
            }
        }
    }

    /// One doubly-linked piece at `cur`: (back, last, fwd, objects).
    fn dls_step(
        &mut self,
        strukt: usize,
        (next, prev, bf): DlsLinks,
        cur: Id,
    ) -> Option<(Val, Id, Val, usize)> {
        let k = self.piece_at(cur)?;
        let p = match &self.s.atoms[k] {
            Atom::Pt {
                strukt: s2,
                fields,
                heap: true,
                ..
            } if *s2 == strukt => (*fields.get(prev)?, cur, *fields.get(next)?, 1),
            Atom::Dls {
                strukt: s2,
                next: n2,
                prev: p2,
                back,
                last,
                fwd,
                by_field,
                ..
            } if *s2 == strukt && *n2 == next && *p2 == prev && *by_field == bf => {
                (*back, *last, *fwd, 2)
            }
            _ => return None,
        };
        if !self.satisfies(k) || !self.cells_ok(k) {
            return None;
        }
        self.used[k] = true;
        self.chain.push(k);
        Some(p)
    }

    fn dls(
        &mut self,
        strukt: usize,
        links: DlsLinks,
        j: Id,
        back: Val,
        last: Id,
        fwd: Val,
    ) -> bool {
        let Some((b, mut l, mut f, mut count)) = self.dls_step(strukt, links, j) else {
            return false;
        };
        if !self.val(back, b) {
            return false;
        }
        // whether the current last object is an object piece's (else a segment's)
        let mut last_pt = count == 1;
        let wanted = self.map.get(&last).copied();
        loop {
            // may stop here: long enough and not told to go on
            let may_stop = count >= 2 && wanted.is_none();
            if count >= 2 && wanted == Some(Val::Id(l)) {
                break;
            }
            let Val::Id(n) = f else {
                if may_stop {
                    break;
                }
                return false;
            };
            if may_stop {
                // going on hides the current last object (unless it is the first) and
                // the first of a next segment: only if the chain alone refers to them,
                // as fold hides them
                let l_ok = l == j || self.ext_refs(l) == if last_pt { 2 } else { 1 };
                let n_seg = self
                    .piece_at(n)
                    .is_some_and(|k| matches!(self.s.atoms[k], Atom::Dls { .. }));
                // a next object becomes the last: only if fold would have taken it
                let n_ok = if n_seg {
                    self.refs(n) == 1
                } else {
                    self.ext_refs(n) == 1 + usize::from(self.links_back_to(links, n))
                };
                if !l_ok || !n_ok {
                    break;
                }
            }
            // the next piece must link back to the current last object
            let to_l = super::back_link(links.2, links.0, l);
            let back_ok = self.piece_at(n).is_some_and(|k| match &self.s.atoms[k] {
                Atom::Pt { fields, .. } => fields.get(links.1) == Some(&to_l),
                Atom::Dls { back, .. } => *back == to_l,
                _ => false,
            });
            let step = if back_ok {
                self.dls_step(strukt, links, n)
            } else {
                None
            };
            match step {
                Some((_, l2, f2, c2)) => {
                    l = l2;
                    f = f2;
                    count += c2;
                    last_pt = c2 == 1;
                }
                None if may_stop => break,
                None => return false,
            }
        }
        self.val(Val::Id(last), Val::Id(l)) && self.val(fwd, f)
    }

    /// The piece of `s` that ends at `cur` (an object, or a doubly-linked segment
    /// whose last object it is): (first, back, fwd, objects).
    fn dls_end_at(
        &self,
        strukt: usize,
        (next, prev, bf): DlsLinks,
        cur: Id,
    ) -> Option<(usize, Id, Val, Val, usize)> {
        self.s.atoms.iter().enumerate().find_map(|(k, a)| {
            if self.used[k] || !self.satisfies(k) {
                return None;
            }
            match a {
                Atom::Pt {
                    at,
                    strukt: s2,
                    fields,
                    heap: true,
                    ..
                } if *at == cur && *s2 == strukt => {
                    Some((k, cur, *fields.get(prev)?, *fields.get(next)?, 1))
                }
                Atom::Dls {
                    strukt: s2,
                    next: n2,
                    prev: p2,
                    first,
                    back,
                    last,
                    fwd,
                    by_field,
                    ..
                } if *last == cur
                    && *s2 == strukt
                    && *n2 == next
                    && *p2 == prev
                    && *by_field == bf =>
                {
                    Some((k, *first, *back, *fwd, 2))
                }
                _ => None,
            }
        })
    }

    /// Matches `t`'s `dls(first, back, last, fwd)` whose `last` σ maps to `j`, walking
    /// `s`'s pieces backwards (the mirror of [`Matcher::dls`]).
    fn dls_back(
        &mut self,
        strukt: usize,
        links: DlsLinks,
        j: Id,
        first: Id,
        back: Val,
        fwd: Val,
    ) -> bool {
        let Some((k, mut f, mut b, fw, mut count)) = self.dls_end_at(strukt, links, j) else {
            return false;
        };
        if !self.cells_ok(k) {
            return false;
        }
        let mut first_pt = count == 1;
        self.used[k] = true;
        self.chain.push(k);
        if !self.val(fwd, fw) {
            return false;
        }
        let wanted = self.map.get(&first).copied();
        loop {
            let may_stop = count >= 2 && wanted.is_none();
            if count >= 2 && wanted == Some(Val::Id(f)) {
                break;
            }
            let Some(p) = super::back_target(links.2, links.0, b) else {
                if may_stop {
                    break;
                }
                return false;
            };
            if may_stop {
                let f_ok = f == j || self.ext_refs(f) == if first_pt { 2 } else { 1 };
                let p_seg = self
                    .dls_end_at(strukt, links, p)
                    .is_some_and(|(_, _, _, _, c)| c == 2);
                let p_ok = if p_seg {
                    self.refs(p) == 1
                } else {
                    self.ext_refs(p) == 1 + usize::from(self.links_forward_to(links, p))
                };
                if !f_ok || !p_ok {
                    break;
                }
            }
            // the piece before must link forward to the current first object
            let step = self
                .dls_end_at(strukt, links, p)
                .filter(|&(_, _, _, fw2, _)| fw2 == Val::Id(f))
                .filter(|&(k2, ..)| self.cells_ok(k2));
            match step {
                Some((k2, f2, b2, _, c2)) => {
                    self.used[k2] = true;
                    self.chain.push(k2);
                    f = f2;
                    b = b2;
                    count += c2;
                    first_pt = c2 == 1;
                }
                None if may_stop => break,
                None => return false,
            }
        }
        self.val(Val::Id(first), Val::Id(f)) && self.val(back, b)
    }

    /// Whether the object at `n` has a next object (a piece starting at its `next`)
    /// whose `prev` is `n`.
    fn links_back_to(&self, (next, prev, bf): DlsLinks, n: Id) -> bool {
        let Some(Val::Id(x)) = self.field_of(n, next) else {
            return false;
        };
        let to_n = super::back_link(bf, next, n);
        self.s.atoms.iter().any(|a| match a {
            Atom::Pt { at, fields, .. } => *at == x && fields.get(prev) == Some(&to_n),
            Atom::Dls { first, back, .. } => *first == x && *back == to_n,
            _ => false,
        })
    }

    /// Whether the object at `p` has a previous object (a piece ending at its `prev`)
    /// whose `next` is `p`.
    fn links_forward_to(&self, (next, prev, bf): DlsLinks, p: Id) -> bool {
        let Some(x) = self
            .field_of(p, prev)
            .and_then(|v| super::back_target(bf, next, v))
        else {
            return false;
        };
        self.s.atoms.iter().any(|a| match a {
            Atom::Pt { at, fields, .. } => *at == x && fields.get(next) == Some(&Val::Id(p)),
            Atom::Dls { last, fwd, .. } => *last == x && *fwd == Val::Id(p),
            _ => false,
        })
    }

    /// Field `f` of the object `s` has at `i` (an object atom).
    fn field_of(&self, i: Id, f: usize) -> Option<Val> {
        self.s.atoms.iter().find_map(|a| match a {
            Atom::Pt { at, fields, .. } if *at == i => fields.get(f).copied(),
            _ => None,
        })
    }
}

/// Whether every shape of `s` entails one of `t` (`t` without shapes asks nothing; `s`
/// without shapes gives nothing).
pub fn shapes_entail(s: &[Shape], t: &[Shape]) -> bool {
    t.is_empty()
        || (!s.is_empty()
            && s.iter()
                .all(|x| t.iter().any(|y| entails(&x.heap(), &y.heap()))))
}

/// The shapes with duplicates and entailed ones dropped, sorted; none if more than
/// [`MAX_SHAPES`] remain or one knows nothing.
pub(super) fn reduce_shapes(mut shapes: Vec<Shape>) -> Vec<Shape> {
    shapes.sort();
    shapes.dedup();
    if shapes.iter().any(Shape::is_trivial) {
        return Vec::new();
    }
    let mut keep: Vec<Shape> = Vec::new();
    for (i, s) in shapes.iter().enumerate() {
        let weaker_elsewhere = shapes.iter().enumerate().any(|(j, t)| {
            j != i && entails(&s.heap(), &t.heap()) && !(j > i && entails(&t.heap(), &s.heap()))
        });
        if !weaker_elsewhere {
            keep.push(s.clone());
        }
    }
    if keep.len() > MAX_SHAPES {
        return Vec::new();
    }
    keep
}

impl Cells {
    /// The cells of a segment made of pieces with cells `a` and `b`: the common values
    /// both have, and the shapes of both (none if either has none, or if more than
    /// [`MAX_SHAPES`] remain after dropping shapes another one entails).
    pub fn join(a: &Cells, b: &Cells) -> Cells {
        let common = a
            .common
            .iter()
            .filter(|p| b.common.contains(p))
            .copied()
            .collect();
        let shapes = match (a.shapes.first(), b.shapes.first()) {
            (None, None) => Vec::new(),
            (Some(s), None) => {
                reduce_shapes(a.shapes.iter().cloned().chain(b.implied(s)).collect())
            }
            (None, Some(s)) => {
                reduce_shapes(b.shapes.iter().cloned().chain(a.implied(s)).collect())
            }
            (Some(_), Some(_)) => {
                reduce_shapes(a.shapes.iter().chain(&b.shapes).cloned().collect())
            }
        };
        Cells { common, shapes }
    }
}
