//! Inputs weighed before anything is made or read: generator sizes and
//! memory, threads, coordinates, masses, shape lengths, box divisions,
//! and data files that are not regular files.
//! Each case checks the `file:line:col` and the cause the message names.

mod common;

use std::path::Path;
use std::time::Instant;

use common::*;
use talus_config::{ErrorKind, Machine};

/// A machine with `gb` GB of memory and 2 CPUs, the same whatever runs
/// the tests.
fn machine(gb: f64) -> Machine {
    Machine {
        memory: (gb * 1e9) as u64,
        memory_source: "the test",
        cpus: 2,
    }
}

fn parse_on(text: &str, gb: f64) -> Result<talus_config::RunConfig, talus_config::ConfigError> {
    talus_config::parse_str_on(text, Path::new(ORIGIN), machine(gb))
}

fn err_on(text: &str, gb: f64) -> talus_config::ConfigError {
    match parse_on(text, gb) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

fn lattice(radius: &str, max: &str) -> String {
    format!(
        "{RUN}[[balls]]\nkind = \"lattice\"\nradius = {radius}\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [{max}, {max}, {max}] }}\n"
    )
}

#[test]
fn a_lattice_is_counted_before_it_is_made() {
    // A huge region: 1.25e35 balls (this panicked with "capacity
    // overflow" when the engine made them).
    let text = lattice("0.001", "1e9");
    let e = err_on(&text, 16.0);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(
        &e,
        &text,
        "{ min",
        &[
            "[[balls]] #1 makes 1.250e35 balls",
            "spacings of 0.002 m",
            "more than the 16.0 GB this machine has available (from the test)",
        ],
    );
    // A tiny radius in a 1 m cube: 1.25e17 balls (this aborted trying to
    // allocate 3e18 bytes).
    let text = lattice("1e-6", "1");
    let e = err_on(&text, 16.0);
    assert_at(&e, &text, "{ min", &["makes 1.250e17 balls", "287.5 EB"]);
}

#[test]
fn memory_is_estimated_per_body_and_refused_with_the_total() {
    // 100^3 balls at 2.3 kB each with their contacts: 2.3 GB.
    let text = lattice("0.005", "1");
    assert!(parse_on(&text, 4.0).is_ok());
    let e = err_on(&text, 2.0);
    assert_at(
        &e,
        &text,
        "{ min",
        &[
            "makes 1000000 balls",
            "about 2.3 kB each",
            "about 2.3 GB",
            "2.0 GB",
        ],
    );
    // Two tables: the second is refused, and the message says what the
    // first already needs.
    let second = "[[balls]]\nkind = \"lattice\"\nradius = 0.005\ndensity = 2500\nregion = { min = [2, 0, 0], max = [3, 0.5, 1] }\n";
    let text = format!("{text}{second}");
    let e = err_on(&text, 3.0);
    assert_at(
        &e,
        &text,
        "{ min = [2",
        &[
            "[[balls]] #2 makes 500000 balls",
            "about 3.5 GB",
            "1.1 GB for these",
            "2.3 GB for what comes before them",
        ],
    );
}

#[test]
fn random_fills_that_no_packing_holds_are_refused() {
    // count = 1e12 was never refused: the engine tried to place them.
    let text = format!(
        "{RUN}[[balls]]\nkind = \"random\"\ncount = 1e12\nradius = 0.001\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [1, 1, 1] }}\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "1e12",
        &[
            "1000000000000 balls of radius 0.001 m fill 4189 m^3",
            "the region holds 1 m^3",
            "74 %",
        ],
    );
    // Within the densest packing, a large count is weighed as memory.
    let text = text
        .replace("count = 1e12", "count = 1e8")
        .replace("radius = 0.001", "radius = 1e-5");
    let e = err_on(&text, 16.0);
    assert_at(&e, &text, "1e8", &["makes 100000000 balls", "230.0 GB"]);
}

const SHAPE: &str = "[[shapes]]\nname = \"c\"\nkind = \"box\"\nsize = [1e-3, 1e-3, 1e-3]\n";

#[test]
fn block_fills_are_counted_and_packed_too() {
    let text = format!(
        "{RUN}{SHAPE}[[blocks]]\nkind = \"lattice\"\nshape = \"c\"\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [1e3, 1e3, 1e3] }}\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "{ min",
        &["[[blocks]] #1 makes 1.000e18 blocks", "6.4 kB each"],
    );
    let text = format!(
        "{RUN}{SHAPE}[[blocks]]\nkind = \"random\"\ncount = 1e12\nshape = \"c\"\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [1, 1, 1] }}\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "1e12",
        &[
            "1000000000000 blocks (bounding spheres) of radius 8.66e-4 m",
            "74 %",
        ],
    );
}

#[test]
fn threads_are_bounded_by_the_cpus() {
    let text = "[run]\nsteps = 1\nthreads = 100000\n";
    let e = err_on(text, 16.0);
    assert_at(
        &e,
        text,
        "100000",
        &[
            "'threads' in [run] is 100000",
            "2 thread(s) at once",
            "at most 4 per CPU (8)",
        ],
    );
    let ok = parse_on(&text.replace("100000", "8"), 16.0).unwrap();
    assert_eq!(ok.run.threads, 8);
}

#[test]
fn divisions_are_bounded_before_the_box_is_made() {
    let text = format!(
        "{RUN}[[walls]]\nname = \"box\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\ndivisions = 1000\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "1000",
        &[
            "'divisions' in [[walls]] #1 must be at most 256",
            "12000000 triangles",
        ],
    );
    // What is allowed is still weighed: 256 divisions on a machine of 0.1 GB.
    let text = text.replace("1000", "256");
    let e = err_on(&text, 0.1);
    assert_at(&e, &text, "256", &["[[walls]] #1 makes 786432 triangles"]);
    assert_eq!(
        parse_on(&text, 16.0).unwrap().walls[0].mesh.triangles.len(),
        786432
    );
}

#[test]
fn a_subnormal_radius_names_the_zero_mass() {
    let text = format!(
        "{RUN}[[balls]]\nkind = \"list\"\nradius = 1e-320\ndensity = 2500\nballs = [{{ pos = [0, 0, 0] }}]\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "1e-320",
        &[
            "a ball of radius 1e-320 m and density 2500 kg/m^3",
            "its mass is zero in double precision",
        ],
    );
    // The moment of inertia underflows first (r^5), and huge balls overflow.
    let e = err_on(&text.replace("1e-320", "1e-70"), 16.0);
    assert!(e.to_string().contains("moment of inertia is zero"), "{e}");
    let e = err_on(&text.replace("1e-320", "1e80"), 16.0);
    assert!(e.to_string().contains("overflows"), "{e}");
    // Per row too, at the rows.
    let rows = text.replace("radius = 1e-320\n", "").replace(
        "{ pos = [0, 0, 0] }",
        "{ pos = [0, 0, 0], radius = 1e-320 }",
    );
    let e = err_on(&rows, 16.0);
    assert_at(&e, &rows, "[{ pos", &["radius 1e-320 m", "mass is zero"]);
}

#[test]
fn coordinates_stay_within_bounds() {
    let text = format!(
        "{RUN}[[balls]]\nkind = \"list\"\nradius = 0.1\ndensity = 2500\nballs = [{{ pos = [0, 3e15, 0] }}]\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "[0, 3e15",
        &[
            "'pos' of row #1 of 'balls' in [[balls]] #1 lies 3e15 m from the origin",
            "within 1e12 m",
        ],
    );
    let text = format!(
        "{RUN}[[walls]]\nname = \"w\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1e300]\n"
    );
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "[1, 1, 1e300]",
        &["'max' of [[walls]] #1 lies 1e300 m"],
    );
}

#[test]
fn a_mesh_scaled_out_of_bounds_names_the_scale() {
    let dir = TempDir::new("scaled");
    dir.write("cube.obj", cube_obj());
    let text = format!(
        "{RUN}[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"cube.obj\"\nscale = 1e300\n"
    );
    let origin = dir.path().join("x.toml");
    let e = talus_config::parse_str_on(&text, &origin, machine(16.0)).unwrap_err();
    assert_error(
        &e,
        &origin,
        pos_of(&text, "1e300"),
        &[
            "scaled by 'scale' = 1e300, a vertex of mesh file 'cube.obj' in [[walls]] #1 lies 1e300 m from the origin",
        ],
    );
    assert!(!e.to_string().contains("no triangles"), "{e}");
    // A block shape from a mesh too.
    let text = format!(
        "{RUN}[[shapes]]\nname = \"s\"\nkind = \"mesh\"\npath = \"cube.obj\"\nscale = 1e300\n"
    );
    let e = talus_config::parse_str_on(&text, &origin, machine(16.0)).unwrap_err();
    assert_error(
        &e,
        &origin,
        pos_of(&text, "1e300"),
        &["scaled by 'scale' = 1e300, object 'cube'", "lies 1e300 m"],
    );
}

#[test]
fn shape_lengths_stay_where_double_precision_holds_their_moments() {
    let random = |axes: &str, vertices: &str, extra: &str| {
        format!("{RUN}[[shapes]]\nname = \"r\"\nkind = \"random\"\nvertices = {vertices}\naxes = {axes}\n{extra}")
    };
    let text = random("[1e-100, 1e-100, 1e-100]", "[10, 20]", "");
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "[1e-100",
        &["semi-axis x of 'axes' in [[shapes]] #1 must be between 1e-9 m and 1e12 m, got 1e-100 m", "fifth power"],
    );
    let text = format!("{RUN}[[shapes]]\nname = \"b\"\nkind = \"box\"\nsize = [1, 1e200, 1]\n");
    let e = err_on(&text, 16.0);
    assert_at(&e, &text, "[1, 1e200", &["edge y of 'size'", "got 1e200 m"]);
    // A vertex list has no length key: its points are weighed.
    let points = |a: &str| {
        format!(
            "{RUN}[[shapes]]\nname = \"v\"\nkind = \"vertices\"\npoints = [[0, 0, 0], [{a}, 0, 0], [0, {a}, 0], [0, 0, {a}]]\n"
        )
    };
    let text = points("1e70");
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "[[0, 0, 0]",
        &["'points' in [[shapes]] #1 lies 1e70 m"],
    );
    let text = points("1e-70");
    let e = err_on(&text, 16.0);
    assert_at(
        &e,
        &text,
        "[[0, 0, 0]",
        &[
            "'points' in [[shapes]] #1 is 1e-70 m across",
            "at least 1e-9 m",
        ],
    );
}

#[test]
fn random_shapes_that_cannot_be_drawn_stop_quickly() {
    // 1000 corners on a rough ellipsoid: the hull keeps too few of the
    // points drawn (this ran for hours).
    let text = format!(
        "{RUN}[[shapes]]\nname = \"r\"\nkind = \"random\"\nvertices = [1000, 1000]\naxes = [0.01, 0.01, 0.01]\nroughness = 0.5\n"
    );
    let start = Instant::now();
    let e = err_on(&text, 16.0);
    // A hang guard, not a speed test: the draw gives up after a fixed
    // number of points (about 1 s here).
    let took = start.elapsed().as_secs_f64();
    assert!(took < 120.0, "took {took} s");
    assert_at(
        &e,
        &text,
        "[1000, 1000]",
        &[
            "no random shape with 1000 to 1000 corners found",
            "lower 'vertices' or 'roughness'",
        ],
    );
}

#[cfg(unix)]
#[test]
fn data_files_must_be_regular_files() {
    let dir = TempDir::new("fifo");
    let fifo = dir.path().join("pipe.stl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(dir.path().join("folder.obj")).unwrap();
    let origin = dir.path().join("x.toml");
    let cases = [
        ("[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"pipe.stl\"\n", "a FIFO (named pipe)"),
        ("[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"folder.obj\"\n", "a folder"),
        ("[[shapes]]\nname = \"s\"\nkind = \"mesh\"\npath = \"pipe.stl\"\n", "a FIFO"),
        (
            "[[balls]]\nkind = \"file\"\nformat = \"xyz\"\nradius = 0.1\ndensity = 1\npath = \"pipe.stl\"\n",
            "a FIFO",
        ),
        (
            "[[balls]]\nkind = \"list\"\nradius = 0.1\ndensity = 1\nballs = [{ pos = [0, 0, 0] }]\n[[walls]]\nname = \"w\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n[walls.deform]\nvertex_velocities = \"pipe.stl\"\n",
            "a FIFO",
        ),
        ("[[plugins]]\npath = \"pipe.stl\"\n", "a FIFO"),
    ];
    for (table, kind) in cases {
        let text = format!("{RUN}{table}");
        // Opening the FIFO would block for good: a hang fails the test
        // by the harness's timeout rather than passing.
        let e = talus_config::parse_str_on(&text, &origin, machine(16.0)).unwrap_err();
        let written = if text.contains("folder.obj") {
            "\"folder.obj\""
        } else {
            "\"pipe.stl\""
        };
        assert_error(&e, &origin, pos_of(&text, written), &[kind]);
    }
}

#[test]
fn a_data_file_larger_than_memory_is_not_read() {
    let dir = TempDir::new("large");
    dir.write("cube.obj", cube_obj());
    let text = format!("{RUN}[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"cube.obj\"\n");
    let origin = dir.path().join("x.toml");
    // Below the run's own base: no room for the file at all.
    let e = talus_config::parse_str_on(&text, &origin, machine(1e-6)).unwrap_err();
    assert_error(
        &e,
        &origin,
        pos_of(&text, "\"cube.obj\""),
        &[
            "mesh file 'cube.obj' in [[walls]] #1 holds",
            "bytes; reading it needs more than the 0 bytes of memory left",
        ],
    );
}
