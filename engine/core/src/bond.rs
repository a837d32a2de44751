//! Bonds: when the run installs them, and the record of those that break.
//!
//! The engine knows nothing of a bond's physics: a model that can bond
//! (linearbond) starts one when a contact reaches it flagged
//! [`talus_sdk::flags::BOND`], keeps the contact alive while the bond holds
//! by reporting [`talus_sdk::report::HOLD`], and reports the break
//! ([`talus_sdk::report::BROKE_TENSION`], [`talus_sdk::report::BROKE_SHEAR`]).
//! This module decides which contacts are flagged in which step, and turns
//! the reports into [`BondBreak`] rows.
//!
//! Reads: the group assignment, the contacts' gaps (in the contact pass).
//! Writes: the install of the current step (per model, the gap below which
//! a contact of each property set bonds), the log of breaks.
//! Invariant: breaks are logged in (model, lane, slot) order within a
//! step, the same for any thread count.

use crate::math::Vec3;
use crate::snapshot::PieceId;
use crate::step::When;

/// Bonds every contact between two groups whose gap is below `gap`, once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BondInstall {
    /// The two groups (ids of [`crate::Simulation::group`]), either order.
    pub groups: (u16, u16),
    /// Contacts bond where their gap is below this (m); a positive value
    /// bonds pieces that are near without touching.
    pub gap: f64,
    /// When.
    pub at: When,
}

impl BondInstall {
    /// Whether the install is due in the step that starts at `time` and
    /// has number `step`.
    pub(crate) fn due(&self, step: u64, time: f64) -> bool {
        match self.at {
            When::Step(k) => step == k,
            When::Time(t) => time >= t,
        }
    }
}

/// How a bond broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakMode {
    /// Its tensile stress exceeded the tensile strength.
    Tension,
    /// Its shear stress exceeded the shear strength.
    Shear,
}

impl BreakMode {
    /// `"tension"` or `"shear"`.
    pub fn name(self) -> &'static str {
        match self {
            BreakMode::Tension => "tension",
            BreakMode::Shear => "shear",
        }
    }
}

/// One broken bond.
#[derive(Clone, Debug, PartialEq)]
pub struct BondBreak {
    /// The step in which it broke.
    pub step: u64,
    /// Simulated time at the end of that step (s).
    pub time: f64,
    /// The contact's id.
    pub contact: u64,
    /// End1 of the contact.
    pub end1: PieceId,
    /// End2 of the contact.
    pub end2: PieceId,
    /// Index of the contact's model.
    pub model: usize,
    /// Contact location when it broke (m).
    pub position: Vec3,
    /// Tension or shear.
    pub mode: BreakMode,
    /// The model's state slots after the call that broke it (the model
    /// keeps the stresses at failure there).
    pub state: Vec<f64>,
}

/// The install of one step for one model: per property set, the gap below
/// which its contacts bond (`-inf` for sets that do not bond now).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct InstallNow {
    pub(crate) gap: Vec<f64>,
}

impl InstallNow {
    /// Whether a contact of property set `set` with gap `gap` bonds.
    #[inline]
    pub(crate) fn bonds(&self, set: u32, gap: f64) -> bool {
        self.gap.get(set as usize).is_some_and(|&g| gap < g)
    }
}

/// Two numbers uniform in `[0, 1)` fixed by `seed` and the pair `key` (see
/// [`talus_sdk::inputs::PAIR_RANDOM`]): splitmix64 steps, the top 53 bits
/// of each as a fraction.
pub fn pair_random(seed: u64, key: u64) -> [f64; 2] {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let a = mix(key ^ mix(seed));
    let b = mix(a);
    let unit = |z: u64| (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    [unit(a), unit(b)]
}

impl crate::Simulation {
    /// The installs due in this step's contact pass, per model (`None`
    /// for a model with none), marked done; with a wall, the facet
    /// contact of each ball that bonds is chosen here (see
    /// [`Simulation::choose_bond_facets`](crate::Simulation)).
    pub(crate) fn installs_now(&mut self) -> Vec<Option<InstallNow>> {
        if self.installs.iter().all(|(_, done)| *done) {
            return Vec::new();
        }
        let mut now: Vec<Option<InstallNow>> = vec![None; self.models.len()];
        let (step, start) = (self.step, self.step_start);
        for (install, done) in self.installs.iter_mut() {
            if *done || !install.due(step, start) {
                continue;
            }
            *done = true;
            let (a, b) = install.groups;
            let Some(&(m, set)) = self.assignment.get(&(a.min(b), a.max(b))) else {
                continue;
            };
            let model = &self.models[m as usize];
            let n_sets = model.props.len() / model.n_props.max(1);
            let gaps = now[m as usize].get_or_insert_with(|| InstallNow {
                gap: vec![f64::NEG_INFINITY; n_sets.max(set as usize + 1)],
            });
            let g = &mut gaps.gap[set as usize];
            *g = g.max(install.gap);
        }
        self.choose_bond_facets(&now);
        now
    }

    /// Marks, of each ball's facet contacts with one wall that would bond
    /// now, the one with the least gap (then the lowest facet) with
    /// [`BOND_NEAREST`](crate::contact::BOND_NEAREST): a ball bonds to a
    /// wall once, where it is nearest, not to every facet around a vertex.
    /// Contacts the wall logic suppressed (they carry for another) do not
    /// count. A block bonds once per wall and plane (see
    /// `choose_bond_carriers`).
    fn choose_bond_facets(&mut self, now: &[Option<InstallNow>]) {
        use crate::contact::{BOND_NEAREST, SIDE_OFF};
        use talus_sdk::flags::SUPPRESSED;
        let lane = crate::PairKind::BallFacet.index();
        for (m, install) in self.models.iter_mut().zip(now) {
            let Some(install) = install else { continue };
            let st = &mut m.lanes[lane].store;
            let mut best: rustc_hash::FxHashMap<(u32, u32), (f64, u32, usize)> = Default::default();
            for k in 0..st.len() {
                let (flags, gap) = (st.setup[k].flags, st.plane[k].gap);
                if flags & (SUPPRESSED | SIDE_OFF) != 0 || !install.bonds(st.setup[k].prop_set, gap)
                {
                    continue;
                }
                let (w, f) = self.facet_owner[st.end2[k].index()];
                let key = (st.end1[k].index() as u32, w);
                let entry = best.entry(key).or_insert((gap, f, k));
                if (gap, f) < (entry.0, entry.1) {
                    *entry = (gap, f, k);
                }
            }
            for (_, (_, _, k)) in best {
                st.setup[k].flags |= BOND_NEAREST;
            }
            // A block bonds once per wall and plane.
            let st = &mut m.lanes[crate::PairKind::BlockFacet.index()].store;
            if !st.is_empty() {
                let walls = &*crate::body::walls(&self.world);
                let blocks = crate::body::BlocksRef::of(&self.world);
                let shapes = &self.shapes;
                let tol = |b: usize| 1e-9 * shapes[blocks.shape[b] as usize].radius;
                let bonds = |set: u32, gap: f64| install.bonds(set, gap);
                crate::narrow::block_facet::choose_bond_carriers(
                    st,
                    &self.facet_owner,
                    walls,
                    tol,
                    bonds,
                );
            }
        }
    }

    /// Turns the pass's broken bonds, `(model, lane, slot)`, into rows of
    /// the log.
    pub(crate) fn log_breaks(&mut self, broke: &[(usize, usize, usize)]) {
        for &(m, l, k) in broke {
            let st = &self.models[m].lanes[l].store;
            let mode = if st.output[k].reserved & talus_sdk::report::BROKE_TENSION != 0 {
                BreakMode::Tension
            } else {
                BreakMode::Shear
            };
            let row = BondBreak {
                step: self.step,
                time: self.time,
                contact: st.id[k],
                end1: PieceId::public(st.end1[k], self),
                end2: PieceId::public(st.end2[k], self),
                model: m,
                position: st.plane[k].xc,
                mode,
                state: st.state_of(k).to_vec(),
            };
            self.breaks.push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform in [0, 1), fixed per (seed, pair), different across pairs
    /// and seeds, and with the mean and variance of a uniform over many
    /// pairs.
    #[test]
    fn pair_random_is_fixed_and_uniform() {
        assert_eq!(pair_random(3, 77), pair_random(3, 77));
        assert_ne!(pair_random(3, 77), pair_random(4, 77));
        assert_ne!(pair_random(3, 77), pair_random(3, 78));
        let n = 200_000;
        let (mut sum, mut sq, mut cross) = (0.0, 0.0, 0.0);
        for k in 0..n {
            let [u, v] = pair_random(1, k);
            assert!((0.0..1.0).contains(&u) && (0.0..1.0).contains(&v));
            sum += u + v;
            sq += u * u + v * v;
            cross += (u - 0.5) * (v - 0.5);
        }
        let m = sum / (2 * n) as f64;
        let var = sq / (2 * n) as f64 - m * m;
        // Standard errors: 0.29 / sqrt(4e5) = 4.6e-4 for the mean.
        assert!((m - 0.5).abs() < 3e-3, "mean {m}");
        assert!((var - 1.0 / 12.0).abs() < 2e-3, "variance {var}");
        assert!((cross / n as f64).abs() < 2e-3, "the two are correlated");
    }

    #[test]
    fn installs_fall_due_by_step_or_time() {
        let at = |at| BondInstall {
            groups: (0, 0),
            gap: 0.0,
            at,
        };
        assert!(at(When::Step(0)).due(0, 0.0));
        assert!(!at(When::Step(3)).due(2, 1.0));
        assert!(at(When::Time(0.5)).due(9, 0.5));
        assert!(!at(When::Time(0.5)).due(9, 0.49));
        let now = InstallNow {
            gap: vec![f64::NEG_INFINITY, 1e-3],
        };
        assert!(!now.bonds(0, -1.0));
        assert!(now.bonds(1, 5e-4));
        assert!(!now.bonds(1, 1e-3));
        assert!(!now.bonds(2, -1.0));
        assert!(!now.bonds(1, f64::NAN));
    }
}
