//! Property test: random valid configs, written as TOML text, parse and
//! give back every number bit for bit.

use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;
use talus_config::{BallKind, Duration, Machine};
use talus_core::generate::RadiusDist;
use talus_core::Timestep;

/// Rust's `{:?}` for f64 is the shortest text that parses back to the same
/// bits, and always reads as a TOML float.
fn f(x: f64) -> String {
    format!("{x:?}")
}

fn v3(v: [f64; 3]) -> String {
    format!("[{}, {}, {}]", f(v[0]), f(v[1]), f(v[2]))
}

fn bits(v: [f64; 3]) -> [u64; 3] {
    v.map(f64::to_bits)
}

#[derive(Debug, Clone)]
enum DurationGen {
    Steps(i64),
    Time(f64),
}

#[derive(Debug, Clone)]
enum DtGen {
    Absent,
    Auto(Option<f64>),
    Fixed(f64),
}

#[derive(Debug, Clone)]
struct RandomGen {
    count: i64,
    radius: (f64, Option<f64>),
    min: [f64; 3],
    extent: [f64; 3],
    damping: f64,
    velocity: [f64; 3],
    seed: Option<i64>,
}

#[derive(Debug, Clone)]
struct WallGen {
    min: [f64; 3],
    extent: [f64; 3],
    divisions: i64,
    cutoff: f64,
    velocity: [f64; 3],
}

#[derive(Debug, Clone)]
struct ConfigGen {
    duration: DurationGen,
    dt: DtGen,
    gravity: [f64; 3],
    threads: i64,
    seed: i64,
    cell_tolerance: Option<f64>,
    balls: Vec<RandomGen>,
    walls: Vec<WallGen>,
    properties: Vec<f64>,
    output: [i64; 3],
}

fn any_finite() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![-1e3..1e3f64, prop::num::f64::NORMAL, Just(0.0), Just(-0.0),]
}

fn vec3(s: impl Strategy<Value = f64> + Clone) -> impl Strategy<Value = [f64; 3]> {
    [s.clone(), s.clone(), s]
}

fn positive() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![1e-9..1e3f64, 1e-300..1e300f64]
}

fn random_gen() -> impl Strategy<Value = RandomGen> {
    (
        1..1_000_000i64,
        (1e-6..1.0f64, prop::option::of(0.0..1.0f64)),
        vec3(-1e3..1e3f64),
        vec3(1e-3..1e3f64),
        0.0..1.0f64,
        vec3(any_finite()),
        prop::option::of(0..i64::MAX),
    )
        .prop_map(
            |(count, (r, extra), min, extent, damping, velocity, seed)| {
                // A uniform range [r, r + extra * r].
                let radius = (r, extra.map(|e| r + e * r));
                // A region the balls can fill: a few diameters wide at
                // least, and no more balls than half the densest packing.
                let extent = extent.map(|e| e.max(8.0 * radius.1.unwrap_or(r)));
                let ball = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
                let room = 0.37 * extent.iter().product::<f64>() / ball;
                RandomGen {
                    count: count.min(room as i64).max(1),
                    radius,
                    min,
                    extent,
                    damping,
                    velocity,
                    seed,
                }
            },
        )
}

fn wall_gen() -> impl Strategy<Value = WallGen> {
    (
        vec3(-1e3..1e3f64),
        vec3(1e-3..1e3f64),
        1..4i64,
        0.0..=90.0f64,
        vec3(any_finite()),
    )
        .prop_map(|(min, extent, divisions, cutoff, velocity)| WallGen {
            min,
            extent,
            divisions,
            cutoff,
            velocity,
        })
}

fn config_gen() -> impl Strategy<Value = ConfigGen> {
    (
        prop_oneof![
            (1..i64::MAX).prop_map(DurationGen::Steps),
            positive().prop_map(DurationGen::Time),
        ],
        prop_oneof![
            Just(DtGen::Absent),
            prop::option::of(prop_oneof![1e-6..=1.0f64, Just(1.0)]).prop_map(DtGen::Auto),
            positive().prop_map(DtGen::Fixed),
        ],
        vec3(any_finite()),
        0..256i64,
        0..i64::MAX,
        prop::option::of(positive()),
        prop::collection::vec(random_gen(), 0..3),
        prop::collection::vec(wall_gen(), 0..2),
        prop::collection::vec(any_finite(), 0..4),
        [0..100_000i64, 0..100_000i64, 0..100_000i64],
    )
        .prop_map(
            |(
                duration,
                dt,
                gravity,
                threads,
                seed,
                cell_tolerance,
                balls,
                walls,
                properties,
                output,
            )| {
                ConfigGen {
                    duration,
                    dt,
                    gravity,
                    threads,
                    seed,
                    cell_tolerance,
                    balls,
                    walls,
                    properties,
                    output,
                }
            },
        )
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn to_toml(g: &ConfigGen) -> String {
    let mut s = String::from("[run]\n");
    match g.duration {
        DurationGen::Steps(n) => writeln!(s, "steps = {n}").unwrap(),
        DurationGen::Time(t) => writeln!(s, "time = {}", f(t)).unwrap(),
    }
    match g.dt {
        DtGen::Absent => {}
        DtGen::Auto(safety) => {
            s.push_str("dt = \"auto\"\n");
            if let Some(x) = safety {
                writeln!(s, "safety = {}", f(x)).unwrap();
            }
        }
        DtGen::Fixed(x) => writeln!(s, "dt = {}", f(x)).unwrap(),
    }
    writeln!(s, "gravity = {}", v3(g.gravity)).unwrap();
    writeln!(s, "threads = {}\nseed = {}", g.threads, g.seed).unwrap();
    if let Some(c) = g.cell_tolerance {
        writeln!(s, "cell_tolerance = {}", f(c)).unwrap();
    }
    if !g.properties.is_empty() {
        s.push_str(
            "\n[[models]]\nmodel = \"linear\"\ngroups = [\"grain\", \"*\"]\nproperties = { ",
        );
        let props: Vec<String> = g
            .properties
            .iter()
            .enumerate()
            .map(|(i, p)| format!("p{i} = {}", f(*p)))
            .collect();
        s.push_str(&props.join(", "));
        s.push_str(" }\n");
    }
    for b in &g.balls {
        s.push_str("\n[[balls]]\nkind = \"random\"\ngroup = \"grain\"\ndensity = 2500.0\n");
        writeln!(s, "count = {}", b.count).unwrap();
        match b.radius {
            (r, None) => writeln!(s, "radius = {}", f(r)).unwrap(),
            (lo, Some(hi)) => writeln!(s, "radius = [{}, {}]", f(lo), f(hi)).unwrap(),
        }
        writeln!(
            s,
            "region = {{ min = {}, max = {} }}",
            v3(b.min),
            v3(add(b.min, b.extent))
        )
        .unwrap();
        writeln!(
            s,
            "damping = {}\nvelocity = {}",
            f(b.damping),
            v3(b.velocity)
        )
        .unwrap();
        if let Some(seed) = b.seed {
            writeln!(s, "seed = {seed}").unwrap();
        }
    }
    for (i, w) in g.walls.iter().enumerate() {
        writeln!(s, "\n[[walls]]\nname = \"w{i}\"\nkind = \"box\"").unwrap();
        writeln!(s, "min = {}\nmax = {}", v3(w.min), v3(add(w.min, w.extent))).unwrap();
        writeln!(
            s,
            "divisions = {}\ncutoff_angle = {}",
            w.divisions,
            f(w.cutoff)
        )
        .unwrap();
        writeln!(s, "[walls.motion]\nvelocity = {}", v3(w.velocity)).unwrap();
    }
    writeln!(
        s,
        "\n[output]\ncontacts = {}\nbodies = {}\nwalls = {}",
        g.output[0], g.output[1], g.output[2]
    )
    .unwrap();
    s
}

proptest! {
    #[test]
    fn valid_configs_round_trip_numbers_exactly(g in config_gen()) {
        let text = to_toml(&g);
        // A machine that holds whatever the generator makes.
        let machine = Machine { memory: 1 << 50, memory_source: "test", cpus: 64 };
        let cfg = talus_config::parse_str_on(&text, Path::new("gen.toml"), machine)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;

        match (g.duration, cfg.run.duration) {
            (DurationGen::Steps(a), Duration::Steps(b)) => prop_assert_eq!(a as u64, b),
            (DurationGen::Time(a), Duration::Time(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
        }
        match (g.dt, cfg.run.dt) {
            (DtGen::Absent, Timestep::Auto { safety }) => prop_assert_eq!(safety, 0.8),
            (DtGen::Auto(a), Timestep::Auto { safety }) => {
                prop_assert_eq!(a.unwrap_or(0.8).to_bits(), safety.to_bits())
            }
            (DtGen::Fixed(a), Timestep::Fixed(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
        }
        prop_assert_eq!(bits(g.gravity), bits(cfg.run.gravity));
        prop_assert_eq!(g.threads as usize, cfg.run.threads);
        prop_assert_eq!(g.seed as u64, cfg.run.seed);
        prop_assert_eq!(g.cell_tolerance.map(f64::to_bits), cfg.run.cell_tolerance.map(f64::to_bits));

        if g.properties.is_empty() {
            prop_assert!(cfg.models.is_empty());
        } else {
            let props = &cfg.models[0].properties;
            prop_assert_eq!(props.len(), g.properties.len());
            for (i, p) in g.properties.iter().enumerate() {
                let name = format!("p{i}");
                let got = props.iter().find(|q| q.0 == name).expect("property kept");
                prop_assert_eq!(p.to_bits(), got.1.to_bits());
                prop_assert!(got.2.line > 1);
            }
        }

        prop_assert_eq!(g.balls.len(), cfg.balls.len());
        for (b, src) in g.balls.iter().zip(&cfg.balls) {
            prop_assert_eq!(b.damping.to_bits(), src.damping.to_bits());
            prop_assert_eq!(bits(b.velocity), bits(src.velocity));
            let BallKind::Random { count, radius, region, seed, max_attempts } = src.kind.clone() else {
                return Err(TestCaseError::fail("kind"));
            };
            prop_assert_eq!(b.count as usize, count);
            prop_assert_eq!(b.seed.map_or(g.seed as u64, |s| s as u64), seed);
            prop_assert_eq!(max_attempts, 1000);
            match (b.radius, radius) {
                ((r, None), RadiusDist::Fixed(x)) => prop_assert_eq!(r.to_bits(), x.to_bits()),
                ((lo, Some(hi)), RadiusDist::Uniform(a, c)) => {
                    prop_assert_eq!(lo.to_bits(), a.to_bits());
                    prop_assert_eq!(hi.to_bits(), c.to_bits());
                }
                (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
            }
            prop_assert_eq!(bits(b.min), bits(region.min.to_array()));
            prop_assert_eq!(bits(add(b.min, b.extent)), bits(region.max.to_array()));
        }

        prop_assert_eq!(g.walls.len(), cfg.walls.len());
        for (w, wall) in g.walls.iter().zip(&cfg.walls) {
            prop_assert_eq!(w.cutoff.to_bits(), wall.cutoff_angle_deg.to_bits());
            prop_assert_eq!(wall.mesh.triangles.len() as i64, 12 * w.divisions * w.divisions);
            prop_assert_eq!(bits(w.velocity), bits(wall.motion.unwrap().velocity.to_array()));
            let max = add(w.min, w.extent);
            for v in &wall.mesh.vertices {
                for axis in 0..3 {
                    prop_assert!(v[axis] >= w.min[axis] && v[axis] <= max[axis]);
                }
            }
            prop_assert!(wall.mesh.vertices.iter().any(|v| bits(*v) == bits(w.min)));
            prop_assert!(wall.mesh.vertices.iter().any(|v| bits(*v) == bits(max)));
        }

        prop_assert_eq!(cfg.output.contacts, g.output[0] as u64);
        prop_assert_eq!(cfg.output.bodies, g.output[1] as u64);
        prop_assert_eq!(cfg.output.walls, g.output[2] as u64);
        prop_assert_eq!(cfg.text, text);
    }
}
