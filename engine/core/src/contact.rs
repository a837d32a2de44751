//! Contacts: the store (struct of arrays per model) and contact resolution
//! (contact plane, frame update, relative-motion increments).
//!
//! Reads: the kinematics of the two ends. Writes: the contact plane
//! (location `xc`, normal `n`, axes `s`, `t`), the gap and the increments
//! handed to the model.
//! Invariants: `n` points from end1 to end2 and `n = s x t`; the gap is
//! negative when the pieces overlap; increments are those of end2 relative
//! to end1 over one timestep.

use crate::math::Vec3;
use crate::sim::BATCH;
use talus_sdk::{flags, ContactInput, ContactOutput};

/// The geometric state of one contact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Plane {
    /// Contact location (m).
    pub xc: Vec3,
    /// Unit normal, end1 to end2.
    pub n: Vec3,
    /// Unit in-plane axis s.
    pub s: Vec3,
    /// Unit in-plane axis t (`t = n x s`).
    pub t: Vec3,
    /// Gap (m); negative is overlap.
    pub gap: f64,
    /// For ball-facet contacts: region code of the wall contact point
    /// (see [`crate::geometry::Region::code`]); 0 for ball-ball.
    pub region: u8,
    /// Whether the frame has been initialised (false for a new contact).
    pub initialised: bool,
}

/// Motion of one end at the contact: reference point, its velocity and the
/// angular velocity of the body.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndMotion {
    /// Reference point: centroid of a ball, centre of rotation of a wall (m).
    pub x: Vec3,
    /// Velocity of the reference point (m/s).
    pub v: Vec3,
    /// Angular velocity (rad/s).
    pub w: Vec3,
}

impl EndMotion {
    /// Velocity of the body point now at `p` (m/s).
    #[inline]
    pub fn velocity_at(&self, p: Vec3) -> Vec3 {
        self.v + self.w.cross(p - self.x)
    }
}

/// Initial `s` axis: the projection of global x on the plane, or of global
/// y when x is (nearly) parallel to `n`.
#[inline]
pub fn initial_s(n: Vec3) -> Vec3 {
    let axis = if n.x.abs() < 0.9 { Vec3::X } else { Vec3::Y };
    (axis - n * axis.dot(n)).normalize()
}

/// Carries `s` from the old plane (normal `n_old`) to the new one (normal
/// `n`) and turns it about `n` with the mean spin of the two ends.
///
/// # Model
/// First rotation, about the line common to both planes:
/// `s1 = s* - s* x (n* x n)`. Second rotation, about the new normal by the
/// average angular velocity of the pieces projected on it:
/// `s2 = s1 - s1 x w~ dt` with `w~ = (0.5 (w1 + w2) . n) n`.
/// The result is then projected on the plane and normalised, so the triad
/// stays orthonormal to rounding however many steps are taken (the two
/// rotations are first-order; the projection only removes their
/// second-order drift).
///
/// Evaluated in a form with fewer operations and the same value: with
/// `a x (b x c) = b (a.c) - c (a.b)` the first rotation is
/// `s* - n* (s*.n) + n (s*.n*)`, and its last term, being along `n`, is
/// removed by the projection (it adds nothing to the second rotation
/// either, `n x n = 0`); the second rotation is `s1 + phi (n x s1)` with
/// `phi = 0.5 dt (w1 + w2) . n`.
///
/// # References
/// Itasca, PFC 6 documentation, "Contact Resolution", eq. (5).
#[inline]
pub fn rotate_frame(
    s_old: Vec3,
    n_old: Vec3,
    n: Vec3,
    w1: Vec3,
    w2: Vec3,
    dt: f64,
) -> (Vec3, Vec3) {
    let s1 = s_old - n_old * s_old.dot(n);
    let phi = 0.5 * dt * (w1 + w2).dot(n);
    let s2 = s1 + n.cross(s1) * phi;
    let sp = s2 - n * s2.dot(n);
    let l2 = sp.length_squared();
    let e = l2 - 1.0;
    let s = if e.abs() < 1e-8 {
        // A small turn: one Newton step for 1 / sqrt(l2) from 1 is exact
        // to within 3/8 e^2 < 4e-17, below rounding, and spares the square
        // root and the division of the chain.
        sp * (1.0 - 0.5 * e)
    } else if l2 > 1e-24 {
        // One reciprocal instead of three divisions (glam divides per lane).
        sp * (1.0 / l2.sqrt())
    } else {
        initial_s(n)
    };
    (s, n.cross(s))
}

/// Fills the relative-motion increments of `input` from the two ends'
/// motion over `dt`.
///
/// # Model
/// `d' = v2(xc) - v1(xc)` with `v(xc) = v + w x (xc - x)`; the normal part
/// `d'.n`, the shear part projected on (s, t); the relative spin
/// `w2 - w1` split into twist (along n) and bend (on the plane); every rate
/// times `dt`. The in-plane components are taken as `d'.s` and `d'.t`
/// directly: `s` and `t` are normal to `n`, so removing the normal part
/// first would change nothing but the rounding.
#[inline]
pub fn increments(
    plane: &Plane,
    e1: &EndMotion,
    e2: &EndMotion,
    dt: f64,
    input: &mut ContactInput,
) {
    let dv = (e2.velocity_at(plane.xc) - e1.velocity_at(plane.xc)) * dt;
    let dw = (e2.w - e1.w) * dt;
    input.delta_n = dv.dot(plane.n);
    input.delta_s = [dv.dot(plane.s), dv.dot(plane.t)];
    input.theta_t = dw.dot(plane.n);
    input.theta_b = [dw.dot(plane.s), dw.dot(plane.t)];
}

/// Sets a fresh contact's frame or carries the old one to the new normal.
#[inline]
pub fn update_frame(plane: &mut Plane, n: Vec3, w1: Vec3, w2: Vec3, dt: f64) {
    if plane.initialised {
        let (s, t) = rotate_frame(plane.s, plane.n, n, w1, w2, dt);
        plane.n = n;
        plane.s = s;
        plane.t = t;
    } else {
        plane.n = n;
        plane.s = initial_s(n);
        plane.t = n.cross(plane.s);
        plane.initialised = true;
    }
}

/// Contact plane of two balls.
///
/// # Model
/// `n = (x2 - x1) / d`, `g = d - (R1 + R2)`, `xc = x1 + (R1 + g/2) n`.
/// Coincident centres keep the previous normal (or x for a new contact).
#[inline]
pub fn plane_ball_ball(x1: Vec3, r1: f64, x2: Vec3, r2: f64, prev_n: Vec3) -> (Vec3, f64, Vec3) {
    let d_vec = x2 - x1;
    let d = d_vec.length();
    let n = if d > 0.0 {
        d_vec * (1.0 / d)
    } else if prev_n != Vec3::ZERO {
        prev_n
    } else {
        Vec3::X
    };
    let gap = d - (r1 + r2);
    (n, gap, x1 + n * (r1 + 0.5 * gap))
}

/// Contact plane of a ball and a facet whose closest point is `xf`.
///
/// # Model
/// `n = (xf - x1) / d`, `g = d - R1`, `xc = x1 + (R1 + g/2) n`. A ball
/// centre lying on the facet takes the side opposite the facet normal.
#[inline]
pub fn plane_ball_facet(x1: Vec3, r1: f64, xf: Vec3, facet_normal: Vec3) -> (Vec3, f64, Vec3) {
    let d_vec = xf - x1;
    let d = d_vec.length();
    let n = if d > 0.0 {
        d_vec * (1.0 / d)
    } else {
        -facet_normal
    };
    let gap = d - r1;
    (n, gap, x1 + n * (r1 + 0.5 * gap))
}

/// What a contact applies to its two ends this step, in global axes:
/// the force on end2 (end1 gets the opposite), the moments about each
/// end's reference point, and the stiffness for the timestep.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Applied {
    /// Force on end2 (N); zero unless the contact is active.
    pub force: Vec3,
    /// Moment on end1 about its reference point (N m).
    pub torque1: Vec3,
    /// Moment on end2 about its reference point (N m).
    pub torque2: Vec3,
    /// Translational stiffness for the timestep (N/m); zero if inactive.
    pub stiffness: f64,
}

/// Per-contact data that builds the model input: fixed at creation
/// (effective mass, property set) or set by the wall logic (flags).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Setup {
    /// Effective inertial mass (kg).
    pub mass: f64,
    /// Property set of the contact's model assignment.
    pub prop_set: u32,
    /// [`talus_sdk::flags`] bits.
    pub flags: u32,
}

/// All contacts that use one model: dense slots, one contiguous state
/// block. Slots move when contacts are removed (swap-remove), ids never.
#[derive(Clone, Debug, Default)]
pub struct ContactStore {
    /// Stable contact id.
    pub id: Vec<u64>,
    /// end1: a ball index.
    pub end1: Vec<u32>,
    /// end2: a ball index or a facet reference (see [`crate::cellspace::FACET`]).
    pub end2: Vec<u32>,
    /// Contact plane and gap.
    pub plane: Vec<Plane>,
    /// Effective mass, property set and flags.
    pub setup: Vec<Setup>,
    /// Model output of the current step.
    pub output: Vec<ContactOutput>,
    /// One byte per contact: whether it puts nothing (0), only a timestep
    /// stiffness (1) or a force (2) on its ends this step, so that passes
    /// over the contacts skip idle ones without reading their output.
    pub carry: Vec<u8>,
    /// Model state, `stride` values per contact (the first `n_state` used).
    pub state: Vec<f64>,
    /// State slots per contact.
    pub n_state: usize,
    /// Storage per contact in `state`: `max(n_state, 1)`, so that chunks of
    /// the state line up with chunks of contacts even without state.
    pub stride: usize,
    /// How many contacts have a facet as end2 (the wall stage skips stores
    /// without any).
    pub n_facet: usize,
    /// Set whenever a contact is added or removed (contacts may change
    /// chunk; a regrouping moves them only within theirs); the contact
    /// pass clears it once it has brought its segment plan up to date.
    pub changed: bool,
    /// The slots a contact arrived in (added, or moved in by a removal)
    /// since `changed` was last cleared; the contact pass clears it too.
    pub arrived: Vec<u32>,
    /// Per chunk of [`BATCH`] slots: how its contacts' kinds alternate
    /// (see [`ContactStore::note_switches`]).
    order: Vec<ChunkOrder>,
}

/// How the kinds of one chunk's contacts alternate, for
/// [`ContactStore::note_switches`].
#[derive(Clone, Copy, Debug, Default)]
struct ChunkOrder {
    /// Changes of kind beyond the floor, summed since the last regrouping.
    excess: u32,
    /// Changes of kind in the first step after the last regrouping.
    floor: u32,
    /// Set by a regrouping: the next step's count becomes the floor.
    floor_pending: bool,
}

impl ContactStore {
    /// An empty store for a model with `n_state` state slots.
    pub fn new(n_state: usize) -> ContactStore {
        ContactStore {
            n_state,
            stride: n_state.max(1),
            ..Default::default()
        }
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// The model state of the contact in `slot`.
    pub fn state_of(&self, slot: usize) -> &[f64] {
        &self.state[slot * self.stride..slot * self.stride + self.n_state]
    }

    /// Appends a contact with zeroed state; returns its slot.
    pub fn push(&mut self, id: u64, end1: u32, end2: u32, prop_set: u32, mass: f64) -> usize {
        self.changed = true;
        self.arrived.push(self.id.len() as u32);
        self.id.push(id);
        self.end1.push(end1);
        self.end2.push(end2);
        self.n_facet += usize::from(end2 & crate::cellspace::FACET != 0);
        self.plane.push(Plane::default());
        let facet = if end2 & crate::cellspace::FACET != 0 {
            flags::END2_FACET
        } else {
            0
        };
        self.setup.push(Setup {
            mass,
            prop_set,
            flags: flags::NEW | facet,
        });
        self.output.push(ContactOutput::default());
        self.carry.push(0);
        self.state.extend(std::iter::repeat_n(0.0, self.stride));
        self.id.len() - 1
    }

    /// Notes, per chunk, how often a contact of another kind (ball-ball or
    /// ball-facet, busy or idle) than the one before it is met by the steps
    /// since the last count.
    ///
    /// Contacts that flicker between touching and not make some changes
    /// whatever the order, so a chunk's first count after its regrouping
    /// is taken as its floor, and only what lies above it is summed. A
    /// change costs the contact pass a mispredicted branch or two per step,
    /// a regrouping about one contact's move per contact of the chunk; it
    /// is due once the excess adds up to the chunk's length, which keeps
    /// the two costs even.
    pub fn note_switches(&mut self, counts: &[u32]) {
        self.order.resize(counts.len(), ChunkOrder::default());
        for (o, &n) in self.order.iter_mut().zip(counts) {
            if o.floor_pending {
                o.floor = n;
                o.floor_pending = false;
            } else {
                o.excess = o.excess.saturating_add(n.saturating_sub(o.floor));
            }
        }
    }

    /// The chunks due for a regrouping by kind (all of them if `always`).
    pub fn regroup_due(&self, always: bool) -> Vec<usize> {
        let n = self.len().div_ceil(BATCH);
        (0..n)
            .filter(|&c| always || self.order.get(c).is_some_and(|o| o.excess > BATCH as u32))
            .collect()
    }

    /// Regroups the contacts of each chunk in `chunks` (ascending) by
    /// `group` (stable: each group in its old order, groups in increasing
    /// order), the chunks in parallel; returns how many chunks had a
    /// contact move. With `owners`, thread `p` of the team regroups the
    /// chunks from `owners[p]` to `owners[p + 1]` (those of its segment of
    /// the contact pass).
    pub fn regroup_chunks(
        &mut self,
        chunks: &[usize],
        owners: Option<&[usize]>,
        group: impl Fn(&Self, usize) -> usize + Sync,
    ) -> usize {
        // Slots within a chunk are numbered in 16 bits.
        const _: () = assert!(BATCH <= 1 << 16);
        fn reorder<T: Copy>(v: &mut [T], order: &[u16], per: usize) {
            let old = v.to_vec();
            for (to, &k) in v.chunks_exact_mut(per).zip(order) {
                let k = k as usize;
                to.copy_from_slice(&old[k * per..(k + 1) * per]);
            }
        }
        for &c in chunks {
            if let Some(o) = self.order.get_mut(c) {
                o.excess = 0;
                o.floor_pending = true;
            }
        }
        // The new order of every chunk that changes, by chunk.
        let n_chunks = self.len().div_ceil(BATCH);
        let mut orders: Vec<Option<Vec<u16>>> = vec![None; n_chunks];
        let found: Vec<(usize, Vec<u16>)> = {
            let st = &*self;
            let due: Vec<usize> = chunks.iter().copied().filter(|&c| c < n_chunks).collect();
            let cuts = owners.map(|o| item_cuts(o, &due));
            let found = crate::team::map_cut(due, cuts.as_deref(), |_, c| {
                let start = c * BATCH;
                let len = BATCH.min(st.len() - start);
                let mut order: Vec<u16> = (0..len as u16).collect();
                order.sort_by_key(|&k| group(st, start + k as usize));
                let moved = order.iter().enumerate().any(|(i, &k)| i != k as usize);
                moved.then_some((c, order))
            });
            found.into_iter().flatten().collect()
        };
        let moved = found.len();
        if moved == 0 {
            return 0;
        }
        for (c, order) in found {
            orders[c] = Some(order);
        }
        // `changed` stays as it is: the contacts keep their chunk, hence
        // their segment of the parallel pass.
        let n = self.stride;
        let columns = self.id.chunks_mut(BATCH).zip(self.end1.chunks_mut(BATCH));
        let columns = columns.zip(
            self.end2
                .chunks_mut(BATCH)
                .zip(self.plane.chunks_mut(BATCH)),
        );
        let columns = columns.zip(
            self.setup
                .chunks_mut(BATCH)
                .zip(self.output.chunks_mut(BATCH)),
        );
        let columns = columns.zip(
            self.carry
                .chunks_mut(BATCH)
                .zip(self.state.chunks_mut(BATCH * n)),
        );
        // Only the chunks that change.
        let changed: Vec<usize> = (0..n_chunks).filter(|&c| orders[c].is_some()).collect();
        let cuts = owners.map(|o| item_cuts(o, &changed));
        let jobs = columns
            .zip(&orders)
            .filter_map(|(c, order)| Some((c, order.as_ref()?)));
        crate::team::map_cut(
            jobs.collect(),
            cuts.as_deref(),
            |_, (((((id, end1), (end2, plane)), (setup, output)), (carry, state)), order)| {
                reorder(id, order, 1);
                reorder(end1, order, 1);
                reorder(end2, order, 1);
                reorder(plane, order, 1);
                reorder(setup, order, 1);
                reorder(output, order, 1);
                reorder(carry, order, 1);
                reorder(state, order, n);
            },
        );
        moved
    }

    /// Removes the contact in `slot`; the last contact moves into it.
    pub fn swap_remove(&mut self, slot: usize) {
        self.changed = true;
        let last = self.len() - 1;
        self.id.swap_remove(slot);
        self.end1.swap_remove(slot);
        let end2 = self.end2.swap_remove(slot);
        self.n_facet -= usize::from(end2 & crate::cellspace::FACET != 0);
        self.plane.swap_remove(slot);
        self.setup.swap_remove(slot);
        self.output.swap_remove(slot);
        self.carry.swap_remove(slot);
        let n = self.stride;
        if slot != last {
            self.arrived.push(slot as u32);
            let (head, tail) = self.state.split_at_mut(last * n);
            head[slot * n..(slot + 1) * n].copy_from_slice(&tail[..n]);
        }
        self.state.truncate(last * n);
    }
}

/// For items that are ascending chunk indices, the first item of each
/// thread's part when thread `p` owns the chunks `owners[p]..owners[p + 1]`
/// (and the last thread any chunks after those).
pub(crate) fn item_cuts(owners: &[usize], chunks: &[usize]) -> Vec<usize> {
    let mut cuts: Vec<usize> = owners[..owners.len() - 1]
        .iter()
        .map(|&o| chunks.partition_point(|&c| c < o))
        .collect();
    cuts.push(chunks.len());
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn unit(rng: &mut ChaCha8Rng) -> Vec3 {
        loop {
            let v = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            let l = v.length();
            if l > 0.1 && l < 1.0 {
                return v / l;
            }
        }
    }

    /// The largest departure of (s, t, n) from a right-handed orthonormal
    /// triad with n = s x t.
    fn orthonormality_error(n: Vec3, s: Vec3, t: Vec3) -> f64 {
        [
            (s.length() - 1.0).abs(),
            (t.length() - 1.0).abs(),
            s.dot(t).abs(),
            s.dot(n).abs(),
            t.dot(n).abs(),
            (s.cross(t) - n).length(),
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }

    #[test]
    fn frame_stays_orthonormal_over_a_million_updates() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut n = unit(&mut rng);
        let mut s = initial_s(n);
        let mut worst: f64 = 0.0;
        for _ in 0..1_000_000 {
            // Small random tilt of the normal and random spins, as in a run.
            let n_new = (n + unit(&mut rng) * 0.01).normalize();
            let w1 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let w2 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let (s2, t) = rotate_frame(s, n, n_new, w1, w2, 1e-4);
            n = n_new;
            s = s2;
            worst = worst.max(orthonormality_error(n, s, t));
        }
        assert!(worst < 1e-13, "worst orthonormality error {worst}");
    }

    #[test]
    fn frame_stays_orthonormal_through_small_turns() {
        // Turns small enough for the Newton normalisation (a slow contact
        // in a packing at rest), with the exact path taken now and then.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut n = unit(&mut rng);
        let mut s = initial_s(n);
        let mut worst: f64 = 0.0;
        let mut newton = 0;
        for i in 0..1_000_000 {
            let tilt = if i % 1000 == 0 { 1e-3 } else { 1e-6 };
            let n_new = (n + unit(&mut rng) * tilt).normalize();
            let w1 = unit(&mut rng) * rng.random_range(0.0..1.0);
            let w2 = unit(&mut rng) * rng.random_range(0.0..1.0);
            let s1 = s - s.cross(n.cross(n_new));
            let s2 = s1 - s1.cross(n_new * (0.5 * (w1 + w2).dot(n_new)) * 1e-6);
            let sp = s2 - n_new * s2.dot(n_new);
            newton += usize::from((sp.length_squared() - 1.0).abs() < 1e-8);
            let (s2, t) = rotate_frame(s, n, n_new, w1, w2, 1e-6);
            n = n_new;
            s = s2;
            worst = worst.max(orthonormality_error(n, s, t));
        }
        assert!(newton > 900_000, "the Newton path ran {newton} times");
        assert!(worst < 1e-13, "worst orthonormality error {worst}");
    }

    #[test]
    fn rotate_frame_equals_the_two_rotations_written_out() {
        // The evaluated form against the rotations as the model states
        // them, followed by the projection and the normalisation.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut worst: f64 = 0.0;
        for i in 0..100_000 {
            let n = unit(&mut rng);
            let s = initial_s(n).rotate_towards(n.cross(initial_s(n)), rng.random_range(0.0..6.0));
            let tilt = [1e-6, 1e-3, 0.05][i % 3];
            let n_new = (n + unit(&mut rng) * tilt).normalize();
            let w1 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let w2 = unit(&mut rng) * rng.random_range(0.0..100.0);
            let dt = 1e-4;
            let s1 = s - s.cross(n.cross(n_new));
            let s2 = s1 - s1.cross(n_new * (0.5 * (w1 + w2).dot(n_new)) * dt);
            let s_ref = (s2 - n_new * s2.dot(n_new)).normalize();
            let (s_got, t_got) = rotate_frame(s, n, n_new, w1, w2, dt);
            worst = worst
                .max((s_got - s_ref).length())
                .max((t_got - n_new.cross(s_ref)).length());
        }
        assert!(worst < 1e-14, "largest difference {worst}");
    }

    #[test]
    fn pair_spun_about_normal_gives_twist_increment() {
        let plane = Plane {
            xc: Vec3::ZERO,
            n: Vec3::Z,
            s: Vec3::X,
            t: Vec3::Y,
            ..Default::default()
        };
        let e1 = EndMotion {
            x: Vec3::new(0.0, 0.0, -1.0),
            v: Vec3::ZERO,
            w: Vec3::new(0.0, 0.0, -3.0),
        };
        let e2 = EndMotion {
            x: Vec3::new(0.0, 0.0, 1.0),
            v: Vec3::ZERO,
            w: Vec3::new(0.0, 0.0, 2.0),
        };
        let mut input = ContactInput::default();
        increments(&plane, &e1, &e2, 0.01, &mut input);
        assert!((input.theta_t - 0.05).abs() < 1e-15);
        assert_eq!(input.theta_b, [0.0, 0.0]);
        // Spin about the line of centres moves no surface point at xc.
        assert_eq!(input.delta_s, [0.0, 0.0]);
        assert_eq!(input.delta_n, 0.0);
    }

    #[test]
    fn pair_rolled_gives_bend_increments_and_no_slip() {
        // Ball 2 rolls on ball 1 (fixed) without slip: at the contact point
        // the surface velocities agree, so the shear increment vanishes
        // while the relative rotation shows up as bend.
        let r = 0.5;
        let plane = Plane {
            xc: Vec3::ZERO,
            n: Vec3::Z,
            s: Vec3::X,
            t: Vec3::Y,
            ..Default::default()
        };
        let e1 = EndMotion {
            x: Vec3::new(0.0, 0.0, -r),
            v: Vec3::ZERO,
            w: Vec3::ZERO,
        };
        let w = Vec3::new(0.0, 4.0, 0.0);
        // Contact point of ball 2 is at -r z from its centre: v + w x (-r z) = 0.
        let v = -w.cross(Vec3::new(0.0, 0.0, -r));
        let e2 = EndMotion {
            x: Vec3::new(0.0, 0.0, r),
            v,
            w,
        };
        let mut input = ContactInput::default();
        increments(&plane, &e1, &e2, 0.001, &mut input);
        assert!(input.delta_s[0].abs() < 1e-15 && input.delta_s[1].abs() < 1e-15);
        assert!((input.theta_b[1] - 0.004).abs() < 1e-15);
        assert_eq!(input.theta_b[0], 0.0);
        assert_eq!(input.theta_t, 0.0);
    }

    #[test]
    fn swap_remove_moves_the_last_state_block() {
        let mut st = ContactStore::new(2);
        for i in 0..3 {
            let k = st.push(i, 0, 1, 0, 1.0);
            st.state[k * 2] = i as f64;
            st.state[k * 2 + 1] = 10.0 + i as f64;
        }
        st.swap_remove(0);
        assert_eq!(st.id, vec![2, 1]);
        assert_eq!(st.state, vec![2.0, 12.0, 1.0, 11.0]);
    }

    /// A store of `n` contacts whose every column tells the contact's
    /// number `k` (id `100 + k`); every fifth has a facet as end2 and
    /// those with `k % 7 < 3` carry flag bit 20.
    fn numbered_store(n: usize) -> ContactStore {
        use crate::cellspace::FACET;
        let mut st = ContactStore::new(2);
        for k in 0..n {
            let end2 = if k % 5 == 0 {
                FACET | k as u32
            } else {
                k as u32 + 1
            };
            let slot = st.push(100 + k as u64, k as u32, end2, (k % 3) as u32, k as f64);
            st.plane[slot].gap = k as f64;
            st.output[slot].force[0] = k as f64;
            st.carry[slot] = (k % 3) as u8;
            st.state[2 * slot..2 * slot + 2].copy_from_slice(&[k as f64, -(k as f64)]);
            if k % 7 < 3 {
                st.setup[slot].flags |= 1 << 20;
            }
        }
        st
    }

    fn facet_then_flag(st: &ContactStore, k: usize) -> usize {
        usize::from(st.end2[k] & crate::cellspace::FACET != 0) * 2
            + usize::from(st.setup[k].flags & (1 << 20) != 0)
    }

    #[test]
    fn a_regrouped_chunk_keeps_each_contacts_data_together() {
        let n = BATCH + 300;
        let mut st = numbered_store(n);
        assert_eq!(st.regroup_chunks(&[1], None, facet_then_flag), 1);
        let number = |slot: usize| (st.id[slot] - 100) as usize;
        for slot in 0..n {
            let k = number(slot);
            assert_eq!(slot / BATCH, k / BATCH, "slot {slot} left its chunk");
            assert_eq!(st.end1[slot], k as u32);
            assert_eq!(st.setup[slot].mass, k as f64);
            assert_eq!(st.setup[slot].prop_set, (k % 3) as u32);
            assert_eq!(st.plane[slot].gap, k as f64);
            assert_eq!(st.output[slot].force[0], k as f64);
            assert_eq!(st.carry[slot], (k % 3) as u8);
            assert_eq!(st.state_of(slot), [k as f64, -(k as f64)]);
        }
        // The first chunk is as it was; the second is grouped, each group
        // in its old order.
        assert!((0..BATCH).all(|slot| number(slot) == slot));
        for slot in BATCH + 1..n {
            let (g0, g1) = (facet_then_flag(&st, slot - 1), facet_then_flag(&st, slot));
            assert!(
                g0 < g1 || (g0 == g1 && number(slot - 1) < number(slot)),
                "slot {slot}"
            );
        }
        assert!((BATCH..n).any(|slot| number(slot) != slot));
        // Grouped already: nothing moves.
        assert_eq!(st.regroup_chunks(&[1], None, facet_then_flag), 0);
        // Several chunks at once, in parallel: as one by one.
        let mut one_by_one = numbered_store(3 * BATCH + 10);
        let mut at_once = numbered_store(3 * BATCH + 10);
        for c in [0, 3] {
            one_by_one.regroup_chunks(&[c], None, facet_then_flag);
        }
        assert_eq!(
            at_once.regroup_chunks(&[0, 3], Some(&[0, 2, 4]), facet_then_flag),
            2
        );
        assert_eq!(at_once.id, one_by_one.id);
        assert!((BATCH..3 * BATCH).all(|slot| at_once.id[slot] == 100 + slot as u64));
    }

    #[test]
    fn chunks_go_to_the_thread_that_owns_them() {
        // Thread 0 owns chunks 0-2, thread 1 chunks 3-6 and any after.
        let owners = [0, 3, 7];
        assert_eq!(item_cuts(&owners, &[1, 2, 5, 6, 8]), [0, 2, 5]);
        assert_eq!(item_cuts(&owners, &[4, 5]), [0, 0, 2]);
        assert_eq!(item_cuts(&owners, &[0, 1]), [0, 2, 2]);
        assert_eq!(item_cuts(&owners, &[]), [0, 0, 0]);
    }

    #[test]
    fn a_chunk_is_due_once_its_changes_above_the_floor_add_up_to_its_length() {
        let mut st = numbered_store(2 * BATCH);
        let per_step = 10;
        let steps = BATCH / per_step;
        // A fresh store has no floor: every change counts.
        for _ in 0..steps {
            st.note_switches(&[per_step as u32, 0]);
        }
        assert!(st.regroup_due(false).is_empty());
        st.note_switches(&[per_step as u32, 0]);
        assert_eq!(st.regroup_due(false), [0]);
        assert_eq!(st.regroup_due(true), [0, 1]);
        st.regroup_chunks(&[0], None, facet_then_flag);
        assert!(st.regroup_due(false).is_empty());
        // The first count after the regrouping (flickering contacts) is
        // the floor: staying at it never makes the chunk due, going above
        // it does once the excess exceeds the length.
        for _ in 0..10 * BATCH {
            st.note_switches(&[50, 0]);
        }
        assert!(st.regroup_due(false).is_empty());
        for _ in 0..=steps {
            st.note_switches(&[50 + per_step as u32, 0]);
        }
        assert_eq!(st.regroup_due(false), [0]);
    }
}
