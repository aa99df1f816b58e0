//! Affine equalities (Karr's domain): a conjunction of linear equalities
//! `a₀x₀ + … + aₙ₋₁xₙ₋₁ = b` over rational unknowns, with integer coefficients.
//!
//! The shape domain uses it for *counting* (`--count`, `shape::counts`): the unknowns
//! are program integer variables and the cardinalities of the nodes of one shape
//! structure, so that `count + |nodes after p| = total` survives a list walk.
//!
//! Every operation over-approximates: a row whose arithmetic would overflow `i128` is
//! dropped (fewer equalities = more states), never kept wrong. Rows are kept in
//! reduced row-echelon form with coprime integer entries and a positive pivot, so
//! equal solution sets have equal representations (equality and hashing are semantic
//! as long as no row was dropped for overflow).

use serde::{Deserialize, Serialize};

/// A set of points of ℚⁿ given by linear equalities, or ⊥ (no point). Read back from
/// JSON through [`Affine::add_eq`] (rows of the wrong width are an error), so a read
/// value is in canonical form whatever the input says.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "AffineRepr")]
pub struct Affine {
    dims: usize,
    /// Each row: `dims` coefficients, then the constant (`Σ row[i]·xᵢ = row[dims]`).
    /// Reduced row-echelon form, pivots increasing; empty = ⊤.
    rows: Vec<Vec<i128>>,
    bottom: bool,
}

/// The serialised form of [`Affine`], as written.
#[derive(Deserialize)]
struct AffineRepr {
    dims: usize,
    rows: Vec<Vec<i128>>,
    bottom: bool,
}

impl TryFrom<AffineRepr> for Affine {
    type Error = String;
    fn try_from(r: AffineRepr) -> Result<Affine, String> {
        if r.bottom {
            return Ok(Affine::bottom(r.dims));
        }
        let mut a = Affine::top(r.dims);
        for row in &r.rows {
            match row.split_last() {
                Some((k, coeffs)) if coeffs.len() == r.dims => a.add_eq(coeffs, *k),
                _ => {
                    return Err(format!(
                        "affine: a row of width {} over {} unknowns",
                        row.len(),
                        r.dims
                    ))
                }
            }
        }
        Ok(a)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (a, b) = (a.unsigned_abs(), b.unsigned_abs());
    // the entries are nearly always 0 or ±1, and 128-bit division is a library call
    // (`__divti3`/`__udivti3`: a third of a counting run's time went there)
    if a == 0 || b == 0 {
        return (a | b) as i128;
    }
    if a == 1 || b == 1 {
        return 1;
    }
    if let (Ok(mut x), Ok(mut y)) = (u64::try_from(a), u64::try_from(b)) {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        return x as i128;
    }
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i128
}

/// Divides by the gcd and makes the first non-zero entry positive; `None` for a zero row.
fn normalize(row: &mut [i128]) -> Option<()> {
    let first = row.iter().position(|&x| x != 0)?;
    let mut g = 0;
    for &x in row.iter() {
        g = gcd(g, x);
        if g == 1 {
            break;
        }
    }
    let negative = row[first] < 0;
    match (g, negative) {
        (1, false) => {}
        (1, true) => row.iter_mut().for_each(|x| *x = -*x),
        _ => {
            let sign = if negative { -1 } else { 1 };
            for x in row.iter_mut() {
                *x = *x / g * sign;
            }
        }
    }
    Some(())
}

/// `a·r - b·s` entrywise, `None` on overflow.
fn combine(r: &[i128], a: i128, s: &[i128], b: i128) -> Option<Vec<i128>> {
    r.iter()
        .zip(s)
        .map(|(&x, &y)| {
            let ax = if a == 1 { x } else { x.checked_mul(a)? };
            let by = match (y, b) {
                (0, _) => 0,
                (_, 1) => y,
                _ => y.checked_mul(b)?,
            };
            ax.checked_sub(by)
        })
        .collect()
}

/// Eliminates column `col` from `row` using `piv` (whose entry at `col` is non-zero).
fn eliminate(row: &[i128], piv: &[i128], col: usize) -> Option<Vec<i128>> {
    if row[col] == 0 {
        return Some(row.to_vec());
    }
    let g = gcd(row[col], piv[col]);
    let (a, b) = if g == 1 {
        (piv[col], row[col])
    } else {
        (piv[col] / g, row[col] / g)
    };
    let mut r = combine(row, a, piv, b)?;
    if normalize(&mut r).is_none() {
        r.iter_mut().for_each(|x| *x = 0);
    }
    Some(r)
}

impl Affine {
    /// ⊤ over `dims` unknowns (no equality).
    pub fn top(dims: usize) -> Affine {
        Affine {
            dims,
            rows: Vec::new(),
            bottom: false,
        }
    }

    /// ⊥ over `dims` unknowns.
    pub fn bottom(dims: usize) -> Affine {
        Affine {
            dims,
            rows: Vec::new(),
            bottom: true,
        }
    }

    /// Number of unknowns.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// True if no point satisfies the equalities.
    pub fn is_bottom(&self) -> bool {
        self.bottom
    }

    /// The equalities (coefficients, then the constant), in reduced row-echelon form.
    pub fn rows(&self) -> &[Vec<i128>] {
        &self.rows
    }

    /// Adds `Σ coeffs[i]·xᵢ = constant`. Unsatisfiable ⇒ ⊥.
    pub fn add_eq(&mut self, coeffs: &[i128], constant: i128) {
        assert_eq!(coeffs.len(), self.dims, "affine: row of the wrong width");
        if self.bottom {
            return;
        }
        let mut row = coeffs.to_vec();
        row.push(constant);
        self.insert(row);
    }

    /// Inserts a row and restores the reduced row-echelon form.
    fn insert(&mut self, mut row: Vec<i128>) {
        for r in &self.rows {
            let p = r.iter().position(|&x| x != 0).unwrap_or(self.dims);
            match eliminate(&row, r, p) {
                Some(x) => row = x,
                None => return, // overflow: drop the new equality (sound)
            }
        }
        let Some(p) = row.iter().position(|&x| x != 0) else {
            return; // implied
        };
        if p == self.dims {
            self.bottom = true;
            self.rows.clear();
            return;
        }
        if normalize(&mut row).is_none() {
            return;
        }
        // back-substitute into the existing rows
        let mut kept = Vec::with_capacity(self.rows.len() + 1);
        for r in self.rows.drain(..) {
            if let Some(x) = eliminate(&r, &row, p) {
                if x.iter().any(|&v| v != 0) {
                    kept.push(x);
                }
            }
        }
        kept.push(row);
        kept.sort_by_key(|r| r.iter().position(|&x| x != 0));
        self.rows = kept;
    }

    /// The pivot column of each row.
    fn pivots(&self) -> impl Iterator<Item = usize> + '_ {
        self.rows
            .iter()
            .map(|r| r.iter().position(|&x| x != 0).unwrap_or(0))
    }

    /// True if every point satisfies `Σ coeffs[i]·xᵢ = constant` (always for ⊥).
    pub fn implies(&self, coeffs: &[i128], constant: i128) -> bool {
        if self.bottom {
            return true;
        }
        let mut row = coeffs.to_vec();
        row.push(constant);
        for (r, p) in self.rows.iter().zip(self.pivots()) {
            match eliminate(&row, r, p) {
                Some(x) => row = x,
                None => return false,
            }
        }
        row.iter().all(|&x| x == 0)
    }

    /// `self ⊆ other` (same number of unknowns).
    pub fn leq(&self, other: &Affine) -> bool {
        self.bottom
            || (!other.bottom
                && other
                    .rows
                    .iter()
                    .all(|r| self.implies(&r[..self.dims], r[self.dims])))
    }

    /// If the equalities fix unknown `i` to a constant, that constant (as `num/den`).
    pub fn value_of(&self, i: usize) -> Option<(i128, i128)> {
        self.rows.iter().find_map(|r| {
            (r[i] != 0 && (0..self.dims).all(|j| j == i || r[j] == 0)).then(|| (r[self.dims], r[i]))
        })
    }

    /// Existentially quantifies the unknowns in `gone` and removes their columns; the
    /// other unknowns keep their order.
    pub fn project_out(&self, gone: &[usize]) -> Affine {
        let keep: Vec<usize> = (0..self.dims).filter(|d| !gone.contains(d)).collect();
        if self.bottom {
            return Affine::bottom(keep.len());
        }
        let mut rows = self.rows.clone();
        for &g in gone {
            let Some(k) = rows.iter().position(|r| r[g] != 0) else {
                continue;
            };
            let piv = rows.remove(k);
            rows = rows
                .into_iter()
                .filter_map(|r| eliminate(&r, &piv, g))
                .filter(|r| r.iter().any(|&x| x != 0))
                .collect();
        }
        let mut out = Affine::top(keep.len());
        for r in rows {
            let mut nr: Vec<i128> = keep.iter().map(|&d| r[d]).collect();
            nr.push(r[self.dims]);
            out.insert(nr);
        }
        out
    }

    /// Re-indexes into `dims` unknowns: old unknown `i` becomes `map[i]` (`None`:
    /// projected out). Distinct old unknowns must map to distinct new ones; new
    /// unknowns no old one maps to are unconstrained.
    pub fn remap(&self, map: &[Option<usize>], dims: usize) -> Affine {
        assert_eq!(map.len(), self.dims, "affine: remap of the wrong width");
        if let Some(to) = self.monotone_targets(map) {
            // order-preserving: the rows stay in reduced row-echelon form as they are
            if self.bottom {
                return Affine::bottom(dims);
            }
            let rows = self
                .rows
                .iter()
                .map(|r| {
                    let mut nr = vec![0i128; dims + 1];
                    for (j, &t) in to.iter().enumerate() {
                        nr[t] = r[j];
                    }
                    nr[dims] = r[self.dims];
                    nr
                })
                .collect();
            return Affine {
                dims,
                rows,
                bottom: false,
            };
        }
        self.remap_by_projection(map, dims)
    }

    /// [`Affine::remap`] for any map: project, then insert the moved rows.
    fn remap_by_projection(&self, map: &[Option<usize>], dims: usize) -> Affine {
        let gone: Vec<usize> = (0..self.dims).filter(|&i| map[i].is_none()).collect();
        let p = self.project_out(&gone);
        if p.bottom {
            return Affine::bottom(dims);
        }
        let kept: Vec<usize> = map.iter().filter_map(|m| *m).collect();
        let mut out = Affine::top(dims);
        for r in &p.rows {
            let mut nr = vec![0i128; dims + 1];
            for (j, &to) in kept.iter().enumerate() {
                nr[to] = r[j];
            }
            nr[dims] = r[p.dims];
            out.insert(nr);
        }
        out
    }

    /// `map`'s targets when every unknown is kept and their order is too (strictly
    /// increasing targets), else `None`.
    fn monotone_targets(&self, map: &[Option<usize>]) -> Option<Vec<usize>> {
        let to: Vec<usize> = map.iter().copied().collect::<Option<_>>()?;
        to.windows(2).all(|w| w[0] < w[1]).then_some(to)
    }

    /// Appends `k` unconstrained unknowns.
    pub fn extend(&self, k: usize) -> Affine {
        let map: Vec<Option<usize>> = (0..self.dims).map(Some).collect();
        self.remap(&map, self.dims + k)
    }

    /// The affine hull of the union (least upper bound in this domain).
    pub fn join(&self, other: &Affine) -> Affine {
        assert_eq!(self.dims, other.dims, "affine: join of different widths");
        if self.bottom {
            return other.clone();
        }
        if other.bottom || self.leq(other) {
            return if other.bottom {
                self.clone()
            } else {
                other.clone()
            };
        }
        if other.leq(self) {
            return self.clone();
        }
        // x = y + z, A·y = a·λ, B·z = b·(1 - λ); project y, z, λ (exact: λ ranges over ℚ)
        let n = self.dims;
        let w = 3 * n + 1;
        let lam = 3 * n;
        let mut sys = Affine::top(w);
        for i in 0..n {
            let mut r = vec![0i128; w];
            r[i] = 1;
            r[n + i] = -1;
            r[2 * n + i] = -1;
            sys.add_eq(&r, 0);
        }
        for r in &self.rows {
            let mut nr = vec![0i128; w];
            nr[n..2 * n].copy_from_slice(&r[..n]);
            nr[lam] = -r[n];
            sys.add_eq(&nr, 0);
        }
        for r in &other.rows {
            let mut nr = vec![0i128; w];
            nr[2 * n..3 * n].copy_from_slice(&r[..n]);
            nr[lam] = r[n];
            sys.add_eq(&nr, r[n]);
        }
        let gone: Vec<usize> = (n..w).collect();
        sys.project_out(&gone)
    }

    /// Assigns `x_dst := Σ coeffs[i]·xᵢ + constant` (the right-hand side over the old
    /// values; `coeffs` may mention `dst`).
    pub fn assign(&self, dst: usize, coeffs: &[i128], constant: i128) -> Affine {
        if self.bottom {
            return self.clone();
        }
        // a fresh unknown for the new value, then forget the old one
        let n = self.dims;
        let mut t = self.extend(1);
        let mut r = coeffs.to_vec();
        r.push(-1);
        t.add_eq(&r, -constant);
        let mut map: Vec<Option<usize>> = (0..n).map(Some).collect();
        map[dst] = None;
        map.push(Some(dst));
        t.remap(&map, n)
    }

    /// `x_dst := unknown`.
    pub fn havoc(&self, dst: usize) -> Affine {
        let mut map: Vec<Option<usize>> = (0..self.dims).map(Some).collect();
        map[dst] = None;
        self.remap(&map, self.dims)
    }
}

impl std::fmt::Display for Affine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.bottom {
            return write!(f, "false");
        }
        if self.rows.is_empty() {
            return write!(f, "true");
        }
        for (k, r) in self.rows.iter().enumerate() {
            if k > 0 {
                write!(f, " ∧ ")?;
            }
            let mut first = true;
            for (i, &c) in r[..self.dims].iter().enumerate() {
                if c == 0 {
                    continue;
                }
                let sign = if c < 0 {
                    "-"
                } else if first {
                    ""
                } else {
                    "+"
                };
                let mag = c.abs();
                let sep = if first { "" } else { " " };
                if mag == 1 {
                    write!(f, "{sep}{sign}x{i}")?;
                } else {
                    write!(f, "{sep}{sign}{mag}·x{i}")?;
                }
                first = false;
            }
            write!(f, " = {}", r[self.dims])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// x0 = 1 ∧ x1 = x0 + 2
    fn sample() -> Affine {
        let mut a = Affine::top(3);
        a.add_eq(&[1, 0, 0], 1);
        a.add_eq(&[-1, 1, 0], 2);
        a
    }

    #[test]
    fn equalities_are_solved_and_implied() {
        let a = sample();
        assert_eq!(a.value_of(1), Some((3, 1)));
        assert!(a.implies(&[0, 1, 0], 3));
        assert!(!a.implies(&[0, 0, 1], 0));
        let mut b = a.clone();
        b.add_eq(&[0, 1, 0], 4);
        assert!(b.is_bottom());
    }

    #[test]
    fn join_keeps_the_common_relation() {
        // {count = 0, total = 0} ⊔ {count = 1, total = 1} = {count = total}
        let mut a = Affine::top(2);
        a.add_eq(&[1, 0], 0);
        a.add_eq(&[0, 1], 0);
        let mut b = Affine::top(2);
        b.add_eq(&[1, 0], 1);
        b.add_eq(&[0, 1], 1);
        let j = a.join(&b);
        assert!(j.implies(&[1, -1], 0));
        assert!(!j.implies(&[1, 0], 0));
        assert!(a.leq(&j) && b.leq(&j));
    }

    #[test]
    fn assignment_and_projection() {
        // count := count + 1 keeps count = c0 + 1 for c0 the old node count
        let mut a = Affine::top(2);
        a.add_eq(&[1, -1], 0); // x0 = x1
        let b = a.assign(0, &[1, 0], 1);
        assert!(b.implies(&[1, -1], 1));
        let p = b.project_out(&[1]);
        assert_eq!(p, Affine::top(1));
        let h = a.havoc(0);
        assert_eq!(h, Affine::top(2));
        let e = a.extend(1);
        assert!(e.implies(&[1, -1, 0], 0));
        let r = a.remap(&[Some(1), Some(0)], 2);
        assert!(r.implies(&[-1, 1], 0));
    }

    fn arb_affine(n: usize) -> impl Strategy<Value = Affine> {
        prop::collection::vec((prop::collection::vec(-3i128..=3, n), -4i128..=4), 0..=n).prop_map(
            move |rows| {
                let mut a = Affine::top(n);
                for (c, k) in rows {
                    a.add_eq(&c, k);
                }
                a
            },
        )
    }

    proptest! {
        #[test]
        fn join_is_an_upper_bound_and_commutes(a in arb_affine(3), b in arb_affine(3)) {
            let j = a.join(&b);
            prop_assert!(a.leq(&j));
            prop_assert!(b.leq(&j));
            prop_assert_eq!(j.clone(), b.join(&a));
            prop_assert_eq!(j.join(&a), j);
        }

        #[test]
        fn leq_is_reflexive_and_meets_are_below(a in arb_affine(3), c in prop::collection::vec(-3i128..=3, 3), k in -4i128..=4) {
            prop_assert!(a.leq(&a));
            let mut m = a.clone();
            m.add_eq(&c, k);
            prop_assert!(m.leq(&a));
            prop_assert!(m.implies(&c, k));
        }

        #[test]
        fn order_preserving_remaps_and_extensions_equal_the_general_remap(a in arb_affine(3), k in 0usize..3, gap in 0usize..2) {
            // extend: k new unknowns at the end
            let map: Vec<Option<usize>> = (0..3).map(Some).collect();
            prop_assert_eq!(a.extend(k), a.remap_by_projection(&map, 3 + k));
            // increasing targets with a gap before the last unknown
            let map = vec![Some(0), Some(1), Some(2 + gap)];
            prop_assert_eq!(a.remap(&map, 3 + gap), a.remap_by_projection(&map, 3 + gap));
            // a permutation takes the general path and still agrees with it
            let map = vec![Some(2), Some(0), Some(1)];
            prop_assert_eq!(a.remap(&map, 3), a.remap_by_projection(&map, 3));
        }

        #[test]
        fn points_of_a_space_stay_in_its_images(x in prop::collection::vec(-5i128..=5, 3), c in prop::collection::vec(-3i128..=3, 3)) {
            // the space of exactly one point x: its assignment image holds x's image
            let mut a = Affine::top(3);
            for i in 0..3 {
                let mut r = vec![0; 3];
                r[i] = 1;
                a.add_eq(&r, x[i]);
            }
            let v: i128 = c.iter().zip(&x).map(|(a, b)| a * b).sum::<i128>() + 1;
            let b = a.assign(2, &c, 1);
            prop_assert_eq!(b.value_of(2).map(|(n, d)| n / d), Some(v));
            prop_assert_eq!(b.value_of(0).map(|(n, d)| n / d), Some(x[0]));
        }
    }

    #[test]
    fn gcd_takes_every_shortcut_and_the_long_way_alike() {
        assert_eq!(gcd(0, 0), 0);
        assert_eq!(gcd(0, -7), 7);
        assert_eq!(gcd(-6, 4), 2);
        assert_eq!(gcd(1, -9), 1);
        assert_eq!(gcd(1 << 70, 3 << 65), 1 << 65);
        assert_eq!(gcd(-(1 << 64), 6), 2);
        let mut r = vec![-(1i128 << 66), 1 << 65, 0];
        normalize(&mut r).unwrap();
        assert_eq!(r, vec![2, -1, 0]);
        let mut r = vec![0, -1, 3];
        normalize(&mut r).unwrap();
        assert_eq!(r, vec![0, 1, -3]);
    }

    #[test]
    fn malformed_rows_are_an_error_when_read_not_a_panic() {
        let bad = r#"{"dims":2,"rows":[[1,2,3,4]],"bottom":false}"#;
        assert!(serde_json::from_str::<Affine>(bad).is_err());
        // rows are re-derived: a non-canonical row is normalised
        let a: Affine = serde_json::from_str(r#"{"dims":2,"rows":[[2,4,6]],"bottom":false}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.rows(), &[vec![1, 2, 3]]);
    }
}
