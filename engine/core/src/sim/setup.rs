//! Checks before step 0 and the first forces: every group pair that can
//! touch has a model, wall motions are consistent, every model answers a
//! probe; then the cell space is built and the forces of the initial
//! configuration computed, so that cycle 1 starts from them.

use crate::body::{walls, BallsMut, BallsRef};
use crate::cellspace::CellSpace;
use crate::error::{SetupError, StepError};
use crate::inputs;
use crate::math::{Aabb, Vec3};
use crate::sim::*;
use rustc_hash::FxHashMap;
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{flags, BatchContext, ContactInput, ContactOutput};

impl Simulation {
    /// Checks the model, builds the cell space, creates the first contacts
    /// and computes their forces (with zero increments), so that cycle 1
    /// starts from the forces of the initial configuration.
    pub fn prepare(&mut self) -> Result<(), StepError> {
        self.setup()?;
        self.prepare_checked()
    }

    /// Checks that every pair of groups that can touch has a model and asks
    /// every model for its probe stiffness. [`Simulation::prepare`] runs it;
    /// callers may run it first to report setup errors on their own.
    pub fn setup(&mut self) -> Result<(), SetupError> {
        self.check_walls()?;
        self.check_cell()?;
        self.fit_walls_to_cell()?;
        self.check_pairings()?;
        self.probe_models()?;
        Ok(())
    }

    /// Wall motions that cannot work: a deformation without one velocity
    /// per vertex, rigid and deformable motion together, a servo without a
    /// unit direction or with a non-positive gain or speed cap.
    pub(crate) fn check_walls(&self) -> Result<(), SetupError> {
        for w in self.walls().iter() {
            let bad = |message: String| SetupError::Wall {
                wall: w.name.clone(),
                message,
            };
            if let Some(d) = &w.deform {
                if d.velocity.len() != w.vertices.len() {
                    return Err(bad(format!(
                        "the deformation gives {} vertex velocities for {} vertices",
                        d.velocity.len(),
                        w.vertices.len()
                    )));
                }
                if w.motion.velocity != Vec3::ZERO
                    || w.motion.spin != Vec3::ZERO
                    || w.servo.is_some()
                {
                    return Err(bad("a wall cannot deform and move rigidly at once".into()));
                }
                if d.velocity.iter().any(|v| !v.is_finite())
                    || d.schedule
                        .iter()
                        .any(|k| !(k.0.is_finite() && k.1.is_finite()))
                    || d.schedule.windows(2).any(|k| k[1].0 <= k[0].0)
                {
                    return Err(bad(
                        "the deformation needs finite velocities and schedule times that increase"
                            .into(),
                    ));
                }
            }
            if let Some(sv) = &w.servo {
                let unit = sv.direction.is_finite() && (sv.direction.length() - 1.0).abs() < 1e-9;
                let positive = |v: f64| v.is_finite() && v > 0.0;
                if !unit || !positive(sv.gain) || !positive(sv.max_speed) || !sv.target.is_finite()
                {
                    return Err(bad(
                        "the servo needs a unit direction, a finite target and a positive gain and speed cap".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn check_pairings(&self) -> Result<(), SetupError> {
        let mut ball_groups: Vec<u16> = self.balls().group.to_vec();
        ball_groups.extend_from_slice(&self.blocks().group);
        ball_groups.sort_unstable();
        ball_groups.dedup();
        let mut wall_groups: Vec<u16> = self.walls().iter().map(|w| w.group).collect();
        wall_groups.sort_unstable();
        wall_groups.dedup();
        let name = |g: u16| self.groups.get(g as usize).cloned().unwrap_or_default();
        for (i, &a) in ball_groups.iter().enumerate() {
            for &b in ball_groups[i..].iter().chain(wall_groups.iter()) {
                if !self.assignment.contains_key(&(a.min(b), a.max(b))) {
                    return Err(SetupError::MissingPairing(name(a), name(b)));
                }
            }
        }
        Ok(())
    }

    /// Asks every model, for each pair of groups it is assigned to, for
    /// the stiffness of a probe contact between bodies of those groups,
    /// for the timestep bound of bodies without contacts.
    ///
    /// The probe is two spheres of the groups' smallest body sizes (a
    /// ball's radius, a block's bounding radius; a wall's group takes the
    /// other's) pressed together by a tenth of the smaller: a model whose
    /// stiffness grows with the overlap or its area (the volume model:
    /// kn times the contact area) then reports what a body of that size
    /// meets in a real contact rather than the nothing of a touch, and a
    /// linear model its constant stiffness.
    pub(crate) fn probe_models(&mut self) -> Result<(), SetupError> {
        let mut r_group: FxHashMap<u16, f64> = FxHashMap::default();
        let mut smallest = |g: u16, r: f64| {
            let e = r_group.entry(g).or_insert(f64::INFINITY);
            *e = e.min(r);
        };
        let balls = BallsRef::of(&self.world);
        for (&g, &r) in balls.group.iter().zip(balls.radius.iter()) {
            smallest(g, r);
        }
        drop(balls);
        let blocks = crate::body::BlocksRef::of(&self.world);
        for (&g, &k) in blocks.group.iter().zip(blocks.shape.iter()) {
            smallest(g, self.shapes[k as usize].radius);
        }
        drop(blocks);
        let mut pairs: Vec<((u16, u16), (u16, u32))> =
            self.assignment.iter().map(|(&k, &v)| (k, v)).collect();
        pairs.sort_unstable();
        let mut probe_k = FxHashMap::default();
        for (mi, m) in self.models.iter().enumerate() {
            let mine: Vec<((u16, u16), u32)> = pairs
                .iter()
                .filter(|(_, (model, _))| *model as usize == mi)
                .map(|&(groups, (_, set))| (groups, set))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let radii: Vec<(f64, f64)> = mine
                .iter()
                .map(|&((a, b), _)| {
                    let (ra, rb) = (r_group.get(&a).copied(), r_group.get(&b).copied());
                    let (ra, rb) = (ra.or(rb).unwrap_or(1.0), rb.or(ra).unwrap_or(1.0));
                    (ra, rb)
                })
                .collect();
            let gap = |(ra, rb): (f64, f64)| -0.1 * ra.min(rb);
            let n_state = m.n_state();
            let inputs: Vec<ContactInput> = mine
                .iter()
                .zip(&radii)
                .map(|(&(_, set), &r)| ContactInput {
                    gap: gap(r),
                    mass: 1.0,
                    radius: [r.0, r.1],
                    prop_set: set,
                    flags: flags::NEW,
                    ..Default::default()
                })
                .collect();
            let n = inputs.len();
            let mut state = vec![0.0; n * n_state];
            let mut out = vec![ContactOutput::default(); n];
            let mut values = Vec::new();
            let columns = inputs::columns(
                &m.entry.descriptor.inputs,
                n,
                Some(|i: usize| inputs::probe_geometry_of(radii[i].0, radii[i].1, gap(radii[i]))),
                &mut values,
            );
            let ctx = BatchContext {
                dt: 1.0,
                props: RSlice::from_slice(&m.props),
                n_props: m.n_props as u32,
                n_state: n_state as u32,
                columns: RSlice::from_slice(&columns),
            };
            let r = (m.entry.batch)(
                &ctx,
                RSlice::from_slice(&inputs),
                RSliceMut::from_mut_slice(&mut state),
                RSliceMut::from_mut_slice(&mut out),
            );
            if let Err(e) = r.into_result() {
                return Err(SetupError::Model {
                    model: m.name.clone(),
                    message: e.message.to_string(),
                });
            }
            for (&(groups, _), o) in mine.iter().zip(&out) {
                probe_k.insert(groups, o.stiffness[0]);
            }
        }
        self.probe_k = probe_k;
        Ok(())
    }

    pub(crate) fn prepare_checked(&mut self) -> Result<(), StepError> {
        // Timestep floor of a ball with no contacts: its stiffest assignment.
        let mut k_group: FxHashMap<u16, f64> = FxHashMap::default();
        for (&(a, b), &k) in &self.probe_k {
            for g in [a, b] {
                let e = k_group.entry(g).or_insert(0.0);
                *e = e.max(k);
            }
        }
        let balls = BallsRef::of(&self.world);
        let walls = walls(&self.world);
        self.k_probe = balls
            .group
            .iter()
            .map(|g| k_group.get(g).copied().unwrap_or(0.0))
            .collect();
        self.k_probe_blocks = crate::body::BlocksRef::of(&self.world)
            .group
            .iter()
            .map(|g| k_group.get(g).copied().unwrap_or(0.0))
            .collect();
        self.k_probe_clumps = crate::body::ClumpsRef::of(&self.world)
            .group
            .iter()
            .map(|g| k_group.get(g).copied().unwrap_or(0.0))
            .collect();

        drop(balls);
        self.start_in_cell();
        let balls = BallsRef::of(&self.world);
        // Cell space over everything there is now, with a margin.
        let mut domain = Aabb::EMPTY;
        let mut r_min = f64::INFINITY;
        let mut r_max: f64 = 0.0;
        for i in 0..balls.len() {
            domain.include(balls.pos[i]);
            r_min = r_min.min(balls.radius[i]);
            r_max = r_max.max(balls.radius[i]);
        }
        self.ball_radius_min = r_min;
        let blocks = crate::body::BlocksRef::of(&self.world);
        let block_radius = |i: usize| self.shapes[blocks.shape[i] as usize].radius;
        for i in 0..blocks.len() {
            domain.include(blocks.pos[i]);
            r_min = r_min.min(block_radius(i));
            r_max = r_max.max(block_radius(i));
        }
        for w in walls.iter() {
            for v in &w.vertices {
                domain.include(*v);
            }
        }
        if domain.min.x > domain.max.x {
            domain = Aabb {
                min: Vec3::ZERO,
                max: Vec3::ONE,
            };
        }
        if !r_min.is_finite() {
            r_min = 1.0;
            r_max = 1.0;
        }
        // Bonds installed at a positive gap need the contacts of pieces
        // that far apart: extents enlarged by half the gap each meet.
        let bond_gap = self.installs.iter().map(|(i, _)| i.gap).fold(0.0, f64::max);
        let tol = (self.settings.cell_tolerance)
            .unwrap_or(0.1 * r_min)
            .max(0.5 * bond_gap);
        let cell = 2.0 * (r_max + tol);
        let mut cells = match self.cell.as_ref().filter(|c| c.any_periodic()) {
            None => CellSpace::new(domain.enlarged(cell), cell, tol),
            Some(c) => {
                // Two near pieces must see one image of each other only,
                // and a clump must not reach its own image (its pebbles
                // never meet each other): the bounding radii of clumps
                // count too, though their pebbles bin as balls.
                let clumps = crate::body::ClumpsRef::of(&self.world);
                let r_body = (clumps.template.iter())
                    .map(|&t| self.templates[t as usize].radius)
                    .fold(r_max, f64::max);
                // A facet meets one image of a body only while the body
                // and the facet together reach less than half a width
                // (see `cell_walls`).
                let facets = 2.0 * (self.facet_reach() + r_body + tol) / 0.98;
                self.cell_min_width = (4.0 * (r_body + tol)).max(facets);
                CellSpace::periodic(c, domain.enlarged(cell), cell, tol)
            }
        };
        for i in 0..balls.len() {
            cells.add_ball(balls.pos[i], balls.radius[i]);
        }
        for i in 0..blocks.len() {
            let convex = self.shapes[blocks.shape[i] as usize].convex.is_some();
            cells.add_block(blocks.pos[i], block_radius(i), convex);
        }
        for &(w, f) in &self.facet_owner {
            cells.add_facet(walls[w as usize].facet_extent(f as usize));
        }
        drop((balls, blocks, walls));
        self.cells = Some(cells);
        self.check_cell_widths()?;
        self.detect();
        self.dt = match self.settings.timestep {
            Timestep::Fixed(dt) => dt,
            Timestep::Auto { safety } => self.auto_timestep(safety)?,
        };
        let mut b = BallsMut::of(&self.world);
        b.force.fill(Vec3::ZERO);
        b.moment.fill(Vec3::ZERO);
        b.stiffness.fill(0.0);
        drop(b);
        let mut k = crate::body::BlocksMut::of(&self.world);
        k.force.fill(Vec3::ZERO);
        k.moment.fill(Vec3::ZERO);
        k.stiffness.fill(0.0);
        drop(k);
        let mut c = crate::body::ClumpsMut::of(&self.world);
        c.force.fill(Vec3::ZERO);
        c.moment.fill(Vec3::ZERO);
        c.stiffness.fill(0.0);
        drop(c);
        self.wall_stage()?;
        self.resolve_and_forces(0.0)?;
        self.check_sums()?;
        self.gather_clumps();
        // The energy check's first reference: the energy of the initial
        // velocities.
        self.energy_last = (self.step, self.energy_survey().total);
        Ok(())
    }
}

impl Simulation {
    /// Puts the bodies inside a periodic cell along its periodic edges
    /// before step 0: free balls and rows of the block archetype by their
    /// centre, clumps by their centroid with their pebbles moved along
    /// (a pebble may then reach across a face). Bodies already inside
    /// keep their bits.
    fn start_in_cell(&self) {
        let Some(c) = self.cell.as_ref().filter(|c| c.any_periodic()) else {
            return;
        };
        let free = self.first_pebble_row();
        let mut b = BallsMut::of(&self.world);
        for x in b.pos[..free].iter_mut() {
            *x = c.wrap(*x);
        }
        let mut k = crate::body::BlocksMut::of(&self.world);
        for x in k.pos.iter_mut() {
            *x = c.wrap(*x);
        }
        let mut clumps = crate::body::ClumpsMut::of(&self.world);
        for (i, x) in clumps.pos.iter_mut().enumerate() {
            let wrapped = c.wrap(*x);
            if wrapped == *x {
                continue;
            }
            let shift = wrapped - *x;
            *x = wrapped;
            let first = clumps.first[i] as usize;
            let n = self.templates[clumps.template[i] as usize].pebbles.len();
            for p in &mut b.pos[first..first + n] {
                *p += shift;
            }
        }
    }
}
