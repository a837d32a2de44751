//! The wall situations of the faceted-wall seed (figures 4, 5, 6 and 8),
//! facet sides, and mesh-independence of a rebound, on the real engine with
//! the linear model. Expected values come from the geometry (closed forms),
//! or from the same motion on a single-facet wall.

use talus_core::geometry::Region;
use talus_core::wall::{Resolution, BACK, FRONT};
use talus_core::{PairKind, Simulation, Vec3, Wall};

mod common;
use common::*;

/// One facet contact as the engine sees it after a cycle.
#[derive(Clone, Copy, Debug)]
struct FacetContact {
    facet: u32,
    id: u64,
    active: bool,
    gap: f64,
    n: Vec3,
    linked_to: u64,
    proximity: u64,
}

fn facet_contacts(sim: &mut Simulation) -> Vec<FacetContact> {
    let mut out: Vec<FacetContact> = sim
        .snapshot()
        .contacts()
        .filter_map(|c| {
            Some(FacetContact {
                facet: c.end2.facet()?,
                id: c.id,
                active: c.active,
                gap: c.gap,
                n: c.n,
                linked_to: c.linked_to.unwrap_or(0),
                proximity: c.proximity.unwrap_or(0),
            })
        })
        .collect();
    out.sort_by_key(|c| c.facet);
    out
}

fn active(sim: &mut Simulation) -> Vec<FacetContact> {
    facet_contacts(sim)
        .into_iter()
        .filter(|c| c.active)
        .collect()
}

fn wall(mesh: &(Vec<[f64; 3]>, Vec<[u32; 3]>), mode: Resolution, cutoff_deg: f64) -> Wall {
    let mut w = Wall::new("w", &mesh.0, &mesh.1, None).unwrap();
    w.resolution = mode;
    w.cutoff_angle = cutoff_deg.to_radians();
    w
}

/// A ball held still (every degree of freedom fixed) at `pos` against
/// `mesh`; the state after one cycle with a linear model without dashpots.
fn pressed(
    mesh: &(Vec<[f64; 3]>, Vec<[u32; 3]>),
    pos: Vec3,
    mode: Resolution,
    cutoff_deg: f64,
) -> Simulation {
    let (mut sim, g, w) = linear_sim(1e-6, [KN, 0.0, 0.0, 0.0, 0.0]);
    let mut b = ball(pos, Vec3::ZERO, g);
    b.fixity = talus_core::balls::Fixity::from_flags([true; 6]);
    sim.add_ball(b).unwrap();
    sim.add_wall(wall(mesh, mode, cutoff_deg), w);
    sim.prepare().unwrap();
    sim.cycle().unwrap();
    sim
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

// ---------------------------------------------------------------- sides

/// A large single facet in z = 0 with normal +z.
fn big_facet(h: f64) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    (
        vec![
            [-4.0 * h, -4.0 * h, 0.0],
            [4.0 * h, -4.0 * h, 0.0],
            [0.0, 6.0 * h, 0.0],
        ],
        vec![[0, 1, 2]],
    )
}

#[test]
fn an_inactive_side_lets_a_ball_through_and_an_active_side_stops_it() {
    let fall = |inactive: u8| -> (f64, f64) {
        let (mut sim, g, w) = linear_sim(1e-6, [KN, 0.0, 0.0, 0.2, 0.0]);
        sim.add_ball(ball(
            Vec3::new(0.0, 0.0, 1.5 * RADIUS),
            Vec3::new(0.0, 0.0, -1.0),
            g,
        ))
        .unwrap();
        let mut wl = wall(&big_facet(4.0 * RADIUS), Resolution::Reduced, 10.0);
        wl.inactive[0] = inactive;
        sim.add_wall(wl, w);
        sim.prepare().unwrap();
        for _ in 0..40_000 {
            sim.cycle().unwrap();
        }
        let b = sim.balls();
        (b.pos[0].z, b.vel[0].z)
    };
    // The ball comes from the front: a front-inactive facet never pushes.
    let (z, vz) = fall(FRONT);
    assert_eq!(vz, -1.0, "an inactive side must not exert any force");
    assert!(z < -RADIUS, "the ball passed through: z = {z}");
    let (z, vz) = fall(FRONT | BACK);
    assert_eq!(vz, -1.0);
    assert!(z < -RADIUS);
    // Back inactive, front active: the ball bounces.
    let (z, vz) = fall(BACK);
    assert!(vz > 0.5, "the active side stops the ball: vz = {vz}");
    assert!(z > RADIUS);
}

// ---------------------------------------------------------------- fig. 4

/// Per step: the total force on a ball pressed onto `mesh` with overlap
/// `u0` and dragged at constant velocity with high friction.
fn drag(mesh: &(Vec<[f64; 3]>, Vec<[u32; 3]>), mode: Resolution, h: f64) -> (Vec<Vec3>, usize) {
    let dt = 1e-5;
    let (mut sim, g, w) = linear_sim(dt, [KN, 1.0e4, 1.0e3, 0.0, 0.0]);
    let u0 = 1e-3 * RADIUS;
    let start = Vec3::new(-0.7 * h, -0.55 * h, RADIUS - u0);
    let end = Vec3::new(0.7 * h, 0.5 * h, RADIUS - u0);
    let steps = 40_000;
    let v = (end - start) / (steps as f64 * dt);
    let mut b = ball(start, v, g);
    b.fixity = talus_core::balls::Fixity::from_flags([true; 6]);
    sim.add_ball(b).unwrap();
    sim.add_wall(wall(mesh, mode, 10.0), w);
    sim.prepare().unwrap();
    let mut forces = Vec::with_capacity(steps);
    let mut max_active = 0;
    for _ in 0..steps {
        sim.cycle().unwrap();
        forces.push(sim.balls().force[0]);
        max_active = max_active.max(sim.n_active());
    }
    (forces, max_active)
}

#[test]
fn fig4_dragged_ball_keeps_its_shear_force_across_facets_in_full_mode() {
    let h = 4.0 * RADIUS;
    let one = big_facet(h);
    let (reference, _) = drag(&one, Resolution::Full, h);
    let f_end = reference.last().unwrap();
    // The shear spring loads all the way (no slip, no loss): ks * path.
    let path = Vec3::new(1.4 * h, 1.05 * h, 0.0).length();
    let shear_end = Vec3::new(f_end.x, f_end.y, 0.0).length();
    assert!(
        rel(shear_end, 1.0e4 * path) < 1e-6,
        "{shear_end} vs {}",
        1.0e4 * path
    );
    for n in [1, 10] {
        // n = 1: 2 facets (one diagonal); n = 10: 200 facets.
        let mesh = flat_mesh(h, n);
        let (full, max_active) = drag(&mesh, Resolution::Full, h);
        assert_eq!(
            max_active,
            1,
            "{} facets: one active contact at a time",
            2 * n * n
        );
        for (step, (a, b)) in reference.iter().zip(&full).enumerate() {
            assert!(
                rel(a.z, b.z) < 1e-9,
                "{} facets, step {step}: normal force {} vs {}",
                2 * n * n,
                b.z,
                a.z
            );
            let (sa, sb) = (Vec3::new(a.x, a.y, 0.0), Vec3::new(b.x, b.y, 0.0));
            assert!(
                (sa - sb).length() <= 1e-6 * sa.length() + 1e-12,
                "{} facets, step {step}: shear force {sb} vs {sa}",
                2 * n * n
            );
        }
        // Reduced mode: the normal force still matches, but every facet
        // change starts the shear spring afresh (the documented loss).
        let (reduced, _) = drag(&mesh, Resolution::Reduced, h);
        let mut drops = 0;
        for (step, (a, b)) in reference.iter().zip(&reduced).enumerate() {
            assert!(rel(a.z, b.z) < 1e-9, "reduced, step {step}: normal force");
            if step > 0 {
                let prev = reduced[step - 1];
                let (sp, sb) = (Vec3::new(prev.x, prev.y, 0.0), Vec3::new(b.x, b.y, 0.0));
                if sb.length() < 0.01 * sp.length() {
                    drops += 1;
                }
            }
        }
        let last = reduced.last().unwrap();
        assert!(
            drops >= 1,
            "{} facets: no shear loss seen in reduced mode",
            2 * n * n
        );
        assert!(
            Vec3::new(last.x, last.y, 0.0).length()
                < 0.8 * Vec3::new(f_end.x, f_end.y, 0.0).length()
        );
    }
}

// ---------------------------------------------------------------- fig. 5

#[test]
fn fig5_ball_rolling_over_a_convex_edge_has_one_contact_and_a_smooth_normal() {
    let l = 5.0 * RADIUS;
    let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
    let mesh = (
        vec![
            [-l, -l, 0.0],
            [0.0, -l, 0.0],
            [0.0, l, 0.0],
            [-l, l, 0.0],
            [l * c, -l, -l * s],
            [l * c, l, -l * s],
        ],
        vec![[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]],
    );
    for mode in [Resolution::Reduced, Resolution::Full] {
        let dt = 1e-5;
        let (mut sim, g, w) = linear_sim(dt, [KN, KN, 0.5, 0.5, 0.0]);
        sim.settings.gravity = Vec3::new(0.0, 0.0, -9.81);
        let v = 0.1;
        let mut b = ball(
            Vec3::new(-2.0 * RADIUS, 0.0, RADIUS),
            Vec3::new(v, 0.0, 0.0),
            g,
        );
        b.spin = Vec3::new(0.0, v / RADIUS, 0.0);
        sim.add_ball(b).unwrap();
        sim.add_wall(wall(&mesh, mode, 10.0), w);
        sim.prepare().unwrap();
        let mut prev: Option<Vec3> = None;
        let mut on_edge = 0;
        while sim.balls().pos[0].x < 3.0 * RADIUS && sim.step < 200_000 {
            sim.cycle().unwrap();
            let contacts = facet_contacts(&mut sim);
            let touching = contacts.iter().filter(|c| c.gap < 0.0).count();
            let act: Vec<_> = contacts.iter().filter(|c| c.active).collect();
            if touching == 0 {
                prev = None;
                continue;
            }
            assert_eq!(
                act.len(),
                1,
                "{mode:?}, step {}: one active contact",
                sim.step
            );
            let n = act[0].n;
            if n.x.abs() > 1e-6 && n.x.abs() < 0.49 {
                on_edge += 1;
            }
            if let Some(p) = prev {
                // Around the edge the normal turns at |v_t| / d per second.
                let d = RADIUS + act[0].gap;
                let bound = sim.balls().vel[0].length() * dt / d;
                let turn = p.angle_between(n);
                assert!(
                    turn <= 1.05 * bound + 1e-9,
                    "{mode:?}, step {}: normal turned {turn} rad, at most {bound}",
                    sim.step
                );
            }
            prev = Some(n);
        }
        assert!(
            sim.balls().pos[0].x >= 3.0 * RADIUS,
            "the ball rolled over the edge"
        );
        assert!(on_edge > 10, "the contact passed through the edge region");
    }
}

/// A ball whose two facet contacts have exactly equal gaps, one in its
/// facet's face and one at the neighbour's edge, hands the load to the
/// face contact: its normal is the facet normal exactly, where the edge
/// contact's would tilt by the offset of the centre over its distance.
///
/// Two coplanar facets in z = 0 share the edge x = 0; facet 0 lies on the
/// side x < 0, so the former tie-break (lower facet index) chose its edge
/// contact. The centre sits 2^-40 m inside facet 1 at height `h`: the
/// distance to facet 1 is `h`, to facet 0's edge `sqrt(h^2 + e^2)`, which
/// rounds to `h` because `e^2` lies far below half an ulp of `h^2`. The
/// vertices are dyadic, so every closest point below is exact.
#[test]
fn an_exact_gap_tie_at_a_shared_edge_goes_to_the_face() {
    let s = 0.0625;
    let mesh = (
        vec![[0.0, -s, 0.0], [0.0, s, 0.0], [-s, 0.0, 0.0], [s, 0.0, 0.0]],
        vec![[0, 1, 2], [0, 3, 1]],
    );
    let e = 2f64.powi(-40);
    let h = RADIUS - 1e-4;
    assert_eq!(e * e + h * h, h * h, "the two distances must round alike");
    for mode in [Resolution::Reduced, Resolution::Full] {
        let mut sim = pressed(&mesh, Vec3::new(e, 0.0, h), mode, 10.0);
        let regions: Vec<_> = sim
            .snapshot()
            .contacts()
            .map(|c| (c.end2.facet().unwrap(), c.region.unwrap()))
            .collect();
        assert!(
            regions.contains(&(0, Region::Edge(0))),
            "{mode:?}: {regions:?}"
        );
        assert!(
            regions.contains(&(1, Region::Face)),
            "{mode:?}: {regions:?}"
        );
        let c = facet_contacts(&mut sim);
        assert_eq!(c.len(), 2, "{mode:?}");
        assert_eq!(c[0].gap.to_bits(), c[1].gap.to_bits(), "{mode:?}: a tie");
        let (edge, face) = (c[0], c[1]);
        assert!(face.active && !edge.active, "{mode:?}: {c:?}");
        assert_eq!(edge.linked_to, face.id, "{mode:?}");
        // The contact point is the foot of the perpendicular, (e, 0, 0):
        // no tilt at all, and the unit normal -z to the rounding of 1/h.
        assert_eq!([face.n.x, face.n.y], [0.0, 0.0], "{mode:?}");
        assert!(
            (face.n.z + 1.0).abs() <= f64::EPSILON,
            "{mode:?}: {:?}",
            face.n
        );
        // What the edge contact would have applied: tilted by e / h.
        assert!(rel(edge.n.x, -e / h) < 1e-12, "{mode:?}: {:?}", edge.n);
        assert_eq!(face.gap, h - RADIUS, "{mode:?}");
    }
}

// ---------------------------------------------------------------- fig. 6

/// A concave V: two facets meeting along the y axis, each rising away from
/// it at `alpha` (normals 2 alpha apart).
fn valley(alpha: f64) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let l = 5.0 * RADIUS;
    let t = alpha.tan();
    (
        vec![
            [0.0, -l, 0.0],
            [0.0, l, 0.0],
            [-l, 0.0, l * t],
            [l, 0.0, l * t],
        ],
        vec![[0, 1, 2], [1, 0, 3]],
    )
}

#[test]
fn fig6_concave_edge_gives_two_contacts_reduced_and_one_proximity_contact_full() {
    let alpha = 15f64.to_radians();
    let mesh = valley(alpha);
    let pos = Vec3::new(0.03 * RADIUS, 0.1 * RADIUS, 0.98 * RADIUS / alpha.cos());
    // Closed forms: each face's overlap and contact normal (centre to face).
    let faces = [
        Vec3::new(alpha.sin(), 0.0, alpha.cos()),
        Vec3::new(-alpha.sin(), 0.0, alpha.cos()),
    ];
    let overlaps: Vec<f64> = faces.iter().map(|nf| RADIUS - nf.dot(pos)).collect();
    assert!(overlaps.iter().all(|&u| u > 0.0));

    let mut reduced = pressed(&mesh, pos, Resolution::Reduced, 45.0);
    let act = active(&mut reduced);
    assert_eq!(act.len(), 2, "reduced: both faces carry force");
    let f_expected: Vec3 = faces
        .iter()
        .zip(&overlaps)
        .map(|(nf, u)| *nf * KN * *u)
        .sum();
    assert!((reduced.balls().force[0] - f_expected).length() < 1e-9 * f_expected.length());

    // Cutoff above the 30 degree edge angle: one proximity contact.
    let mut full = pressed(&mesh, pos, Resolution::Full, 45.0);
    let act = active(&mut full);
    assert_eq!(act.len(), 1, "full: one proximity contact carries force");
    let weighted: Vec3 = faces.iter().zip(&overlaps).map(|(nf, u)| -*nf * *u).sum();
    let n_pc = weighted.normalize();
    assert!(
        act[0].n.angle_between(n_pc) < 1e-9,
        "merged normal {} vs {n_pc}",
        act[0].n
    );
    let u_mean = 0.5 * (overlaps[0] + overlaps[1]);
    assert!(rel(-act[0].gap, u_mean) < 1e-9);
    let f = full.balls().force[0];
    assert!((f - (-n_pc * KN * u_mean)).length() < 1e-9 * KN * u_mean);
    let all = facet_contacts(&mut full);
    assert!(all
        .iter()
        .all(|c| c.proximity != 0 && c.proximity == all[0].proximity));
    let follower = all.iter().find(|c| !c.active).unwrap();
    assert_eq!(follower.linked_to, act[0].id);

    // Cutoff below the edge angle: no merging, two contacts as in reduced.
    let mut narrow = pressed(&mesh, pos, Resolution::Full, 20.0);
    assert_eq!(active(&mut narrow).len(), 2);
    assert!(facet_contacts(&mut narrow).iter().all(|c| c.proximity == 0));
}

// ---------------------------------------------------------------- fig. 8

/// Fig. 8a: a thin wedge (a blade along y, ridge at z = `height`), each
/// flank two triangles; the ball presses one flank hard enough to reach the
/// other flank's plane from behind.
fn wedge(half_base: f64, height: f64) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let l = 5.0 * RADIUS;
    (
        vec![
            [0.0, -l, height],
            [0.0, l, height],
            [half_base, -l, 0.0],
            [half_base, l, 0.0],
            [-half_base, -l, 0.0],
            [-half_base, l, 0.0],
        ],
        vec![[0, 2, 3], [0, 3, 1], [0, 1, 5], [0, 5, 4]],
    )
}

/// Fig. 8b: three parallel sheets a little apart, no shared vertices.
fn sheets(gap: f64) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let h = 4.0 * RADIUS;
    let mut v = Vec::new();
    let mut t = Vec::new();
    for k in 0..3 {
        let z = -(k as f64) * gap;
        let base = v.len() as u32;
        v.extend([[-h, -h, z], [h, -h, z], [0.0, 1.5 * h, z]]);
        t.push([base, base + 1, base + 2]);
    }
    (v, t)
}

#[test]
fn fig8_sliver_and_stacked_facets_need_the_segment_check() {
    let (w, height) = (0.02 * RADIUS, 4.0 * RADIUS);
    let mesh = wedge(w, height);
    let pos = Vec3::new(w + 0.95 * RADIUS, 0.3 * RADIUS, 0.5 * height);
    let mut reduced = pressed(&mesh, pos, Resolution::Reduced, 10.0);
    let act = active(&mut reduced);
    assert_eq!(act.len(), 2, "8a reduced: one contact per flank");
    assert!(act.iter().any(|c| c.facet < 2) && act.iter().any(|c| c.facet >= 2));
    let mut full = pressed(&mesh, pos, Resolution::Full, 10.0);
    let act = active(&mut full);
    assert_eq!(act.len(), 1, "8a full: only the near flank");
    assert!(act[0].facet < 2);

    let mesh = sheets(0.002 * RADIUS);
    let pos = Vec3::new(0.1 * RADIUS, 0.2 * RADIUS, 0.99 * RADIUS);
    assert_eq!(
        active(&mut pressed(&mesh, pos, Resolution::Reduced, 10.0)).len(),
        3
    );
    let mut full = pressed(&mesh, pos, Resolution::Full, 10.0);
    let act = active(&mut full);
    assert_eq!(act.len(), 1, "8b full: one contact");
    assert_eq!(act[0].facet, 0, "the largest overlap (top sheet) stays");
    // Force: one sheet's worth.
    let u = RADIUS - pos.z;
    assert!(rel(full.balls().force[0].z, KN * u) < 1e-9);
}

// ------------------------------------------------- mesh-independent rebound

struct Bounce {
    vel: Vec3,
    spin: Vec3,
    height: f64,
}

fn bounce(divisions: u32, mode: Resolution) -> Bounce {
    let h = 0.05;
    let box_mesh = talus_config::box_mesh([-h, -h, 0.0], [h, h, 2.0 * h], [false; 6], divisions);
    let mesh = (box_mesh.vertices, box_mesh.triangles);
    let dt = 2e-6;
    let (mut sim, g, w) = linear_sim(dt, [KN, 0.5 * KN, 0.5, 0.3, 0.1]);
    sim.settings.gravity = Vec3::new(0.0, 0.0, -9.81);
    // Lands on the grid line x = 0 of the finer floor and slides across it.
    let vz = -0.5;
    let mut b = ball(
        Vec3::new(-1.1e-4, 0.3 * h, RADIUS + 1e-4),
        Vec3::new(0.3, 0.1, vz),
        g,
    );
    b.spin = Vec3::new(5.0, -3.0, 2.0);
    sim.add_ball(b).unwrap();
    sim.add_wall(wall(&mesh, mode, 10.0), w);
    sim.prepare().unwrap();
    let mut touched = false;
    loop {
        sim.cycle().unwrap();
        let z = sim.balls().pos[0].z;
        if z < RADIUS {
            touched = true;
        }
        if touched && z > RADIUS {
            break;
        }
        assert!(sim.step < 1_000_000);
    }
    let (vel, spin) = (sim.balls().vel[0], sim.balls().spin[0]);
    // Free flight from here: the apex follows from the rebound velocity.
    let height = sim.balls().pos[0].z + vel.z * vel.z / (2.0 * 9.81);
    Bounce { vel, spin, height }
}

#[test]
fn rebound_on_a_box_and_on_the_same_box_four_times_finer_agree_in_full_mode() {
    let coarse = bounce(1, Resolution::Full);
    let fine = bounce(4, Resolution::Full);
    let restitution = |b: &Bounce| b.vel.z / 0.5;
    assert!(restitution(&coarse) > 0.3, "it bounced");
    assert!(rel(restitution(&coarse), restitution(&fine)) < 1e-9);
    assert!(rel(coarse.height, fine.height) < 1e-9);
    assert!((coarse.vel - fine.vel).length() < 1e-9 * coarse.vel.length());
    assert!((coarse.spin - fine.spin).length() < 1e-9 * coarse.spin.length());
    // The test can tell: reduced mode loses the shear force at the line.
    let reduced = bounce(4, Resolution::Reduced);
    assert!((coarse.spin - reduced.spin).length() > 1e-6 * coarse.spin.length());
}

// ------------------------------------------------------ deformable walls

fn deforming(mesh: &(Vec<[f64; 3]>, Vec<[u32; 3]>), velocity: Vec<Vec3>) -> Wall {
    let mut w = wall(mesh, Resolution::Reduced, 10.0);
    w.deform = Some(talus_core::wall::Deformation {
        velocity,
        schedule: Vec::new(),
    });
    w
}

#[test]
fn a_deforming_facet_moves_the_contact_with_its_local_velocity() {
    // The floor tilts: v_z = a x, so the material under the ball rises at
    // a x_p. Normal force = kn overlap + c (a x_p) with c = 2 zeta sqrt(m kn).
    let h = 4.0 * RADIUS;
    let mesh = big_facet(h);
    let a = 2.0;
    let velocity: Vec<Vec3> = mesh
        .0
        .iter()
        .map(|p| Vec3::new(0.0, 0.0, a * p[0]))
        .collect();
    let zeta = 0.4;
    let dt = 1e-6;
    let (mut sim, g, w) = linear_sim(dt, [KN, 0.0, 0.0, zeta, 0.0]);
    let centre = Vec3::new(0.5 * RADIUS, 0.2 * RADIUS, 0.999 * RADIUS);
    let mut b = ball(centre, Vec3::ZERO, g);
    b.fixity = talus_core::balls::Fixity::from_flags([true; 6]);
    sim.add_ball(b).unwrap();
    sim.add_wall(deforming(&mesh, velocity.clone()), w);
    sim.prepare().unwrap();
    for step in 1..=50 {
        sim.cycle().unwrap();
        // The plane through the moved corners, independently.
        let p: Vec<Vec3> = mesh
            .0
            .iter()
            .zip(&velocity)
            .map(|(x, v)| Vec3::from_array(*x) + *v * (step as f64 * dt))
            .collect();
        let nf = (p[1] - p[0]).cross(p[2] - p[0]).normalize();
        let dist = nf.dot(centre - p[0]);
        let foot = centre - nf * dist;
        let overlap = RADIUS - dist;
        let c = 2.0 * zeta * (mass() * KN).sqrt();
        let rise = a * foot.x * nf.z; // material velocity along the facet normal
        let expected = nf * (KN * overlap + c * rise);
        let f = sim.balls().force[0];
        assert!(
            (f - expected).length() < 1e-9 * expected.length(),
            "step {step}: {f} vs {expected}"
        );
    }
}

fn run_until_error(sim: &mut Simulation, max_steps: u64) -> talus_core::StepError {
    loop {
        if let Err(e) = sim.cycle() {
            return e;
        }
        assert!(sim.step < max_steps, "never reported");
    }
}

#[test]
fn a_facet_that_degenerates_or_crosses_another_stops_the_run() {
    let (mut sim, g, w) = linear_sim(1e-3, [KN, 0.0, 0.0, 0.0, 0.0]);
    sim.add_ball(ball(Vec3::new(10.0, 10.0, 10.0), Vec3::ZERO, g))
        .unwrap();
    // Vertex 2 runs onto the middle of edge 0-1 in one second.
    let mesh = (
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1.0, 0.0]],
        vec![[0, 1, 2]],
    );
    let velocity = vec![Vec3::ZERO, Vec3::ZERO, Vec3::new(0.0, -1.0, 0.0)];
    sim.add_wall(deforming(&mesh, velocity), w);
    sim.prepare().unwrap();
    let err = run_until_error(&mut sim, 2000);
    let text = err.to_string();
    assert!(
        text.contains("wall 'w'") && text.contains("facet 0 degenerated"),
        "{text}"
    );
    assert!(sim.step >= 999, "reported too early, at step {}", sim.step);

    // Two separate facets; the second passes through the first.
    let (mut sim, g, w) = linear_sim(1e-3, [KN, 0.0, 0.0, 0.0, 0.0]);
    sim.add_ball(ball(Vec3::new(10.0, 10.0, 10.0), Vec3::ZERO, g))
        .unwrap();
    let mesh = (
        vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.2, 0.2, 0.5],
            [0.2, 0.3, 0.6],
            [0.3, 0.2, 0.6],
        ],
        vec![[0, 1, 2], [3, 4, 5]],
    );
    let down = Vec3::new(0.0, 0.0, -1.0);
    let velocity = vec![Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, down, down, down];
    sim.add_wall(deforming(&mesh, velocity), w);
    sim.prepare().unwrap();
    let err = run_until_error(&mut sim, 2000);
    assert!(
        err.to_string().contains("facet 0 intersects facet 1"),
        "{err}"
    );
    // Vertex 3 reaches z = 0 after 500 steps.
    assert!(
        (500..=502).contains(&sim.step),
        "reported at step {}",
        sim.step
    );
}

#[test]
fn a_deforming_box_squeezes_a_packing_and_keeps_it_inside() {
    let h = 0.05;
    let bm = talus_config::box_mesh([-h, -h, -h], [h, h, h], [false; 6], 2);
    let mesh = (bm.vertices, bm.triangles);
    // Compression: vertex velocities -r x0 about the centre, for 0.3 s.
    let r = 0.5;
    let velocity: Vec<Vec3> = mesh.0.iter().map(|p| -Vec3::from_array(*p) * r).collect();
    let dt = 2e-6;
    let (mut sim, g, w) = linear_sim(dt, [KN, 0.5 * KN, 0.3, 0.3, 0.0]);
    let spacing = 2.2 * RADIUS;
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                let p =
                    Vec3::new(i as f64, j as f64, k as f64) * spacing - Vec3::splat(1.5 * spacing);
                sim.add_ball(ball(p, Vec3::ZERO, g)).unwrap();
            }
        }
    }
    let mut box_wall = deforming(&mesh, velocity);
    box_wall.deform.as_mut().unwrap().schedule = vec![(0.0, 1.0), (0.3, 1.0), (0.30001, 0.0)];
    let neighbours = box_wall.neighbours.clone();
    sim.add_wall(box_wall, w);
    sim.prepare().unwrap();
    let mut max_active = 0;
    while sim.time < 0.35 {
        sim.cycle().unwrap();
        max_active = max_active.max(sim.n_active());
    }
    let walls = sim.walls();
    let wall = &walls[0];
    assert_eq!(
        wall.neighbours, neighbours,
        "the mesh keeps its connectivity"
    );
    // Each vertex kept its initial velocity -r x0 for 0.3 s.
    let half = wall.vertices.iter().map(|v| v.x).fold(f64::MIN, f64::max);
    assert!(rel(half, h * (1.0 - r * 0.3)) < 1e-3, "half width {half}");
    // A lattice 8.6 cm across in a box now 8.5 cm wide: squeezed, all inside.
    for (i, p) in sim.balls().pos.iter().enumerate() {
        assert!(p.abs().max_element() < half, "ball {i} escaped: {p}");
    }
    assert!(
        max_active > 64,
        "the balls were pressed together: {max_active} active contacts"
    );
}

#[test]
fn unusable_wall_motions_are_refused_before_step_0() {
    let mesh = big_facet(RADIUS);
    let setup = |w: Wall| {
        let (mut sim, _, wg) = linear_sim(1e-6, [KN, 0.0, 0.0, 0.0, 0.0]);
        sim.add_wall(w, wg);
        sim.prepare().map(|_| ()).unwrap_err().to_string()
    };
    let short = deforming(&mesh, vec![Vec3::ZERO; 2]);
    let e = setup(short);
    assert!(
        e.contains("'w'") && e.contains("2 vertex velocities for 3 vertices"),
        "{e}"
    );
    let mut both = deforming(&mesh, vec![Vec3::ZERO; 3]);
    both.motion.velocity = Vec3::X;
    assert!(setup(both).contains("cannot deform and move rigidly"));
    let mut servo = wall(&mesh, Resolution::Reduced, 10.0);
    servo.servo = Some(talus_core::wall::Servo {
        direction: Vec3::new(0.0, 0.0, 2.0),
        target: 1.0,
        gain: 1.0,
        max_speed: 1.0,
    });
    assert!(setup(servo).contains("unit direction"));
}

// ------------------------------------------------------- per-slot rules

/// Counts steps in slots with different propagation rules: `total`
/// (copy) and `own` (none) count the steps the contact carried force,
/// `sum` (add) counts those and the steps it was suppressed, `held`
/// (none) the suppressed ones alone, and `marked` (custom) counts like
/// `total` plus 1000 per take-over.
struct Tally;

impl talus_sdk::ContactModel for Tally {
    fn descriptor() -> talus_sdk::ModelDescriptor {
        use talus_sdk::{Propagation, StateSlotDesc};
        let slot = |name: &str, rule| StateSlotDesc::new(name, "-", "").propagation(rule);
        talus_sdk::ModelDescriptor::new("tally", "0.1.0")
            .property(talus_sdk::PropertyDesc::new("k", "N/m", "stiffness"))
            .state(slot("total", Propagation::Copy))
            .state(slot("own", Propagation::None))
            .state(slot("sum", Propagation::Add))
            .state(slot("held", Propagation::None))
            .state(slot("marked", Propagation::Custom))
    }

    fn prepare(props: &[f64], _dt: f64) -> Self {
        assert_eq!(props, [KN]);
        Tally
    }

    fn force_displacement(
        &mut self,
        c: &talus_sdk::Contact<'_>,
        s: &mut [f64],
    ) -> talus_sdk::ContactOutput {
        if c.gap >= 0.0 {
            return talus_sdk::ContactOutput::could_be_active([KN, 0.0]);
        }
        for k in [0, 1, 2, 4] {
            s[k] += 1.0;
        }
        talus_sdk::ContactOutput::active([-KN * c.gap, 0.0, 0.0], [KN, 0.0])
    }

    fn suppressed(&mut self, _: &talus_sdk::Contact<'_>, s: &mut [f64]) {
        s[2] += 1.0;
        s[3] += 1.0;
    }

    fn custom_state(event: talus_sdk::StateEvent, props: &[f64], from: &[f64], to: &mut [f64]) {
        assert_eq!(event, talus_sdk::StateEvent::TakeOver);
        assert_eq!(props, [KN]);
        to[4] = from[4] + 1000.0;
        // Writes to slots that are not custom are undone.
        to[0] = -1.0;
        to[2] = -1.0;
    }
}

#[test]
fn each_state_slot_follows_its_own_rule_when_the_load_crosses_a_facet() {
    let h = 4.0 * RADIUS;
    let dt = 1e-5;
    let mut sim = Simulation::new(talus_core::Settings {
        gravity: Vec3::ZERO,
        timestep: talus_core::Timestep::Fixed(dt),
        ..talus_core::Settings::default()
    });
    let (g, w) = (sim.group("grain"), sim.group("wall"));
    let m = sim.add_model(talus_sdk::entry::<Tally>());
    sim.assign(g, w, m, vec![KN]).unwrap();
    sim.assign(g, g, m, vec![KN]).unwrap();
    // Across the diagonal of a two-facet square, as in the fig. 4 drag.
    let u0 = 1e-3 * RADIUS;
    let (start, end) = (
        Vec3::new(-0.7 * h, -0.55 * h, RADIUS - u0),
        Vec3::new(0.7 * h, 0.5 * h, RADIUS - u0),
    );
    let steps = 4000;
    let mut b = ball(start, (end - start) / (steps as f64 * dt), g);
    b.fixity = talus_core::balls::Fixity::from_flags([true; 6]);
    sim.add_ball(b).unwrap();
    sim.add_wall(wall(&flat_mesh(h, 1), Resolution::Full, 10.0), w);
    sim.prepare().unwrap();
    let mut carried = 1.0; // the first step, in `prepare`
    let mut carrier = Vec::new();
    for _ in 0..steps {
        sim.cycle().unwrap();
        let on = active(&mut sim);
        assert_eq!(on.len(), 1, "one carrier at a time");
        carried += 1.0;
        carrier.push(on[0].id);
    }
    let takeovers = carrier.windows(2).filter(|p| p[0] != p[1]).count() as f64;
    assert_eq!(takeovers, 1.0, "one crossing of the diagonal");
    let st = sim.models[m].store(PairKind::BallFacet);
    let last = (0..st.len())
        .find(|&k| st.id[k] == carrier[steps - 1])
        .unwrap();
    let [total, own, sum, held, marked] = st.state_of(last).try_into().unwrap();
    // Copy: the count went over with the load.
    assert_eq!(total, carried);
    // None: only the steps since the crossing.
    assert!(own > 0.0 && own < carried, "{own}");
    // Add: the source's count on top of the target's own, which includes
    // the steps it waited, suppressed, for the load.
    assert!(
        held > 0.0,
        "the second facet's contact was suppressed first"
    );
    assert_eq!(sum, carried + held);
    // Custom: what the callback wrote, and only to its slot.
    assert_eq!(marked, carried + 1000.0 * takeovers);
}
