//! [`Vars`]: the variable part `v` of an explicit heap, shared between states until one
//! of them changes it (copy on write).
//!
//! The ART keeps one explicit state per node and compares a new node's state with every
//! uncovered node's at its location. Most of those states descend from one another by
//! steps that change no tracked variable, so they share one vector, and equality is a
//! pointer comparison instead of a walk over every program variable.

use super::Value;
use crate::cfa::VarId;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// One [`Value`] per program variable, indexed by [`VarId`]. Reads go through `Deref`
/// (`vars[x]`, `vars.iter()`); writes through [`Vars::set`], [`Vars::get_mut`] and
/// [`Vars::make_mut`]. Equality, order and hash are those of the values; two copies
/// of one vector are equal without comparing them.
#[derive(Clone, Debug, Default)]
pub struct Vars(Arc<Vec<Value>>);

impl Vars {
    /// The values `v`, one per variable.
    pub fn new(v: Vec<Value>) -> Vars {
        Vars(Arc::new(v))
    }

    /// Sets variable `x` to `v` (nothing for an `x` out of range); copies a shared
    /// vector only when the value changes.
    pub fn set(&mut self, x: VarId, v: Value) {
        if self.0.get(x).is_some_and(|&old| old != v) {
            Arc::make_mut(&mut self.0)[x] = v;
        }
    }

    /// Mutable access to variable `x` (copies a shared vector), `None` out of range.
    pub fn get_mut(&mut self, x: VarId) -> Option<&mut Value> {
        if x >= self.0.len() {
            return None;
        }
        Arc::make_mut(&mut self.0).get_mut(x)
    }

    /// Mutable access to every value (copies a shared vector).
    pub fn make_mut(&mut self) -> &mut Vec<Value> {
        Arc::make_mut(&mut self.0)
    }

    /// Replaces every value by `f(x, value)`; copies a shared vector only when some
    /// value changes.
    pub fn update(&mut self, mut f: impl FnMut(VarId, Value) -> Value) {
        let first = self.0.iter().enumerate().position(|(x, &v)| f(x, v) != v);
        if let Some(first) = first {
            let vs = Arc::make_mut(&mut self.0);
            for (x, v) in vs.iter_mut().enumerate().skip(first) {
                *v = f(x, *v);
            }
        }
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
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
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
}
