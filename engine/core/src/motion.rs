//! Law of motion of the balls: leap-frog with gravity, local damping and
//! fixity.
//!
//! Reads: the force, moment and stiffness sums of the last contact pass.
//! Writes: velocities, spins and positions; zeroes the sums for the next
//! pass; flags the balls that left their cell extent for re-binning; finds
//! the first body that blew up ([`crate::blowup`]) in the same loop.
//! Invariant: velocities live at half steps, positions at whole steps.

use crate::balls::Fixity;
use crate::blowup;
use crate::body::{BallsMut, BallsRef, BlocksMut};
use crate::cell::Cell;
use crate::cellspace::{self};
use crate::error::StepError;
use crate::math::{Quat, Vec3};
use crate::rigid::{mean_spin, PrincipalInertia, RigidRotation};
use crate::sim::*;
use crate::snapshot::BodyKind;
use crate::team::{self};

/// The sign of `x`: 1, -1, or 0 for a zero or NaN, without branches (a
/// velocity component jittering about zero would defeat the predictor).
#[inline]
pub(crate) fn sign(x: f64) -> f64 {
    // (`abs() > 0` is false for a zero and for NaN)
    if x.abs() > 0.0 {
        1.0f64.copysign(x)
    } else {
        0.0
    }
}

impl Simulation {
    /// Law of motion: leap-frog with local damping, gravity and fixity.
    ///
    /// # Model
    /// `v(t+dt/2) = v(t-dt/2) + (F - a |F| sign(v)) / m dt` per component,
    /// where `F` includes gravity and `a` is the local damping coefficient;
    /// likewise for the spin with the moment and `I = 2/5 m r^2`;
    /// `x(t+dt) = x(t) + v(t+dt/2) dt`. Fixed components keep their velocity.
    /// In a periodic cell `v` is the fluctuating velocity: the centre also
    /// moves with the mean field, `L dt (x(t) - origin)`, and is then
    /// wrapped into the cell (see [`crate::cell`]).
    ///
    /// A ball that moves or turns too far, or whose state is not finite,
    /// stops the run ([`blowup::sign_of`]). The loop only screens each ball
    /// ([`blowup::Screen`]: comparisons against the bounds of the smallest
    /// radius, in place of the finiteness test it replaces) and notes the
    /// first of each block that fails; the exact test runs after it, over
    /// the few balls from there.
    pub(crate) fn motion(&mut self, dt: f64) -> Result<(), StepError> {
        let g = self.settings.gravity;
        let fraction = self.settings.blowup.fraction;
        let screen = blowup::Screen::new(fraction, self.ball_radius_min, dt);
        // Pebble rows (after the free balls) move with their clumps.
        let free = self.first_pebble_row();
        let mut b = BallsMut::of(&self.world);
        let cells = self.cells.as_ref();
        let cell = moving_cell(&self.cell);
        // A still cell carries nothing (its step would add zeros).
        let deforming = cell.is_some_and(|c| c.deforms());
        self.rebin.resize(b.pos.len(), true);
        let (pos, vel, spin, (inv_mass, inv_inertia), (damping, fixity)) = (
            &mut b.pos[..free],
            &mut b.vel[..free],
            &mut b.spin[..free],
            (&b.inv_mass[..free], &b.inv_inertia[..free]),
            (&b.damping[..free], &b.fixity[..free]),
        );
        // Without a cell space (not yet prepared) every ball is re-binned.
        let refs = cells.map(|c| (c.ball_refs(), c.tolerance * c.tolerance));
        // Blocks of balls in parallel, each a plain loop over slices of one
        // length (no per-ball iterator chain, no index checks); eight
        // blocks per thread or more, so that the threads finish together.
        let block = ball_block(pos.len());
        self.rebin_block = block;
        let columns = pos
            .chunks_mut(block)
            .zip(vel.chunks_mut(block))
            .zip(spin.chunks_mut(block))
            .zip(self.rebin[..free].chunks_mut(block))
            .zip(b.force[..free].chunks_mut(block))
            .zip(b.moment[..free].chunks_mut(block))
            .zip(b.stiffness[..free].chunks_mut(block));
        let law = BallLaw {
            g,
            dt,
            screen,
            cell,
            deforming,
            inv_mass,
            inv_inertia,
            damping,
            fixity,
            refs,
        };
        self.motion_blocks = team::map(
            columns.collect(),
            |c, ((((((x, v), w), rebin), force), moment), stiffness)| {
                let rows = BallRows {
                    lo: c * block,
                    x,
                    v,
                    w,
                    rebin,
                    sums: (force, moment, stiffness),
                };
                // Without a moving cell the loop has no cell code at all
                // (a call inside it would keep its vectors on the stack).
                if law.cell.is_some() {
                    law.advance::<true>(rows)
                } else {
                    law.advance::<false>(rows)
                }
            },
        );
        drop(b);
        // The exact test, from each block's first ball that failed the
        // screen to the block's end, blocks in order: the first ball found
        // is the lowest id that blew up, on any thread count.
        let b = BallsRef::of(&self.world);
        let n = free;
        let found = self
            .motion_blocks
            .iter()
            .enumerate()
            .filter(|(_, m)| m.0 != usize::MAX)
            .flat_map(|(c, m)| m.0..((c + 1) * block).min(n))
            .find_map(|i| {
                let (x, v, w) = (b.pos[i], b.vel[i], b.spin[i]);
                let finite = x.is_finite() && v.is_finite() && w.is_finite();
                blowup::sign_of(finite, v, w, b.radius[i], dt, fraction).map(|s| (i, s))
            });
        drop(b);
        match found {
            Some((i, sign)) => Err(self.blowup(BodyKind::Ball, i as u64 + 1, sign)),
            None => Ok(()),
        }
    }
}

/// What the balls' law of motion reads besides the rows it updates.
struct BallLaw<'a> {
    g: Vec3,
    dt: f64,
    screen: blowup::Screen,
    cell: Option<&'a Cell>,
    deforming: bool,
    inv_mass: &'a [f64],
    inv_inertia: &'a [f64],
    damping: &'a [f64],
    fixity: &'a [Fixity],
    /// The cell space's reference centres and squared tolerance.
    refs: Option<(&'a [Vec3], f64)>,
}

/// One block of balls' rows, from ball `lo` on: positions, velocities,
/// spins, re-bin flags and the force, moment and stiffness sums.
struct BallRows<'r> {
    lo: usize,
    x: &'r mut [Vec3],
    v: &'r mut [Vec3],
    w: &'r mut [Vec3],
    rebin: &'r mut [bool],
    sums: (&'r mut [Vec3], &'r mut [Vec3], &'r mut [f64]),
}

impl BallLaw<'_> {
    /// Advances one block of balls; `CELL` says whether the run has a
    /// moving cell (`self.cell` is `Some`). Returns the first ball that
    /// failed the blow-up screen (`usize::MAX` if none) and how many
    /// balls must be re-binned.
    #[inline(always)]
    fn advance<const CELL: bool>(&self, rows: BallRows<'_>) -> (usize, u32) {
        let BallRows {
            lo,
            x,
            v,
            w,
            rebin,
            sums: (force, moment, stiffness),
        } = rows;
        let (g, dt, screen) = (self.g, self.dt, self.screen);
        let n = x.len();
        let (v, w, rebin) = (&mut v[..n], &mut w[..n], &mut rebin[..n]);
        let (force, moment, stiffness) = (&mut force[..n], &mut moment[..n], &mut stiffness[..n]);
        let (im, ii) = (&self.inv_mass[lo..lo + n], &self.inv_inertia[lo..lo + n]);
        let (damping, fixity) = (&self.damping[lo..lo + n], &self.fixity[lo..lo + n]);
        let refs = self.refs.map(|(r, tol2)| (&r[lo..lo + n], tol2));
        let mut bad = usize::MAX;
        for i in 0..n {
            let (a, fix) = (damping[i], fixity[i]);
            // Accelerations: local damping scales with |F + m g| / m.
            let acc = force[i] * im[i] + g;
            let alpha = moment[i] * ii[i];
            // The sums are used up: zeroed here, while in cache, for
            // this cycle's contact pass.
            (force[i], moment[i], stiffness[i]) = (Vec3::ZERO, Vec3::ZERO, 0.0);
            // Updated in registers and stored once: reading back a
            // vector just stored one component at a time stalls.
            let (mut vn, mut wn) = (v[i], w[i]);
            if a == 0.0 && fix.0 == 0 {
                vn += acc * dt;
                wn += alpha * dt;
            } else if fix.0 == 0 {
                // The loop below without its fixity tests.
                for k in 0..3 {
                    vn[k] += (acc[k] - a * acc[k].abs() * sign(vn[k])) * dt;
                    wn[k] += (alpha[k] - a * alpha[k].abs() * sign(wn[k])) * dt;
                }
            } else {
                for k in 0..3 {
                    if !fix.fixed(k) {
                        vn[k] += (acc[k] - a * acc[k].abs() * sign(vn[k])) * dt;
                    }
                    if !fix.fixed(k + 3) {
                        wn[k] += (alpha[k] - a * alpha[k].abs() * sign(wn[k])) * dt;
                    }
                }
            }
            let mut xn = x[i] + vn * dt;
            if CELL {
                if let Some(c) = self.cell {
                    // Carried with the cell (the stored velocity is the
                    // fluctuation), then wrapped into it: velocity and
                    // spin stay as they are.
                    if self.deforming {
                        xn += c.affine_step(x[i], dt);
                    }
                    xn = c.wrap(xn);
                }
            }
            (x[i], v[i], w[i]) = (xn, vn, wn);
            // Whether contact detection must re-bin the ball
            // (`cellspace::left_reference`).
            rebin[i] = match refs {
                Some((r, tol2)) => cellspace::left_reference(r[i], xn, tol2),
                None => true,
            };
            // Rarely false; the balls that fail it are tested
            // exactly after the loop.
            if !screen.passes(xn, vn, wn) && bad == usize::MAX {
                bad = lo + i;
            }
        }
        // Counted apart: in the loop above, the count slowed it down
        // more than this costs.
        let flagged = rebin.iter().map(|&r| u32::from(r)).sum();
        (bad, flagged)
    }
}

impl Simulation {
    /// Law of motion of the blocks: the translation as for balls (local
    /// damping per component, gravity, fixity per axis), the rotation by
    /// [`RigidRotation::step`] (world angular momentum at half steps, the
    /// free rotation split into exact turns, which keeps a free block's
    /// angular momentum and is time-reversible). The spin recorded is the
    /// mean angular velocity over the step, which reproduces the change
    /// of pose exactly and is what contact kinematics use. A block that
    /// blows up stops the run as a ball does, its size the bounding radius
    /// of its shape and its turn the mean spin times `dt`. Convex bodies of
    /// plugin shapes move the same way, those with three equal moments by
    /// the balls' rule (as clumps do). In a periodic cell a centroid moves
    /// with the mean field too and wraps into the cell as a ball's centre
    /// does ([`carry_with_cell`]).
    pub(crate) fn block_motion(&mut self, dt: f64) -> Result<(), StepError> {
        let g = self.settings.gravity;
        let fraction = self.settings.blowup.fraction;
        let shapes = &self.shapes;
        let cell = moving_cell(&self.cell);
        let mut b = BlocksMut::of(&self.world);
        let n = b.len();
        if n == 0 {
            return Ok(());
        }
        let (im, inertia, damping, fixity, shape) = (
            &b.inv_mass[..n],
            &b.inertia[..n],
            &b.damping[..n],
            &b.fixity[..n],
            &b.shape[..n],
        );
        // Every block on its own, so the parts of the team give the bits
        // of a serial loop; each part reports its first bad block.
        let block = ball_block(n);
        let columns = RigidColumns {
            pos: &mut b.pos,
            vel: &mut b.vel,
            spin: &mut b.spin,
            orientation: &mut b.orientation,
            momentum: &mut b.momentum,
            force: &mut b.force,
            moment: &mut b.moment,
            stiffness: &mut b.stiffness,
        };
        let firsts = team::map(columns.parts(block), |c, mut part| {
            let start = c * block;
            let mut bad = None;
            for j in 0..part.len() {
                let i = start + j;
                let rule = Rule {
                    inv_mass: im[i],
                    inertia: &inertia[i],
                    damping: damping[i],
                    fixity: fixity[i],
                    // A convex body of three equal moments (a sphere of a
                    // plugin shape) turns as the ball it is.
                    ball_rotation: shapes[shape[i] as usize].convex.is_some()
                        && inertia[i].is_isotropic(),
                };
                let x0 = part.pos[j];
                let finite = part.step(j, &rule, g, dt);
                carry_with_cell(cell, x0, &mut part.pos[j], dt);
                if bad.is_none() {
                    let size = shapes[shape[i] as usize].radius;
                    bad = blowup::sign_of(finite, part.vel[j], part.spin[j], size, dt, fraction)
                        .map(|sign| (i, sign));
                }
            }
            bad
        });
        drop(b);
        match firsts.into_iter().flatten().next() {
            Some((i, sign)) => Err(self.blowup(BodyKind::Block, i as u64 + 1, sign)),
            None => Ok(()),
        }
    }
}

/// The run's cell when it moves bodies: periodic along some edge
/// (positions wrap) or deforming (positions move with the mean field).
pub(crate) fn moving_cell(cell: &Option<Cell>) -> Option<&Cell> {
    cell.as_ref().filter(|c| c.any_periodic() || c.deforms())
}

/// Carries a rigid body's centroid, which its own velocity took from `x0`
/// to `x` over the step `dt`, with the cell's mean field
/// (`L dt (x0 - origin)`) and wraps it into the cell along the periodic
/// edges, as the balls' law of motion does a centre (see
/// [`crate::cell`]). Velocity, spin and orientation are left alone, so a
/// wrap changes none of their bits.
#[inline]
pub(crate) fn carry_with_cell(cell: Option<&Cell>, x0: Vec3, x: &mut Vec3, dt: f64) {
    if let Some(c) = cell {
        *x = c.wrap(*x + c.affine_step(x0, dt));
    }
}

/// The moving columns of one rigid body kind (blocks or clumps), borrowed
/// from its archetype.
pub(crate) struct RigidColumns<'a> {
    pub(crate) pos: &'a mut [Vec3],
    pub(crate) vel: &'a mut [Vec3],
    pub(crate) spin: &'a mut [Vec3],
    pub(crate) orientation: &'a mut [Quat],
    pub(crate) momentum: &'a mut [Vec3],
    pub(crate) force: &'a mut [Vec3],
    pub(crate) moment: &'a mut [Vec3],
    pub(crate) stiffness: &'a mut [f64],
}

impl<'a> RigidColumns<'a> {
    /// The columns cut into parts of `block` bodies, in order, for the
    /// team.
    pub(crate) fn parts(self, block: usize) -> Vec<RigidColumns<'a>> {
        let parts = self
            .pos
            .chunks_mut(block)
            .zip(self.vel.chunks_mut(block))
            .zip(self.spin.chunks_mut(block))
            .zip(self.orientation.chunks_mut(block))
            .zip(self.momentum.chunks_mut(block))
            .zip(self.force.chunks_mut(block))
            .zip(self.moment.chunks_mut(block))
            .zip(self.stiffness.chunks_mut(block));
        parts
            .map(
                |(((((((pos, vel), spin), orientation), momentum), force), moment), stiffness)| {
                    RigidColumns {
                        pos,
                        vel,
                        spin,
                        orientation,
                        momentum,
                        force,
                        moment,
                        stiffness,
                    }
                },
            )
            .collect()
    }

    /// Number of bodies.
    pub(crate) fn len(&self) -> usize {
        self.pos.len()
    }

    /// [`rigid_step`] of body `j`.
    #[inline]
    pub(crate) fn step(&mut self, j: usize, rule: &Rule<'_>, g: Vec3, dt: f64) -> bool {
        let body = RigidState {
            pos: &mut self.pos[j],
            vel: &mut self.vel[j],
            spin: &mut self.spin[j],
            orientation: &mut self.orientation[j],
            momentum: &mut self.momentum[j],
        };
        let load = Load {
            force: &mut self.force[j],
            moment: &mut self.moment[j],
            stiffness: &mut self.stiffness[j],
        };
        rigid_step(body, load, rule, g, dt)
    }
}

/// The moving state of one rigid body (a block or a clump).
pub(crate) struct RigidState<'a> {
    pub(crate) pos: &'a mut Vec3,
    pub(crate) vel: &'a mut Vec3,
    pub(crate) spin: &'a mut Vec3,
    pub(crate) orientation: &'a mut Quat,
    pub(crate) momentum: &'a mut Vec3,
}

/// The sums one rigid body's law of motion uses up (and zeroes).
pub(crate) struct Load<'a> {
    pub(crate) force: &'a mut Vec3,
    pub(crate) moment: &'a mut Vec3,
    pub(crate) stiffness: &'a mut f64,
}

/// What sets one rigid body's law of motion.
pub(crate) struct Rule<'a> {
    pub(crate) inv_mass: f64,
    pub(crate) inertia: &'a PrincipalInertia,
    pub(crate) damping: f64,
    pub(crate) fixity: Fixity,
    /// Turn by the balls' rule (`w += M / I dt` per component, exact for
    /// three equal moments) instead of [`RigidRotation::step`].
    pub(crate) ball_rotation: bool,
}

/// One step of a rigid body: the translation as for balls (local damping
/// per component, gravity, fixity per axis), the rotation by
/// [`RigidRotation::step`] with the mean angular velocity over the step as
/// its spin, or by the balls' rule where `rule.ball_rotation` says so,
/// the orientation then turned by `w dt`. The sums are zeroed. Returns
/// whether the new state is finite.
#[inline]
pub(crate) fn rigid_step(
    body: RigidState<'_>,
    load: Load<'_>,
    rule: &Rule<'_>,
    g: Vec3,
    dt: f64,
) -> bool {
    let (a, fix) = (rule.damping, rule.fixity);
    let acc = *load.force * rule.inv_mass + g;
    let mut vn = *body.vel;
    for k in 0..3 {
        if !fix.fixed(k) {
            vn[k] += (acc[k] - a * acc[k].abs() * sign(vn[k])) * dt;
        }
    }
    let (q, l, spin) = (body.orientation, body.momentum, body.spin);
    if rule.ball_rotation {
        let alpha = *load.moment * rule.inertia.inverse().x;
        let mut wn = *spin;
        for k in 0..3 {
            if !fix.fixed(k + 3) {
                wn[k] += (alpha[k] - a * alpha[k].abs() * sign(wn[k])) * dt;
            }
        }
        *q = (Quat::from_scaled_axis(wn * dt) * *q).normalize();
        *l = rule.inertia.momentum(*q, wn);
        *spin = wn;
    } else {
        let mut rot = RigidRotation {
            orientation: *q,
            momentum: *l,
        };
        rot.step(rule.inertia, *load.moment, a, fix.fixed(3), dt);
        *spin = mean_spin(*q, rot.orientation, dt);
        (*q, *l) = (rot.orientation, rot.momentum);
    }
    (*load.force, *load.moment, *load.stiffness) = (Vec3::ZERO, Vec3::ZERO, 0.0);
    *body.pos += vn * dt;
    *body.vel = vn;
    body.pos.is_finite() && vn.is_finite() && q.is_finite() && l.is_finite() && spin.is_finite()
}

/// Balls per block of a parallel loop over `n` balls: eight blocks per
/// thread or more, between 256 and 4096 balls each.
pub(crate) fn ball_block(n: usize) -> usize {
    n.div_ceil(8 * rayon::current_num_threads())
        .clamp(256, 4096)
}

/// The first ball of each thread's part of a loop over `n` balls in
/// blocks of [`ball_block`] on the team (the law of motion's parts), and
/// `n` at the end.
pub(crate) fn ball_parts(n: usize, threads: usize) -> Vec<u32> {
    let block = ball_block(n);
    let blocks = n.div_ceil(block);
    (0..=threads)
        .map(|p| (team::cut(blocks, threads, p) * block).min(n) as u32)
        .collect()
}
