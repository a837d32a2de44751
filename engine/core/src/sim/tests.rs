//! Tests of the cycle as a whole: the segmented pass, regrouping, the wall
//! logic's marks and the stage times.

use crate::balls::BallInit;
use crate::body::{BallBundle, BallsRef};
use crate::contact::{self, ContactStore, BATCH, CARRIED, RELEASED};
use crate::math::Vec3;
use crate::narrow::*;
use crate::pass::segments::*;
use crate::pass::*;
use crate::piece::{pair_key, PairKind, Piece};
use crate::sim::*;
use crate::wall::Wall;
use std::time::Instant;
use talus_sdk::abi_stable::std_types::{RSlice, RSliceMut};
use talus_sdk::{flags, BatchContext, ContactInput, ContactOutput};

/// A compressed lattice of n x n x 8 balls under gravity, with the
/// linear model (n odd or not a multiple of 7919).
/// A 1 mm glass bead of group `group`, undamped and free.
fn grain(pos: Vec3, velocity: Vec3, group: u16) -> BallInit {
    BallInit {
        pos,
        radius: 1e-3,
        density: 2500.0,
        velocity,
        spin: Vec3::ZERO,
        group,
        damping: 0.0,
        fixity: Default::default(),
    }
}

fn linear_entry() -> talus_sdk::ModelEntry {
    let root = talus_plugin_linear::root_module();
    talus_sdk::ModelEntry::from_abi((root.models())()[0]).unwrap()
}

fn packed(n: usize) -> Simulation {
    packed_with(n, linear_entry())
}

/// `n * n * 8` balls in a simple cubic pack, each overlapping its six
/// neighbours slightly, under gravity, with `entry` between them.
fn packed_with(n: usize, entry: talus_sdk::ModelEntry) -> Simulation {
    let mut sim = unprepared(n, entry);
    sim.prepare().unwrap();
    sim
}

/// [`packed_with`] before [`Simulation::prepare`].
fn unprepared(n: usize, entry: talus_sdk::ModelEntry) -> Simulation {
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep: Timestep::Auto { safety: 0.5 },
        ..Settings::default()
    });
    let g = sim.group("g");
    let m = sim.add_model(entry);
    sim.assign(g, g, m, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
    // Balls in a scrambled order (a stride prime to the count), so that
    // each ball's contacts lie far apart in the store.
    let total = n * n * 8;
    for q in 0..total {
        let p = q * 7919 % total;
        let (i, j, k) = (p / (8 * n), p / 8 % n, p % 8);
        let jitter = ((i * 7 + j * 13 + k * 29) % 11) as f64 * 1e-6;
        let pos = Vec3::new(i as f64, j as f64, k as f64) * 1.98e-3 + Vec3::splat(jitter);
        sim.add_ball(grain(pos, Vec3::ZERO, g)).unwrap();
    }
    sim
}

#[test]
fn a_lone_facet_contact_is_marked_as_carrying_its_load() {
    // One ball resting 10 um deep on a floor of two facets, well inside
    // the first: its only facet contact carries, which the next step's
    // wall logic reads, and only its bit in the wall logic's set marks it.
    let mut sim = Simulation::new(Settings {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep: Timestep::Fixed(1e-7),
        ..Settings::default()
    });
    let g = sim.group("g");
    let w = sim.group("floor");
    let m = sim.add_model(linear_entry());
    let props = vec![1e5, 5e4, 0.5, 0.1, 0.1];
    sim.assign(g, g, m, props.clone()).unwrap();
    sim.assign(g, w, m, props).unwrap();
    let corners = [
        [-1e-2, -1e-2, 0.0],
        [1e-2, -1e-2, 0.0],
        [1e-2, 1e-2, 0.0],
        [-1e-2, 1e-2, 0.0],
    ];
    let floor = Wall::new("floor", &corners, &[[0, 1, 2], [0, 2, 3]], None).unwrap();
    sim.add_wall(floor, w);
    sim.add_ball(grain(Vec3::new(5e-3, -5e-3, 0.99e-3), Vec3::ZERO, g))
        .unwrap();
    sim.prepare().unwrap();
    for _ in 0..3 {
        sim.cycle().unwrap();
        let st = sim.models[0].store(PairKind::BallFacet);
        let slots: Vec<usize> = (0..st.len()).collect();
        let overlapping: Vec<usize> = slots
            .iter()
            .copied()
            .filter(|&k| st.plane[k].gap < 0.0)
            .collect();
        assert_eq!(overlapping.len(), 1, "{slots:?}");
        assert!(st.setup[overlapping[0]].flags & CARRIED != 0);
        // Its bit, and no other, marked it.
        let k = overlapping[0];
        let lanes = sim.models.iter().flat_map(|m| &m.lanes);
        let bits: u32 = lanes.flat_map(|l| &l.lone).map(|w| w.count_ones()).sum();
        let lone = &sim.models[0].lane(PairKind::BallFacet).lone;
        assert!(bits == 1 && lone[k / 64] & (1 << (k % 64)) != 0);
    }
}

#[test]
fn wall_sums_have_the_same_bits_on_any_thread_count() {
    // The packed balls' bottom layer pressed 10 um into a floor finely
    // cut into facets, each ball near a dozen or more of them: the floor's
    // lane has many chunks, and two or three threads sum the wall in
    // segments of several chunks each.
    let run = |threads: usize| -> Vec<[u64; 6]> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut sim = unprepared(24, linear_entry());
            let w = sim.group("floor");
            let (lo, z, cells) = (-5e-3, -0.99e-3, 75u32);
            let side = 0.8e-3;
            let corner = |i: u32, j: u32| [lo + i as f64 * side, lo + j as f64 * side, z];
            let at = |i: u32, j: u32| i * (cells + 1) + j;
            let corners: Vec<[f64; 3]> = (0..=cells)
                .flat_map(|i| (0..=cells).map(move |j| corner(i, j)))
                .collect();
            let squares = (0..cells).flat_map(|i| (0..cells).map(move |j| (i, j)));
            let facets: Vec<[u32; 3]> = squares
                .flat_map(|(i, j)| {
                    let (a, b) = (at(i, j), at(i + 1, j));
                    let (c, d) = (at(i + 1, j + 1), at(i, j + 1));
                    [[a, b, c], [a, c, d]]
                })
                .collect();
            let floor = Wall::new("floor", &corners, &facets, None).unwrap();
            sim.add_wall(floor, w);
            sim.assign(0, w, 0, vec![1e5, 5e4, 0.5, 0.1, 0.1]).unwrap();
            sim.prepare().unwrap();
            let mut bits = Vec::new();
            for _ in 0..20 {
                sim.cycle().unwrap();
                let walls = sim.walls();
                let wall = &walls[0];
                let v = [wall.force.to_array(), wall.moment.to_array()].concat();
                bits.push(std::array::from_fn(|i| v[i].to_bits()));
            }
            let n_chunks = sim.models[0]
                .store(PairKind::BallFacet)
                .len()
                .div_ceil(BATCH);
            assert!(n_chunks >= 8, "{n_chunks} chunks");
            // The balls push the floor down.
            assert!(sim.walls()[0].force.z < 0.0);
            bits
        })
    };
    let one = run(1);
    for threads in [2, 3] {
        assert!(
            run(threads) == one,
            "{threads} threads changed the wall sums"
        );
    }
}

#[test]
fn an_idle_input_carries_a_nan_gap_and_the_linear_model_repeats_its_release() {
    // An idle contact's input keeps whatever another contact left in
    // the chunk's buffer, except its flag, property set and gap: a
    // model that computed on it anyway would see no overlap (NaN is
    // not below zero), and the linear model then repeats its released
    // answer.
    // Two balls 0.5 mm apart, the first moving towards the second.
    let mut world = hecs::World::new();
    for (x, v) in [(0.0, 1.0), (2.5e-3, 0.0)] {
        world.spawn(BallBundle::new(&grain(
            Vec3::new(x, 0.0, 0.0),
            Vec3::new(v, 0.0, 0.0),
            0,
        )));
    }
    let balls = BallsRef::of(&world);
    let scene = Scene {
        pos: &balls.pos,
        vel: &balls.vel,
        spin: &balls.spin,
        radius: &balls.radius,
        blocks: Default::default(),
        walls: &[],
        owner: &[],
        cell: None,
    };
    let setup = contact::Setup {
        mass: 1e-5,
        prop_set: 3,
        flags: RELEASED,
    };
    let mut plane = contact::Plane {
        gap: 5e-4,
        ..Default::default()
    };
    // Left over from an overlapping contact of an earlier chunk.
    let mut input = ContactInput {
        gap: -1e-4,
        delta_n: -1e-6,
        delta_s: [1e-6, 0.0],
        mass: 1e-5,
        ..Default::default()
    };
    let busy = resolve_one::<BallBall, crate::contact::six_dof::Rotations>(
        &scene,
        &mut plane,
        &mut [],
        &mut [0.0; 6],
        &setup,
        Piece::ball(0),
        Piece::ball(1),
        1e-6,
        (true, false),
        &mut input,
        &BallBall::ahead(
            &scene,
            Piece::ball(0),
            Piece::ball(1),
            setup.flags & RELEASED != 0,
        ),
    );
    assert!(!busy);
    // Not written to; flagged when it joins a run of busy contacts.
    assert_eq!(input.gap, -1e-4);
    idle_input(&mut input, &setup);
    assert_eq!((input.flags, input.prop_set), (flags::IDLE, 3));
    assert!(input.gap.is_nan());
    use talus_plugin_linear::kernel::{force_displacement, LinearProps, LinearState};
    let props = LinearProps {
        kn: 1e5,
        ks: 5e4,
        fric: 0.5,
        dp_nratio: 0.1,
        dp_sratio: 0.1,
    };
    let released = LinearState {
        e_slip: 2e-9,
        e_dashpot: 3e-9,
        ..Default::default()
    };
    let mut state = released;
    let out = force_displacement(&props, 1e-6, &input, &mut state);
    assert_eq!(state, released);
    assert_eq!(out.force, [0.0; 3]);
    assert_eq!(out.status, talus_sdk::STATUS_COULD_BE_ACTIVE);
}

#[test]
fn stage_times_add_up_to_at_most_the_cycles_time() {
    let mut sim = packed(6);
    assert_eq!(sim.stage_times, StageTimes::default());
    let start = Instant::now();
    for _ in 0..50 {
        sim.cycle().unwrap();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let t = sim.stage_times;
    for (name, s) in t.named() {
        assert!(s >= 0.0, "{name}: {s}");
    }
    // Each stage is timed once per cycle, none inside another.
    assert!(t.total() <= elapsed, "{t:?} against {elapsed} s");
    // A packed bed has contacts: their pass is timed.
    assert!(
        sim.n_active() > 0 && t.contacts > 0.0 && t.motion > 0.0,
        "{t:?}"
    );
}

/// Per model call of the recording model: which inputs were idle.
static CALLS: std::sync::Mutex<Vec<Vec<bool>>> = std::sync::Mutex::new(Vec::new());

/// The linear model, recording the shape of every batch it gets.
extern "C" fn recording_linear(
    ctx: &BatchContext<'_>,
    inputs: RSlice<'_, ContactInput>,
    state: RSliceMut<'_, f64>,
    outputs: RSliceMut<'_, ContactOutput>,
) -> talus_sdk::abi_stable::std_types::RResult<(), talus_sdk::BatchError> {
    let idle = inputs.iter().map(|i| i.flags & flags::IDLE != 0).collect();
    CALLS.lock().unwrap().push(idle);
    (linear_entry().batch)(ctx, inputs, state, outputs)
}

#[test]
fn the_model_gets_runs_of_busy_contacts_with_short_idle_gaps_only() {
    let mut entry = linear_entry();
    entry.batch = recording_linear;
    let mut sim = packed_with(8, entry);
    CALLS.lock().unwrap().clear();
    let (mut contacts, mut idle_seen, mut bridged) = (0, 0, 0);
    for _ in 0..300 {
        sim.cycle().unwrap();
        contacts += sim.n_contacts();
        let calls = std::mem::take(&mut *CALLS.lock().unwrap());
        for idle in &calls {
            // A run starts and ends with a contact that is not idle, and
            // no stretch of idle ones within it reaches IDLE_GAP.
            assert!(!idle[0] && !idle[idle.len() - 1]);
            let mut stretch = 0;
            for &i in idle {
                stretch = if i { stretch + 1 } else { 0 };
                assert!(stretch < IDLE_GAP);
            }
            idle_seen += idle.iter().filter(|&&i| i).count();
            bridged += usize::from(idle.contains(&true));
            contacts -= idle.len();
        }
    }
    // Both kinds of idle contacts occurred: left out (fewer inputs than
    // contacts) and bridged over within a run.
    assert!(contacts > 0 && idle_seen > 0 && bridged > 0);
}

#[test]
fn every_ball_that_left_its_cell_extent_is_rebinned_in_its_step() {
    // A falling bed of several blocks of balls, some flying apart:
    // after each cycle no ball lies farther than the tolerance from
    // where it was last binned.
    let mut sim = packed(12);
    let mut rebinned = 0;
    for _ in 0..200 {
        sim.cycle().unwrap();
        let cells = sim.cells.as_ref().unwrap();
        for (i, &x) in sim.balls().pos.iter().enumerate() {
            assert!(!cells.must_rebin(i, x), "ball {i} at step {}", sim.step);
        }
        rebinned += sim.motion_blocks.iter().map(|b| b.1).sum::<u32>();
    }
    assert!(sim.motion_blocks.len() > 2 && rebinned > 1000, "{rebinned}");
}

#[test]
fn the_active_count_is_that_of_the_model_outputs() {
    // A packed bed without walls falls and bounces apart and together:
    // contacts open, close and are released while the count is taken.
    let mut sim = packed(6);
    let (mut some_active, mut some_not) = (false, false);
    for _ in 0..300 {
        sim.cycle().unwrap();
        let lanes = sim.models.iter().flat_map(|m| &m.lanes);
        let outputs = lanes.flat_map(|l| &l.store.output);
        let active = outputs
            .filter(|o| o.status == talus_sdk::STATUS_ACTIVE)
            .count();
        assert_eq!(sim.n_active(), active, "step {}", sim.step);
        some_active |= active > 0;
        some_not |= active < sim.n_contacts();
    }
    assert!(some_active && some_not);
}

/// The step-by-step force sums of `packed(n)` on a pool of `threads`,
/// and how many contributions the parallel pass held back; with
/// `regroup`, the contacts of every chunk are regrouped before each
/// step.
fn sums_on(threads: usize, n: usize, steps: usize, regroup: bool) -> (Vec<Vec<u64>>, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut sim = packed(n);
        let mut held = 0;
        let mut bits = Vec::new();
        for _ in 0..steps {
            if regroup {
                sim.regroup_contacts(true);
            }
            sim.cycle().unwrap();
            held += sim
                .segments
                .iter()
                .flat_map(|s| &s.deferred)
                .map(Vec::len)
                .sum::<usize>();
            let b = sim.balls();
            let mut v = Vec::new();
            for i in 0..b.len() {
                v.extend(b.force[i].to_array().map(f64::to_bits));
                v.extend(b.moment[i].to_array().map(f64::to_bits));
                v.push(b.stiffness[i].to_bits());
            }
            bits.push(v);
        }
        (bits, held)
    })
}

#[test]
fn segmented_sums_have_the_bits_of_the_serial_pass() {
    // 24 x 24 x 8 balls make several chunks of contacts, so 2 and 3
    // threads cut them into segments that share balls.
    let (serial, none) = sums_on(1, 24, 40, false);
    assert_eq!(none, 0);
    for threads in [2, 3, 4, 7] {
        let (parallel, held) = sums_on(threads, 24, 40, false);
        assert!(held > 0, "{threads} threads held nothing back");
        assert!(serial == parallel, "{threads} threads changed the sums");
    }
}

/// Per ball, by a walk through the slots of each segment: the only
/// segment that reaches it, [`SHARED`] or [`UNTOUCHED`].
fn reach(st: &ContactStore, bounds: &[usize], n_balls: usize) -> Vec<u8> {
    reach_lanes(&[st], &[bounds.to_vec()], n_balls).remove(0)
}

/// Per lane, each ball's running segment by a walk through the slots of
/// that lane and every lane before it: the one segment that has all of
/// them, [`SHARED`] if several do, [`UNTOUCHED`] if none.
fn reach_lanes(stores: &[&ContactStore], bounds: &[Vec<usize>], n_balls: usize) -> Vec<Vec<u8>> {
    let mut want = vec![UNTOUCHED; n_balls];
    let mut lanes = Vec::new();
    for (st, bounds) in stores.iter().zip(bounds) {
        for k in 0..bounds.len() - 1 {
            for slot in bounds[k] * BATCH..(bounds[k + 1] * BATCH).min(st.len()) {
                for end in [st.end1[slot], st.end2[slot]] {
                    if end.is_ball() {
                        let w = &mut want[end.index()];
                        *w = if *w == UNTOUCHED || *w == k as u8 {
                            k as u8
                        } else {
                            SHARED
                        };
                    }
                }
            }
        }
        lanes.push(want.clone());
    }
    lanes
}

#[test]
fn the_lanes_of_a_model_are_cut_at_the_same_balls() {
    // A ball-ball lane of 6 chunks (ball k at slots 8 k to 8 k + 7) and a
    // facet lane of 3 chunks holding the first half of those balls the
    // same way: the facet lane is cut where its first ends reach the
    // ball-ball lane's cut, so a ball inside a segment has all its
    // contacts there and is added directly. The cut shares the work of
    // both lanes (9 chunks, all busy): lead chunks 0..2 with facet
    // chunks 0..2 against the rest (4 and 5), and for three segments 2,
    // 4 and 3 (the tie 2-4 or 4-2 goes to the first).
    let n_balls = 6 * BATCH / 8 + 2;
    let mut pairs = ContactStore::new(1);
    for slot in 0..6 * BATCH as u32 {
        pairs.push(0, Piece::ball(slot / 8), Piece::ball(slot / 8 + 1), 0, 1.0);
    }
    let mut facets = ContactStore::new(1);
    for slot in 0..3 * BATCH as u32 {
        facets.push(0, Piece::ball(slot / 8), Piece::facet(0), 0, 1.0);
    }
    let mut plan = SegmentPlan::default();
    let cuts = [
        (2, vec![0, 2, 6], vec![0, 2, 3]),
        (3, vec![0, 1, 3, 6], vec![0, 1, 3, 3]),
    ];
    for (n_seg, lead_cut, facet_cut) in cuts {
        plan.plan(&[&pairs, &facets], n_seg, Targets::balls(n_balls), 0);
        let b = &plan.bounds;
        assert_eq!(b[0], lead_cut);
        assert_eq!(b[1], facet_cut);
        let want = reach_lanes(&[&pairs, &facets], b, n_balls);
        assert_eq!(plan.only, want, "{n_seg} segments");
        // Only the balls at the cuts are shared.
        let shared = want[1].iter().filter(|&&w| w == SHARED).count();
        assert_eq!(shared, n_seg - 1, "{n_seg} segments");
    }
    // A lane the lead's cut leaves nothing of goes to the first segment.
    let mut late = ContactStore::new(1);
    late.push(0, Piece::ball(0), Piece::facet(0), 0, 1.0);
    plan.plan(&[&pairs, &late], 3, Targets::balls(n_balls), 0);
    assert_eq!(plan.bounds[1], [0, 1, 1, 1]);
}

#[test]
fn an_updated_plan_lets_no_two_segments_add_to_one_ball() {
    // Contacts come and go at random between updates; a ball that one
    // segment reaches may be marked shared (its other segments' contacts
    // left), but a ball that two segments reach is always shared, and
    // the segments keep covering the store.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let n_balls = 4 * BATCH / 8 + 1;
    // Two lanes: ball-ball contacts, and facet contacts of the same balls.
    let mut lanes = [ContactStore::new(1), ContactStore::new(1)];
    let push = |lanes: &mut [ContactStore; 2], rng: &mut rand_chacha::ChaCha8Rng| {
        let a = Piece::ball(rng.random_range(0..n_balls as u32));
        if rng.random_bool(0.2) {
            lanes[1].push(0, a, Piece::facet(1), 0, 1.0);
        } else {
            let b = Piece::ball(rng.random_range(0..n_balls as u32));
            lanes[0].push(0, a, b, 0, 1.0);
        }
    };
    // At first ball k is met only around slot 8 k (and slot 2 k of the
    // facet lane), so the first segments of the balls differ; contacts
    // added later have any balls and move into early slots as others are
    // removed.
    for slot in 0..4 * BATCH as u32 {
        lanes[0].push(0, Piece::ball(slot / 8), Piece::ball(slot / 8 + 1), 0, 1.0);
    }
    for slot in 0..BATCH as u32 {
        lanes[1].push(0, Piece::ball(slot / 2), Piece::facet(0), 0, 1.0);
    }
    let mut plan = SegmentPlan::default();
    plan.plan(&[&lanes[0], &lanes[1]], 3, Targets::balls(n_balls), 0);
    assert_eq!(
        plan.only,
        reach_lanes(&[&lanes[0], &lanes[1]], &plan.bounds, n_balls)
    );
    for st in &mut lanes {
        st.arrived.clear();
    }
    let (mut direct, mut became_shared) = (false, false);
    for round in 0..40 {
        for _ in 0..rng.random_range(0..300) {
            push(&mut lanes, &mut rng);
        }
        for _ in 0..rng.random_range(0..400) {
            let st = &mut lanes[rng.random_range(0..2)];
            if !st.is_empty() {
                let slot = rng.random_range(0..st.len());
                st.swap_remove(slot);
            }
        }
        plan.update(&[&lanes[0], &lanes[1]]);
        for (st, b) in lanes.iter().zip(&plan.bounds) {
            assert!(b[0] == 0 && b[3] == st.len().div_ceil(BATCH));
            assert!(b.windows(2).all(|w| w[0] <= w[1]), "round {round}: {b:?}");
        }
        let want = reach_lanes(&[&lanes[0], &lanes[1]], &plan.bounds, n_balls);
        for st in &mut lanes {
            st.arrived.clear();
        }
        for (l, (want, only)) in want.iter().zip(&plan.only).enumerate() {
            for (ball, (&want, &only)) in want.iter().zip(only).enumerate() {
                match want {
                    UNTOUCHED => {}
                    SHARED => assert_eq!(only, SHARED, "round {round}: lane {l} ball {ball}"),
                    k => assert!(
                        only == k || only == SHARED,
                        "round {round}: lane {l} ball {ball} in {k} only, marked {only}"
                    ),
                }
                direct |= want < SHARED && only == want;
                became_shared |= want < SHARED && only == SHARED;
            }
        }
    }
    assert!(direct && became_shared);
}

#[test]
fn segments_are_cut_to_equal_work() {
    // Eight chunks: the first four busy, the last four released.
    let mut st = ContactStore::new(1);
    for k in 0..8 * BATCH {
        let slot = st.push(
            k as u64,
            Piece::ball((k % 100) as u32),
            Piece::ball((k % 100 + 1) as u32),
            0,
            1.0,
        );
        if k >= 4 * BATCH {
            st.setup[slot].flags |= RELEASED;
        }
    }
    let mut plan = SegmentPlan::default();
    // Work 4 x 16 + 4 x 1 chunk-units: the cut nearest half of it
    // (34) is after two chunks (32 before it, 48 after three), and the
    // quarters (17, 34, 51) after one, two and three.
    plan.plan(&[&st], 2, Targets::balls(101), 0);
    assert_eq!(plan.bounds[0], [0, 2, 8]);
    plan.plan(&[&st], 4, Targets::balls(101), 0);
    assert_eq!(plan.bounds[0], [0, 1, 2, 3, 8]);
    // As many segments as chunks: one chunk each, whatever the work.
    plan.plan(&[&st], 8, Targets::balls(101), 0);
    assert_eq!(plan.bounds[0], (0..=8).collect::<Vec<_>>());
    // Equal chunks, equal segments.
    for s in &mut st.setup {
        s.flags &= !RELEASED;
    }
    plan.plan(&[&st], 4, Targets::balls(101), 0);
    assert_eq!(plan.bounds[0], [0, 2, 4, 6, 8]);
    // Ball 0 is end1 of slot 0 and of slots 100, 200, ... in later
    // segments.
    assert_eq!(plan.only[0][0], SHARED);
    // Every ball's segment, against a walk through the slots: ball
    // 300 + s / 9 is end1 of slot s, and ball 17 higher end2 of every
    // odd slot (a facet of the even ones), so every segment has balls
    // of its own, some balls are shared, and balls below 300 or above
    // 658 are touched by none.
    let mut st = ContactStore::new(1);
    let n_balls = 1000;
    for slot in 0..3 * BATCH {
        let k = (slot / 9 + 300) as u32 % 900;
        let other = if slot % 2 == 0 {
            Piece::facet(3)
        } else {
            Piece::ball((k + 17) % 900)
        };
        st.push(slot as u64, Piece::ball(k), other, 0, 1.0);
    }
    for n_seg in [1, 2, 3] {
        plan.plan(&[&st], n_seg, Targets::balls(n_balls), 0);
        let want = reach(&st, &plan.bounds[0], n_balls);
        assert_eq!(plan.only[0], want, "{n_seg} segments");
        assert!((0..n_seg as u8).all(|k| want.contains(&k)) && want.contains(&UNTOUCHED));
        assert_eq!(want.contains(&SHARED), n_seg > 1);
    }
}

#[test]
fn regrouped_contacts_give_the_same_forces_and_bits_on_any_thread_count() {
    let (plain, _) = sums_on(1, 24, 40, false);
    let (regrouped, _) = sums_on(1, 24, 40, true);
    // Regrouping changes the order of the sums and nothing else: the
    // forces agree to rounding, step by step.
    let mut moved = false;
    for (p, r) in plain.iter().zip(&regrouped) {
        let (p, r) = (
            p.iter().map(|&b| f64::from_bits(b)),
            r.iter().map(|&b| f64::from_bits(b)),
        );
        let pr: Vec<(f64, f64)> = p.zip(r).collect();
        let scale = pr.iter().fold(0.0f64, |m, &(a, _)| m.max(a.abs()));
        let worst = pr.iter().fold(0.0f64, |m, &(a, b)| m.max((a - b).abs()));
        assert!(worst <= 1e-9 * scale, "{worst:e} of {scale:e}");
        moved |= worst > 0.0;
    }
    assert!(moved, "the regrouping changed no sum");
    for threads in [2, 3] {
        let (parallel, _) = sums_on(threads, 24, 40, true);
        assert!(regrouped == parallel, "{threads} threads changed the sums");
    }
}

#[test]
fn a_regrouping_leaves_the_pairs_in_contact_as_they_were() {
    let mut sim = packed(12);
    for _ in 0..20 {
        sim.cycle().unwrap();
    }
    let pairs = |sim: &Simulation| {
        let st = sim.models[0].store(PairKind::BallBall);
        let mut v: Vec<(u64, Piece, Piece, Vec<u64>)> = (0..st.len())
            .map(|k| {
                let state = st.state_of(k).iter().map(|x| x.to_bits()).collect();
                (st.id[k], st.end1[k], st.end2[k], state)
            })
            .collect();
        v.sort();
        v
    };
    let before = pairs(&sim);
    let order_before = sim.models[0].store(PairKind::BallBall).id.clone();
    sim.regroup_contacts(true);
    assert_eq!(pairs(&sim), before);
    assert_ne!(
        sim.models[0].store(PairKind::BallBall).id,
        order_before,
        "nothing was regrouped"
    );
    // Detection still knows every pair: no contact is created twice.
    for _ in 0..20 {
        sim.cycle().unwrap();
    }
    let st = sim.models[0].store(PairKind::BallBall);
    let mut keys: Vec<u64> = (0..st.len())
        .map(|k| pair_key(st.end1[k], st.end2[k]))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), st.len());
    assert_eq!(sim.contact_pairs.len(), st.len());
}

/// Per step, the bits of every ball-ball contact's plane, flags and
/// model state and of every ball's position, velocity and force sums,
/// and how many ball-ball contacts were released and how many of those
/// touch again in the next step, over `steps` steps of a shaken pack
/// whose contact pass runs the loop `look_ahead` chooses.
fn shaken_run(look_ahead: Option<bool>, steps: usize) -> (Vec<Vec<u64>>, usize, usize) {
    let mut sim = unprepared(10, linear_entry());
    // Every ball gets a velocity of up to 0.1 m/s (a fixed scramble of
    // its index): over the run the balls move by more than the overlaps,
    // so contacts open, are released, and close again.
    {
        let mut b = crate::body::BallsMut::of(&sim.world);
        for (i, v) in b.vel.iter_mut().enumerate() {
            let c = |k: usize| ((i * 7919 + k * 104_729) % 2001) as f64 / 1000.0 - 1.0;
            *v = Vec3::new(c(1), c(2), c(3)) * 0.1;
        }
    }
    sim.prepare().unwrap();
    sim.look_ahead = look_ahead;
    let (mut bits, mut released, mut closed) = (Vec::new(), 0, 0);
    let mut was_released = rustc_hash::FxHashSet::default();
    for _ in 0..steps {
        sim.cycle().unwrap();
        let st = sim.models[0].store(PairKind::BallBall);
        let now: rustc_hash::FxHashSet<u64> = (0..st.len())
            .filter(|&k| st.setup[k].flags & RELEASED != 0)
            .map(|k| st.id[k])
            .collect();
        released += now.len();
        closed += (0..st.len())
            .filter(|&k| was_released.contains(&st.id[k]) && st.plane[k].gap < 0.0)
            .count();
        was_released = now;
        // The contacts as the pass left them: planes, flags, model state.
        let mut v: Vec<u64> = st.id.clone();
        for (p, setup) in st.plane.iter().zip(&st.setup) {
            for x in [p.xc, p.n, p.s, p.t] {
                v.extend(x.to_array().map(f64::to_bits));
            }
            v.extend([p.gap.to_bits(), u64::from(setup.flags)]);
        }
        v.extend(st.state.iter().map(|x| x.to_bits()));
        let b = sim.balls();
        for i in 0..b.len() {
            for x in [b.pos[i], b.vel[i], b.force[i], b.moment[i]] {
                v.extend(x.to_array().map(f64::to_bits));
            }
        }
        bits.push(v);
    }
    (bits, released, closed)
}

#[test]
fn the_pass_with_look_ahead_gives_the_bits_of_the_pass_without() {
    let (without, released, closed) = shaken_run(Some(false), 150);
    // The run has what the look-ahead treats apart: released contacts,
    // and released contacts that touch again.
    assert!(
        released > 0 && closed > 0,
        "{released} released, {closed} closed"
    );
    let (with, ..) = shaken_run(Some(true), 150);
    assert!(with == without, "the look-ahead changed the run");
    let (chosen, ..) = shaken_run(None, 150);
    assert!(
        chosen == without,
        "the loop chosen by chunk changed the run"
    );
}
