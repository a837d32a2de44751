//! Clumps: rigid bodies made of overlapping spherical pebbles.
//!
//! A template (a list of pebbles) is stored once, in its principal frame,
//! in the simulation's template table; a clump is a body of the clump
//! archetype (see [`crate::body::ClumpBundle`]) with a pose, its
//! template's index and the mass and principal moments its density gives
//! to the union of the pebbles (every point counted once,
//! [`talus_geometry::sphere_union()`]).
//!
//! Each pebble is a ball row (a piece of kind ball) owned by its clump:
//! the ball kernels resolve its contacts, the contact pass sums forces
//! on it as on any ball, and the clump stage then gathers those sums onto
//! the clump (`Simulation::gather_clumps`) and, after the clump's law
//! of motion, puts every pebble back where the clump's pose says
//! (`Simulation::clump_motion`). Pebbles of one clump never make a
//! contact with each other. Pebble rows come after every free ball, so a
//! ball's id is still its index + 1.
//!
//! Invariants: the pebbles of clump `c` are the ball rows
//! `first[c] .. first[c] + n` of its template's `n` pebbles, in template
//! order; clumps are added after every ball.

use crate::blowup;
use crate::body::{BallBundle, BallsMut, BallsRef, ClumpBundle, ClumpsMut, ClumpsRef, PebbleRow};
use crate::cellspace;
use crate::error::{SetupError, StepError};
use crate::math::{Quat, Vec3};
use crate::motion::{ball_block, carry_with_cell, moving_cell, RigidColumns, Rule};
use crate::rigid::PrincipalInertia;
use crate::sim::Simulation;
use crate::snapshot::BodyKind;
use crate::team;
use talus_geometry::sphere_union;

/// The relative accuracy to which a template's mass properties are
/// computed unless asked otherwise (the 1e-4 with a margin).
pub const DEFAULT_TOLERANCE: f64 = 1e-5;

/// A clump template in its principal frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ClumpTemplate {
    /// Name, for messages and output.
    pub name: String,
    /// The pebbles: centre in the principal frame (m) and radius (m).
    pub pebbles: Vec<(Vec3, f64)>,
    /// Volume of the union of the pebbles (m^3).
    pub volume: f64,
    /// Principal moments of inertia for unit density (m^5), ascending.
    pub unit_moments: Vec3,
    /// Distance from the centroid to the farthest point of any pebble (m).
    pub radius: f64,
    /// Estimated relative error of the mass properties (0 for one pebble,
    /// whose are exact).
    pub error: f64,
    /// Rotation from the principal frame to the frame the pebbles were
    /// given in: the pebble at `c` is at `input_rotation * c +
    /// input_centroid` as given.
    pub input_rotation: Quat,
    /// The centroid in the frame the pebbles were given in (m).
    pub input_centroid: Vec3,
}

impl ClumpTemplate {
    /// The template of `pebbles` (centre and radius, in any frame), moved
    /// to the principal frame of their union; its mass properties to a
    /// relative accuracy near `tolerance`.
    ///
    /// # Errors
    /// [`SetupError::Template`] for no pebble, a radius that is not
    /// positive and finite, or a centre that is not finite.
    pub fn new(
        name: &str,
        pebbles: &[(Vec3, f64)],
        tolerance: f64,
    ) -> Result<ClumpTemplate, SetupError> {
        let fail = |message: String| SetupError::Template {
            template: name.to_string(),
            message,
        };
        if pebbles.is_empty() {
            return Err(fail("a clump template needs at least one pebble".into()));
        }
        if let Some((k, &(c, r))) = pebbles
            .iter()
            .enumerate()
            .find(|(_, &(c, r))| !(c.is_finite() && r > 0.0 && r.is_finite()))
        {
            return Err(fail(format!(
                "pebble {} has centre {c} and radius {r:e}: the centre must be finite and \
                 the radius positive and finite",
                k + 1
            )));
        }
        let (volume, unit_moments, rotation, centroid, error) = if let [(c, r)] = pebbles {
            // One pebble: a ball, exactly (`single_pebble` keeps its bits).
            let v = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
            (v, Vec3::splat(0.4 * v * r * r), Quat::IDENTITY, *c, 0.0)
        } else {
            let u = sphere_union(pebbles, tolerance);
            let m = u.mass;
            (
                m.volume,
                m.principal_moments,
                m.principal_rotation(),
                m.centroid,
                u.error,
            )
        };
        let back = rotation.conjugate();
        let moved: Vec<(Vec3, f64)> = pebbles
            .iter()
            .map(|&(c, r)| (back * (c - centroid), r))
            .collect();
        let radius = moved
            .iter()
            .map(|&(c, r)| c.length() + r)
            .fold(0.0, f64::max);
        if !(volume > 0.0 && volume.is_finite() && unit_moments.min_element() > 0.0) {
            return Err(fail(format!(
                "the union of the pebbles has no volume ({volume:e} m^3)"
            )));
        }
        Ok(ClumpTemplate {
            name: name.to_string(),
            pebbles: moved,
            volume,
            unit_moments,
            radius,
            error,
            input_rotation: rotation,
            input_centroid: centroid,
        })
    }

    /// Mass (kg) and principal moments (kg m^2) at `density`. A template
    /// of one pebble gives a ball's mass and `2/5 m r^2` with the ball's
    /// own arithmetic, so that such a clump moves as a ball, bit for bit.
    pub fn mass_properties(&self, density: f64) -> (f64, Vec3) {
        if let [(_, r)] = self.pebbles[..] {
            let mass = density * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
            (mass, Vec3::splat(0.4 * mass * r * r))
        } else {
            (density * self.volume, density * self.unit_moments)
        }
    }
}

/// The pebble rows of the clumps cut into parts of `block` clumps: the
/// first pebble row (absolute), then the end of each part's rows relative
/// to it, the last `n_rows` less the first.
fn pebble_rows(first: &[u32], block: usize, n_rows: usize) -> Vec<usize> {
    let base = first[0] as usize;
    let mut rows = vec![base];
    rows.extend(
        first
            .iter()
            .skip(block)
            .step_by(block)
            .map(|&f| f as usize - base),
    );
    rows.push(n_rows - base);
    rows
}

/// `slice` (the pebble rows from the first) cut at the part ends of
/// [`pebble_rows`].
fn split<'a, T>(mut slice: &'a mut [T], rows: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(rows.len() - 1);
    let mut at = 0;
    for &end in &rows[1..] {
        let (head, tail) = slice.split_at_mut(end - at);
        out.push(head);
        slice = tail;
        at = end;
    }
    out
}

/// [`split`] for a shared slice.
fn split_ref<'a, T>(slice: &'a [T], rows: &[usize]) -> Vec<&'a [T]> {
    let mut out = Vec::with_capacity(rows.len() - 1);
    let mut at = 0;
    for &end in &rows[1..] {
        out.push(&slice[at..end]);
        at = end;
    }
    out
}

/// What is needed to create one clump: a rigid body's initial state whose
/// `shape` is the index of its template (see
/// [`Simulation::add_template`]); density, damping and fixity as for a
/// block (the rotation fixed as a whole or not at all).
pub type ClumpInit = crate::block::BlockInit;

impl Simulation {
    /// Adds a clump template; returns its index.
    pub fn add_template(&mut self, template: ClumpTemplate) -> u32 {
        let centres = template.pebbles.iter().map(|&(c, _)| c);
        let turn = crate::timestep::turn_factor(centres, template.unit_moments, template.volume);
        self.turn_templates.push(turn);
        self.templates.push(template);
        (self.templates.len() - 1) as u32
    }

    /// The clump templates, by index.
    pub fn templates(&self) -> &[ClumpTemplate] {
        &self.templates
    }

    /// Adds a clump and its pebbles (ball rows after every ball); returns
    /// the clump's id (dense index + 1; clumps are numbered apart from
    /// balls and blocks).
    pub fn add_clump(&mut self, c: ClumpInit) -> Result<u64, SetupError> {
        let index = self.n_clumps();
        let id = index as u64 + 1;
        let bad = |message: String| SetupError::Clump { id, message };
        let Some(template) = self.templates.get(c.shape as usize) else {
            return Err(bad(format!("there is no template {}", c.shape)));
        };
        c.check("clump").map_err(bad)?;
        let (mass, moments) = template.mass_properties(c.density);
        let Some(inertia) = PrincipalInertia::new(moments) else {
            return Err(bad(format!(
                "its moments of inertia {moments} are not positive"
            )));
        };
        let first = BallsRef::of(&self.world).len() as u32;
        let q = c.orientation.normalize();
        let mean = moments.element_sum() / 3.0;
        let rows: Vec<PebbleRow> = template
            .pebbles
            .iter()
            .map(|&(offset, radius)| {
                let arm = q * offset;
                PebbleRow {
                    pos: c.pos + arm,
                    vel: c.velocity + c.spin.cross(arm),
                    spin: c.spin,
                    radius,
                    mass,
                    inertia: mean,
                    group: c.group,
                    owner: index as u32,
                }
            })
            .collect();
        self.world.spawn(ClumpBundle::new(&c, mass, inertia, first));
        for row in &rows {
            self.world.spawn(BallBundle::pebble(row));
        }
        Ok(id)
    }

    /// Every clump's columns, read-only (index `i` is the clump of id
    /// `i + 1`).
    pub fn clumps(&self) -> ClumpsRef<'_> {
        ClumpsRef::of(&self.world)
    }

    /// Every clump's columns, to change the state of clumps between
    /// cycles (the pebbles follow at the next step's law of motion).
    pub fn clumps_mut(&mut self) -> ClumpsMut<'_> {
        ClumpsMut::of(&self.world)
    }

    /// Number of clumps.
    pub fn n_clumps(&self) -> usize {
        self.clumps().len()
    }

    /// The ball row of the first pebble: the number of balls that are
    /// bodies of their own.
    pub(crate) fn first_pebble_row(&self) -> usize {
        let clumps = self.clumps();
        match clumps.first.first() {
            Some(&first) => first as usize,
            None => BallsRef::of(&self.world).len(),
        }
    }

    /// Gathers the sums the last contact pass left on every pebble onto
    /// its clump: the force, the moment about the clump's centroid
    /// (`M_p + (x_p - x_c) x F_p`, the pebble's own moment being about
    /// its centre) and the timestep stiffness; the pebbles' sums are
    /// zeroed. Each clump adds its pebbles in template order, so the sums
    /// do not depend on the thread count.
    pub(crate) fn gather_clumps(&mut self) {
        let mut c = ClumpsMut::of(&self.world);
        let n = c.len();
        if n == 0 {
            return;
        }
        let mut b = BallsMut::of(&self.world);
        let block = ball_block(n);
        let rows = pebble_rows(&c.first, block, b.pos.len());
        let (pos, template) = (&c.pos[..], &c.template[..]);
        let templates = &self.templates;
        let parts = c.force[..n]
            .chunks_mut(block)
            .zip(c.moment[..n].chunks_mut(block))
            .zip(c.stiffness[..n].chunks_mut(block))
            .zip(split(&mut b.force[rows[0]..], &rows))
            .zip(split(&mut b.moment[rows[0]..], &rows))
            .zip(split(&mut b.stiffness[rows[0]..], &rows))
            .zip(split_ref(&b.pos[rows[0]..], &rows));
        team::map(
            parts.collect(),
            |part, ((((((force, moment), stiffness), pf), pm), pk), px)| {
                let lo = part * block;
                let mut p = 0;
                for j in 0..force.len() {
                    let x = pos[lo + j];
                    let count = templates[template[lo + j] as usize].pebbles.len();
                    // The first pebble's sums as they are, so that a clump
                    // of one pebble gets its ball's bits.
                    let fp = pf[p];
                    let (mut f, mut m, mut k) = (fp, pm[p] + (px[p] - x).cross(fp), pk[p]);
                    for q in p + 1..p + count {
                        let fq = pf[q];
                        f += fq;
                        m += pm[q] + (px[q] - x).cross(fq);
                        k += pk[q];
                    }
                    pf[p..p + count].fill(Vec3::ZERO);
                    pm[p..p + count].fill(Vec3::ZERO);
                    pk[p..p + count].fill(0.0);
                    (force[j], moment[j], stiffness[j]) = (f, m, k);
                    p += count;
                }
            },
        );
    }

    /// Law of motion of the clumps, then their pebbles put where the
    /// clumps' poses say.
    ///
    /// The translation is the balls' (local damping per component,
    /// gravity, fixity per axis). The rotation of a clump with three equal
    /// principal moments (one pebble, or a symmetric arrangement computed
    /// exactly so) is the balls' too, `w += (M - a |M| sign(w)) / I dt`
    /// per component, which is exact for such a body, with the
    /// orientation turned by `w dt`; any other clump turns by
    /// [`crate::rigid::RigidRotation::step`] as blocks do, with the mean angular velocity
    /// over the step as its spin. A pebble then sits at `x + R o` for its
    /// offset `o` and moves at `v + w x (R o)` with the clump's spin; a
    /// pebble that left its cell extent is flagged for re-binning. A clump
    /// that blows up stops the run as a block does, its size the bounding
    /// radius of its template.
    ///
    /// In a periodic cell the clump's centroid moves with the mean field
    /// and wraps into the cell as a block's does; its pebbles are placed
    /// from the wrapped pose, so they stay next to their centroid and may
    /// reach across a face (contacts find them through their images). A
    /// rigid body does not deform with the cell: a pebble's total
    /// velocity is the clump's, `v + L (x - origin)`, plus `w x (R o)`,
    /// so its stored velocity, to which the kernels add the mean field at
    /// the pebble, is `v + w x (R o) - L (R o)`.
    pub(crate) fn clump_motion(&mut self, dt: f64) -> Result<(), StepError> {
        let g = self.settings.gravity;
        let fraction = self.settings.blowup.fraction;
        let templates = &self.templates;
        let cell = moving_cell(&self.cell);
        let mut c = ClumpsMut::of(&self.world);
        let n = c.len();
        self.pebble_moves.clear();
        if n == 0 {
            return Ok(());
        }
        let (im, inertia, damping, fixity, template) = (
            &c.inv_mass[..n],
            &c.inertia[..n],
            &c.damping[..n],
            &c.fixity[..n],
            &c.template[..n],
        );
        let block = ball_block(n);
        let mut b = BallsMut::of(&self.world);
        let rows = pebble_rows(&c.first, block, b.pos.len());
        let refs = self
            .cells
            .as_ref()
            .map(|cells| (cells.ball_refs(), cells.tolerance * cells.tolerance));
        let columns = RigidColumns {
            pos: &mut c.pos,
            vel: &mut c.vel,
            spin: &mut c.spin,
            orientation: &mut c.orientation,
            momentum: &mut c.momentum,
            force: &mut c.force,
            moment: &mut c.moment,
            stiffness: &mut c.stiffness,
        };
        let parts = columns
            .parts(block)
            .into_iter()
            .zip(split(&mut b.pos[rows[0]..], &rows))
            .zip(split(&mut b.vel[rows[0]..], &rows))
            .zip(split(&mut b.spin[rows[0]..], &rows));
        let results = team::map(parts.collect(), |p, (((mut part, px), pv), pw)| {
            let start = p * block;
            // The absolute row of this part's first pebble.
            let first_row = rows[0] + if p == 0 { 0 } else { rows[p] };
            let (mut bad, mut moved, mut row) = (None, Vec::new(), 0);
            for j in 0..part.len() {
                let i = start + j;
                let t = &templates[template[i] as usize];
                let rule = Rule {
                    inv_mass: im[i],
                    inertia: &inertia[i],
                    damping: damping[i],
                    fixity: fixity[i],
                    ball_rotation: inertia[i].is_isotropic(),
                };
                let x0 = part.pos[j];
                let finite = part.step(j, &rule, g, dt);
                carry_with_cell(cell, x0, &mut part.pos[j], dt);
                let (vn, w) = (part.vel[j], part.spin[j]);
                if bad.is_none() {
                    bad = blowup::sign_of(finite, vn, w, t.radius, dt, fraction)
                        .map(|sign| (i, sign));
                }
                // The pebbles, where the new pose puts them; those that
                // left their cell extent are listed for re-binning.
                let (x, turn) = (part.pos[j], part.orientation[j]);
                for &(offset, _) in &t.pebbles {
                    let arm = turn * offset;
                    let xp = x + arm;
                    let mut vp = vn + w.cross(arm);
                    if let Some(c) = cell {
                        vp -= c.velocity_gradient * arm;
                    }
                    (px[row], pv[row], pw[row]) = (xp, vp, w);
                    let global = first_row + row;
                    let left = match refs {
                        Some((r, tol2)) => cellspace::left_reference(r[global], xp, tol2),
                        None => true,
                    };
                    if left {
                        moved.push(global as u32);
                    }
                    row += 1;
                }
            }
            (bad, moved)
        });
        drop((b, c));
        let mut firsts = Vec::with_capacity(results.len());
        for (bad, moved) in results {
            firsts.push(bad);
            self.pebble_moves.extend_from_slice(&moved);
        }
        match firsts.into_iter().flatten().next() {
            Some((i, sign)) => Err(self.blowup(BodyKind::Clump, i as u64 + 1, sign)),
            None => Ok(()),
        }
    }
}
