//! Data-structure invariants checked on explicit heaps (stable names, see BRIEF and
//! `src/explicit/README.md`).
//!
//! Every invariant has roles (e.g. `next`, `prev`) bound to real struct fields by a
//! [`Binding`] (role `i` is `binding.fields[i]`); roles are never matched by field
//! names. An invariant is checked on the cells of one struct type — all of them, or
//! those reachable from a variable ([`CellScope`]) — and on partial heaps: a ⊤ field
//! value never makes an invariant false by itself (a violation is always witnessed
//! by known values). A heap *supports* an invariant only non-vacuously: every role
//! field has at least one non-NULL link between cells of the checked set
//! ([`Verdict::Holds`]); otherwise a non-violated invariant is [`Verdict::Vacuous`].
//!
//! In what follows a *link* `n.f = m` is a known field value that points to the start
//! of a cell `m` of the checked set; NULL, ⊤ and other values (integers, interior or
//! dangling pointers, pointers to cells outside the set) are not links.
//!
//! | name | roles | holds iff (on known values) |
//! |---|---|---|
//! | `acyclic_list` | next | following `next` links from any node never revisits a node |
//! | `cyclic_list` | next | every node lies on a `next` cycle: no node has `next == NULL` or a non-link non-⊤ `next`, and no `next` path from `n` enters a cycle that misses `n` |
//! | `doubly_linked` | next, prev | `n.next = m` ⇒ `m.prev ∈ {n, ⊤}`; `n.prev = m` ⇒ `m.next ∈ {n, ⊤}` |
//! | `headed_dll` | next, prev | `next` is acyclic; `n.next = m` ⇒ `m.prev ∈ {n, ⊤}`; `n.prev = m` ⇒ `m.next ∈ {n, ⊤}`, or `n` has no incoming `next` link and `m` is the last node of `n`'s list (`m.next` NULL): the first node's `prev` points to the last (utlist's `DL_*` lists); supported only where some first node's `prev` does so |
//! | `binary_tree` | left, right | the graph of `left`/`right` links is acyclic and no node has two incoming `left`/`right` links |
//! | `tree_parent` | left, right, parent | `binary_tree(left, right)`; `n.left = m` or `n.right = m` ⇒ `m.parent ∈ {n, ⊤}`; `n.parent = m` ⇒ `m.left = n` or `m.right = n` (or one of them ⊤); `parent` is NULL, ⊤ or a link |
//! | `list_of_lists` | next, down, sub_next | `next` is acyclic; each node's `down` link (maybe NULL) heads an acyclic `sub_next` list S(n); the S(n) are pairwise disjoint; when both types are the same, no S(n) node is entered by a `next` link except from its predecessor in S(n) (when `sub_next` is `next`), i.e. sub-lists are disjoint from the outer lists |

use super::{Addr, ExplicitState, Value};
use crate::cfa::{FieldRef, Program, StructId, VarId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The invariants, with stable names ([`Invariant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Invariant {
    AcyclicList,
    CyclicList,
    DoublyLinked,
    HeadedDll,
    BinaryTree,
    TreeParent,
    ListOfLists,
}

impl Invariant {
    /// All invariants.
    pub const ALL: [Invariant; 7] = [
        Invariant::AcyclicList,
        Invariant::CyclicList,
        Invariant::DoublyLinked,
        Invariant::HeadedDll,
        Invariant::BinaryTree,
        Invariant::TreeParent,
        Invariant::ListOfLists,
    ];

    /// The stable name used by the SCG DSL (`acyclic_list`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Invariant::AcyclicList => "acyclic_list",
            Invariant::CyclicList => "cyclic_list",
            Invariant::DoublyLinked => "doubly_linked",
            Invariant::HeadedDll => "headed_dll",
            Invariant::BinaryTree => "binary_tree",
            Invariant::TreeParent => "tree_parent",
            Invariant::ListOfLists => "list_of_lists",
        }
    }

    /// The invariant with the given stable name.
    pub fn from_name(s: &str) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.name() == s)
    }

    /// The role names, in binding order.
    pub fn roles(self) -> &'static [&'static str] {
        match self {
            Invariant::AcyclicList | Invariant::CyclicList => &["next"],
            Invariant::DoublyLinked | Invariant::HeadedDll => &["next", "prev"],
            Invariant::BinaryTree => &["left", "right"],
            Invariant::TreeParent => &["left", "right", "parent"],
            Invariant::ListOfLists => &["next", "down", "sub_next"],
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A role -> field binding: role `i` of the invariant is `fields[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Binding {
    /// Role `i` is bound to `fields[i]`.
    pub fields: Vec<FieldRef>,
}

impl Binding {
    /// A binding of the given fields, in role order.
    pub fn new(fields: Vec<FieldRef>) -> Binding {
        Binding { fields }
    }
    /// The real field names, in role order.
    pub fn field_names(&self, prog: &Program) -> Vec<String> {
        self.fields
            .iter()
            .map(|f| {
                prog.structs
                    .get(f.strukt)
                    .and_then(|s| s.fields.get(f.field))
                    .map_or_else(|| "?".to_string(), |d| d.name.clone())
            })
            .collect()
    }
}

/// Which cells an invariant is checked on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CellScope {
    /// All cells of the struct type(s) in the heap.
    All,
    /// The cells reachable from this variable (along any pointer field).
    From(VarId),
}

/// The outcome of checking an invariant on one heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Verdict {
    /// Not violated, and every role field has a link: the heap supports it.
    Holds,
    /// Not violated, but some role field has no link (no evidence).
    Vacuous,
    /// Known values contradict it (or the binding is ill-formed).
    Violated,
}

/// What a known field value is, relative to the checked set of cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Null,
    Top,
    Node(Addr),
    Other,
}

/// The cells of one type in scope, with link lookup.
struct View<'a> {
    h: &'a ExplicitState,
    cells: BTreeSet<Addr>,
}

impl View<'_> {
    fn link(&self, a: Addr, f: FieldRef) -> Link {
        match self.h.field(a, f) {
            None => Link::Other,
            Some(Value::Top) => Link::Top,
            Some(v) if v.is_null() => Link::Null,
            Some(v) => match v.obj() {
                Some(b) if self.cells.contains(&b) => Link::Node(b),
                _ => Link::Other,
            },
        }
    }
    fn node(&self, a: Addr, f: FieldRef) -> Option<Addr> {
        match self.link(a, f) {
            Link::Node(b) => Some(b),
            _ => None,
        }
    }
    fn has_link(&self, f: FieldRef) -> bool {
        self.cells.iter().any(|&a| self.node(a, f).is_some())
    }
}

/// The cells of struct type `s` in scope.
fn cells_in_scope(h: &ExplicitState, s: StructId, scope: CellScope) -> BTreeSet<Addr> {
    match scope {
        CellScope::All => h.all_cells_of_type(s).into_iter().map(|(a, _)| a).collect(),
        CellScope::From(x) => h
            .cells_of_type(s, &[x])
            .into_iter()
            .map(|(a, _)| a)
            .collect(),
    }
}

/// True if the binding has the right arity, its fields exist, are distinct where the
/// invariant needs it, and are pointers to the struct types the roles need.
pub fn binding_ok(prog: &Program, inv: Invariant, b: &Binding) -> bool {
    let f = &b.fields;
    if f.len() != inv.roles().len() {
        return false;
    }
    let target = |r: FieldRef| {
        prog.structs
            .get(r.strukt)
            .and_then(|s| s.fields.get(r.field))
            .and_then(|d| d.ty.pointee_struct())
    };
    match inv {
        Invariant::ListOfLists => {
            let a = f[0].strukt;
            let Some(bt) = target(f[1]) else { return false };
            f[1].strukt == a
                && f[0] != f[1]
                && target(f[0]) == Some(a)
                && f[2].strukt == bt
                && target(f[2]) == Some(bt)
                && f[2] != f[1]
        }
        _ => {
            let a = f[0].strukt;
            let distinct = f.iter().collect::<BTreeSet<_>>().len() == f.len();
            distinct && f.iter().all(|&r| r.strukt == a && target(r) == Some(a))
        }
    }
}

/// Checks `inv` with binding `b` on the heap `h`, restricted to `scope`.
/// An ill-formed binding ([`binding_ok`]) is [`Verdict::Violated`].
pub fn check(
    prog: &Program,
    h: &ExplicitState,
    inv: Invariant,
    b: &Binding,
    scope: CellScope,
) -> Verdict {
    if !binding_ok(prog, inv, b) {
        return Verdict::Violated;
    }
    let f = &b.fields;
    let v = View {
        h,
        cells: cells_in_scope(h, f[0].strukt, scope),
    };
    let violated = match inv {
        Invariant::AcyclicList => !acyclic(&v, f[0]),
        Invariant::CyclicList => !cyclic(&v, f[0]),
        Invariant::DoublyLinked => !doubly_linked(&v, f[0], f[1]),
        Invariant::HeadedDll => {
            return match headed_dll(&v, f[0], f[1]) {
                None => Verdict::Violated,
                Some(true) if f.iter().all(|&r| v.has_link(r)) => Verdict::Holds,
                Some(_) => Verdict::Vacuous,
            };
        }
        Invariant::BinaryTree => !binary_tree(&v, f[0], f[1]),
        Invariant::TreeParent => !(binary_tree(&v, f[0], f[1]) && parent_ok(&v, f[0], f[1], f[2])),
        Invariant::ListOfLists => {
            let inner = View {
                h,
                cells: cells_in_scope(h, f[2].strukt, scope),
            };
            return list_of_lists(&v, &inner, f[0], f[1], f[2]);
        }
    };
    if violated {
        Verdict::Violated
    } else if f.iter().all(|&r| v.has_link(r)) {
        Verdict::Holds
    } else {
        Verdict::Vacuous
    }
}

/// No `next` walk revisits a node.
fn acyclic(v: &View, next: FieldRef) -> bool {
    // Functional graph: a node is on a cycle iff walking from it returns to a node of
    // the current walk. Memoise nodes known to reach an end.
    let mut ends: BTreeSet<Addr> = BTreeSet::new();
    for &a in &v.cells {
        let mut walk = BTreeSet::new();
        let mut cur = a;
        loop {
            if ends.contains(&cur) {
                break;
            }
            if !walk.insert(cur) {
                return false;
            }
            match v.node(cur, next) {
                Some(b) => cur = b,
                None => break,
            }
        }
        ends.extend(walk);
    }
    true
}

/// Every node lies on a `next` cycle (as far as known values tell).
fn cyclic(v: &View, next: FieldRef) -> bool {
    for &a in &v.cells {
        let mut walk = BTreeSet::new();
        let mut cur = a;
        loop {
            walk.insert(cur);
            match v.link(cur, next) {
                Link::Null | Link::Other => return false,
                Link::Top => break,
                Link::Node(b) if b == a => break,
                Link::Node(b) if walk.contains(&b) => return false,
                Link::Node(b) => cur = b,
            }
        }
    }
    true
}

/// `n.next = m ⇒ m.prev ∈ {n, ⊤}` and `n.prev = m ⇒ m.next ∈ {n, ⊤}`.
fn doubly_linked(v: &View, next: FieldRef, prev: FieldRef) -> bool {
    v.cells.iter().all(|&a| {
        [(next, prev), (prev, next)]
            .into_iter()
            .all(|(f, g)| match v.node(a, f) {
                Some(m) => matches!(v.link(m, g), Link::Top) || v.link(m, g) == Link::Node(a),
                None => true,
            })
    })
}

/// `headed_dll(next, prev)` (module docs): None if violated, else whether some first
/// node's `prev` link points to the last node of its list (the only support: a
/// NULL-terminated doubly-linked list satisfies the rest too, and stays `dll`).
fn headed_dll(v: &View, next: FieldRef, prev: FieldRef) -> Option<bool> {
    if !acyclic(v, next) {
        return None;
    }
    let entered: BTreeSet<Addr> = v.cells.iter().filter_map(|&a| v.node(a, next)).collect();
    let mut headed = false;
    for &n in &v.cells {
        if let Some(m) = v.node(n, next) {
            if !matches!(v.link(m, prev), Link::Top) && v.link(m, prev) != Link::Node(n) {
                return None;
            }
        }
        let Some(m) = v.node(n, prev) else { continue };
        let back = v.link(m, next);
        if back == Link::Top || back == Link::Node(n) {
            continue;
        }
        if entered.contains(&n) || back != Link::Null {
            return None;
        }
        // `m` must end `n`'s list; a ⊤ on the way is no witness of a violation
        let mut cur = n;
        loop {
            if cur == m {
                headed = true;
                break;
            }
            match v.link(cur, next) {
                Link::Node(b) => cur = b,
                Link::Top => break,
                Link::Null | Link::Other => return None,
            }
        }
    }
    Some(headed)
}

/// left/right links acyclic, no node with two incoming left/right links.
fn binary_tree(v: &View, l: FieldRef, r: FieldRef) -> bool {
    let mut indeg: BTreeMap<Addr, usize> = BTreeMap::new();
    for &a in &v.cells {
        for f in [l, r] {
            if let Some(b) = v.node(a, f) {
                let d = indeg.entry(b).or_insert(0);
                *d += 1;
                if *d > 1 {
                    return false;
                }
            }
        }
    }
    // In-degree <= 1 everywhere: a cycle exists iff some walk upwards (child -> its
    // unique parent) returns; equivalently DFS finds a back edge.
    let mut state: BTreeMap<Addr, u8> = BTreeMap::new(); // 1 on stack, 2 done
    fn dfs(v: &View, a: Addr, l: FieldRef, r: FieldRef, st: &mut BTreeMap<Addr, u8>) -> bool {
        st.insert(a, 1);
        for f in [l, r] {
            if let Some(b) = v.node(a, f) {
                match st.get(&b) {
                    Some(1) => return false,
                    Some(_) => {}
                    None => {
                        if !dfs(v, b, l, r, st) {
                            return false;
                        }
                    }
                }
            }
        }
        st.insert(a, 2);
        true
    }
    for &a in &v.cells {
        if !state.contains_key(&a) && !dfs(v, a, l, r, &mut state) {
            return false;
        }
    }
    true
}

/// Parent pointers agree with left/right.
fn parent_ok(v: &View, l: FieldRef, r: FieldRef, p: FieldRef) -> bool {
    v.cells.iter().all(|&a| {
        let down_ok = [l, r].into_iter().all(|f| match v.node(a, f) {
            Some(m) => matches!(v.link(m, p), Link::Top) || v.link(m, p) == Link::Node(a),
            None => true,
        });
        let up_ok = match v.link(a, p) {
            Link::Null | Link::Top => true,
            Link::Other => false,
            Link::Node(m) => {
                let (ml, mr) = (v.link(m, l), v.link(m, r));
                ml == Link::Top || mr == Link::Top || ml == Link::Node(a) || mr == Link::Node(a)
            }
        };
        down_ok && up_ok
    })
}

fn list_of_lists(
    outer: &View,
    inner: &View,
    next: FieldRef,
    down: FieldRef,
    sub: FieldRef,
) -> Verdict {
    if !acyclic(outer, next) {
        return Verdict::Violated;
    }
    let same = next.strukt == sub.strukt;
    // Known incoming `next` links (source nodes) per target.
    let mut next_into: BTreeMap<Addr, Vec<Addr>> = BTreeMap::new();
    if same {
        for &a in &outer.cells {
            if let Some(b) = outer.node(a, next) {
                next_into.entry(b).or_default().push(a);
            }
        }
    }
    let mut in_sub: BTreeSet<Addr> = BTreeSet::new();
    let (mut has_down, mut has_sub) = (false, false);
    let has_next = outer.has_link(next);
    for &n in &outer.cells {
        let Some(head) = inner.node(n, down) else {
            continue;
        };
        has_down = true;
        // The sub-list S(n): head, then sub_next links (a prefix on partial heaps).
        let mut this = Vec::new();
        let mut seen = BTreeSet::new();
        let mut cur = Some(head);
        while let Some(c) = cur {
            if !seen.insert(c) || in_sub.contains(&c) {
                return Verdict::Violated; // cyclic, or shared with another sub-list
            }
            this.push(c);
            cur = inner.node(c, sub);
            has_sub |= cur.is_some();
        }
        if same {
            // Disjoint from the outer lists: a sub-list node is entered by `next` only
            // from its predecessor in the same sub-list (when sub_next is next) or not
            // at all (otherwise).
            for (k, &c) in this.iter().enumerate() {
                // a node heading a sub-list of its own, or linked onward by `next`
                // (when sub_next is another field), is an outer-list node: e.g. the
                // parent chain of a tree's right child leads back into the left spine
                if outer.node(c, down).is_some() || (sub != next && outer.node(c, next).is_some()) {
                    return Verdict::Violated;
                }
                for &src in next_into.get(&c).map_or(&[][..], |v| v.as_slice()) {
                    let ok = sub == next && k > 0 && this[k - 1] == src;
                    if !ok {
                        return Verdict::Violated;
                    }
                }
            }
        }
        in_sub.extend(this);
    }
    if has_next && has_down && has_sub {
        Verdict::Holds
    } else {
        Verdict::Vacuous
    }
}
