//! [`Vars`]: the variable part `v` of an explicit heap, shared between states until one
//! of them changes it (copy on write).
//!
//! The ART keeps one explicit state per node and compares a new node's state with every
//! uncovered node's at its location. Most of those states descend from one another by
//! steps that change no tracked variable, so they share one vector, and equality is a
//! pointer comparison instead of a walk over every program variable. States that do
//! not share one carry a [`Signature`] beside the pointer (no memory to fetch), which
//! tells most unequal vectors apart, and most pairs that are not `⊑`, without a walk.

use super::Value;
use crate::cfa::VarId;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// At most this many vectors are interned per thread ([`Vars::intern`]).
const INTERNED_MAX: usize = 1 << 14;

/// One [`Value`] per program variable, indexed by [`VarId`]. Reads go through `Deref`
/// (`vars[x]`, `vars.iter()`); writes through [`Vars::set`], [`Vars::update`] and
/// [`Vars::with_mut`], which keep the [`Signature`] exact. Equality, order and hash are
/// those of the values; two copies of one vector are equal without comparing them, two
/// vectors with different signatures without reading them.
#[derive(Clone, Debug, Default)]
pub struct Vars(Arc<Vec<Value>>, Signature);

/// A summary of a value vector kept beside it: how many values are ⊤ (exact) and a sum
/// of a hash of each non-⊤ position with its *key* (an integer's value; a pointer's
/// offset, not its object, which ⊑ may rename). Equal vectors have equal signatures,
/// and for `a ⊑ b` with as many ⊤ in `a` as in `b` the keys agree everywhere, so the
/// sums are equal ([`Vars::may_be_below`]). The sum is updated per changed value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    tops: usize,
    keys: u64,
}

impl Signature {
    /// The signature of `vs`.
    fn of(vs: &[Value]) -> Signature {
        let mut s = Signature::default();
        for (x, &v) in vs.iter().enumerate() {
            s.add(x, v);
        }
        s
    }

    fn term(x: VarId, v: Value) -> Option<u64> {
        let (tag, key) = match v {
            Value::Top => return None,
            Value::Int(i) => (1u64, i as u64),
            Value::Ptr { off, .. } => (2u64, u64::from(off)),
        };
        // splitmix64 finaliser over the position, the kind and the key
        let mut z = (x as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(key.rotate_left(17) ^ tag.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Some(z ^ (z >> 31))
    }

    fn add(&mut self, x: VarId, v: Value) {
        match Self::term(x, v) {
            None => self.tops += 1,
            Some(t) => self.keys = self.keys.wrapping_add(t),
        }
    }

    fn remove(&mut self, x: VarId, v: Value) {
        match Self::term(x, v) {
            None => self.tops = self.tops.saturating_sub(1),
            Some(t) => self.keys = self.keys.wrapping_sub(t),
        }
    }
}

impl Vars {
    /// The values `v`, one per variable.
    pub fn new(v: Vec<Value>) -> Vars {
        let sig = Signature::of(&v);
        Vars(Arc::new(v), sig)
    }

    /// Sets variable `x` to `v` (nothing for an `x` out of range); copies a shared
    /// vector only when the value changes.
    pub fn set(&mut self, x: VarId, v: Value) {
        if let Some(&old) = self.0.get(x).filter(|&&old| old != v) {
            Arc::make_mut(&mut self.0)[x] = v;
            self.1.remove(x, old);
            self.1.add(x, v);
        }
    }

    /// Changes the values with `f` (copies a shared vector) and recomputes the
    /// signature.
    pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut Vec<Value>) -> R) -> R {
        let vs = Arc::make_mut(&mut self.0);
        let r = f(vs);
        self.1 = Signature::of(vs);
        r
    }

    /// Replaces every value by `f(x, value)`; copies a shared vector only when some
    /// value changes.
    pub fn update(&mut self, mut f: impl FnMut(VarId, Value) -> Value) {
        let first = self.0.iter().enumerate().position(|(x, &v)| f(x, v) != v);
        if let Some(first) = first {
            let vs = Arc::make_mut(&mut self.0);
            for (x, v) in vs.iter_mut().enumerate().skip(first) {
                let new = f(x, *v);
                if new != *v {
                    self.1.remove(x, *v);
                    self.1.add(x, new);
                    *v = new;
                }
            }
        }
    }

    /// Shares the vector with an equal one interned before on this thread (the first
    /// of its content is kept), so that equal states compare by address. The table
    /// keeps every distinct vector met, at most [`INTERNED_MAX`] (then it starts over).
    pub fn intern(&mut self) {
        thread_local! {
            static TABLE: std::cell::RefCell<rustc_hash::FxHashSet<Arc<Vec<Value>>>> =
                Default::default();
        }
        TABLE.with(|t| {
            let mut t = t.borrow_mut();
            if let Some(e) = t.get(&self.0) {
                self.0 = e.clone();
            } else {
                if t.len() >= INTERNED_MAX {
                    t.clear();
                }
                t.insert(self.0.clone());
            }
        });
    }

    /// How many values are ⊤.
    pub fn tops(&self) -> usize {
        self.1.tops
    }

    /// False only if `self ⊑ other` cannot hold value by value (a necessary condition
    /// decided on the signatures alone): every ⊤ of `self` must be a ⊤ of `other`, and
    /// with as many ⊤ on both sides every other value's key must agree.
    pub fn may_be_below(&self, other: &Vars) -> bool {
        let (a, b) = (self.1, other.1);
        a.tops <= b.tops && (a.tops < b.tops || a.keys == b.keys)
    }
}

impl Deref for Vars {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl From<Vec<Value>> for Vars {
    fn from(v: Vec<Value>) -> Vars {
        Vars::new(v)
    }
}

impl FromIterator<Value> for Vars {
    fn from_iter<I: IntoIterator<Item = Value>>(it: I) -> Vars {
        Vars::new(it.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Vars {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq for Vars {
    fn eq(&self, other: &Vars) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || (self.1 == other.1 && self.0 == other.0)
    }
}

impl Eq for Vars {}

impl PartialOrd for Vars {
    fn partial_cmp(&self, other: &Vars) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Vars {
    fn cmp(&self, other: &Vars) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        self.0.cmp(&other.0)
    }
}

impl Hash for Vars {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl Serialize for Vars {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Vars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Vars, D::Error> {
        Vec::<Value>::deserialize(d).map(Vars::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_share_until_a_value_changes() {
        let a = Vars::new(vec![Value::Top, Value::Int(1)]);
        let mut b = a.clone();
        b.set(1, Value::Int(1)); // no change: still shared
        assert!(Arc::ptr_eq(&a.0, &b.0));
        b.update(|_, v| v);
        assert!(Arc::ptr_eq(&a.0, &b.0));
        b.set(0, Value::Int(2));
        assert!(!Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(a[0], Value::Top);
        assert_eq!(b[0], Value::Int(2));
        assert_ne!(a, b);
        let mut c = a.clone();
        c.update(|x, v| if x == 1 { Value::Top } else { v });
        assert_eq!(&c[..], &[Value::Top, Value::Top]);
        assert_eq!(&a[..], &[Value::Top, Value::Int(1)]);
    }

    #[test]
    fn interned_equal_vectors_share_one_copy() {
        let mut a = Vars::new(vec![Value::Top, Value::Int(7)]);
        let mut b = Vars::new(vec![Value::Top, Value::Int(7)]);
        let mut c = Vars::new(vec![Value::Top, Value::Int(8)]);
        assert!(!Arc::ptr_eq(&a.0, &b.0));
        a.intern();
        b.intern();
        c.intern();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert!(!Arc::ptr_eq(&a.0, &c.0));
        assert_eq!((a.tops(), a[1]), (1, Value::Int(7)));
        assert_eq!(c[1], Value::Int(8));
    }

    #[test]
    fn equality_order_and_hash_are_those_of_the_values() {
        use std::collections::hash_map::DefaultHasher;
        let a = Vars::new(vec![Value::Int(1)]);
        let b = Vars::new(vec![Value::Int(1)]);
        let c = Vars::new(vec![Value::Int(2)]);
        assert_eq!(a, b);
        assert_eq!(a.cmp(&c), Ordering::Less);
        let h = |v: &Vars| {
            let mut s = DefaultHasher::new();
            v.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(&a), h(&b));
        let json = serde_json::to_string(&a).unwrap();
        let back: Vars = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
    }

    /// Every write keeps the signature equal to a fresh one, and `may_be_below` never
    /// rejects a pair that is below value by value (a ⊤ on the right matches anything,
    /// pointers match on their offset).
    #[test]
    fn signature_stays_exact_and_rejects_only_pairs_not_below() {
        let vals = [
            Value::Top,
            Value::Int(0),
            Value::Int(1),
            Value::Int(-7),
            Value::Ptr { obj: 1, off: 0 },
            Value::Ptr { obj: 2, off: 0 },
            Value::Ptr { obj: 1, off: 4 },
        ];
        let mut seed = 0x1234_5678_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let below = |a: &[Value], b: &[Value]| {
            a.iter().zip(b).all(|(&x, &y)| match (x, y) {
                (_, Value::Top) => true,
                (Value::Int(i), Value::Int(j)) => i == j,
                (Value::Ptr { off: o, .. }, Value::Ptr { off: p, .. }) => o == p,
                _ => false,
            })
        };
        for _ in 0..2000 {
            let n = 1 + (next() % 6) as usize;
            let mut a: Vars = (0..n).map(|_| vals[(next() % 7) as usize]).collect();
            let copy = a.clone();
            match next() % 3 {
                0 => a.set((next() % 6) as usize, vals[(next() % 7) as usize]),
                1 => {
                    let k = next();
                    a.update(|x, v| {
                        if (k >> x) & 1 == 1 {
                            vals[(k >> 8) as usize % 7]
                        } else {
                            v
                        }
                    })
                }
                _ => a.with_mut(|vs| vs[0] = Value::Top),
            }
            assert_eq!(a.1, Signature::of(&a), "{a:?}");
            assert_eq!(copy.1, Signature::of(&copy));
            // b: a weakened or perturbed copy
            let mut b = a.clone();
            let k = next();
            b.update(|x, v| match (k >> (2 * x)) & 3 {
                0 => Value::Top,
                1 => vals[(k >> 20) as usize % 7],
                _ => v,
            });
            if below(&a, &b) {
                assert!(a.may_be_below(&b), "{a:?} {b:?}");
            }
            if below(&b, &a) {
                assert!(b.may_be_below(&a), "{b:?} {a:?}");
            }
            assert_eq!(a == b, a[..] == b[..]);
        }
    }
}
