//! One test per error the config can raise: each checks the kind, the
//! `file:line:col` prefix and the key words of the message.

mod common;

use std::path::Path;

use common::*;
use talus_config::{error_at, ErrorKind, Location};

const BOX_WALL: &str =
    "[[walls]]\nname = \"box\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n";

fn random_balls(extra: &str) -> String {
    format!(
        "{RUN}[[balls]]\nkind = \"random\"\ncount = 10\nradius = 0.001\ndensity = 2500.0\n\
         region = {{ min = [0, 0, 0], max = [0.1, 0.1, 0.1] }}\n{extra}"
    )
}

#[test]
fn syntax_error() {
    let text = "[run]\nsteps = = 3\n";
    let e = parse_err(text);
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!(e.location().unwrap().line, 2);
    assert!(e.to_string().starts_with("configs/test.toml:2:"), "{e}");
    assert!(e.to_string().contains("TOML syntax error"), "{e}");
}

#[test]
fn unknown_key_lists_allowed_keys() {
    let text = random_balls("radiuss = 2\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_at(
        &e,
        &text,
        "radiuss",
        &[
            "unknown key 'radiuss' in [[balls]] #1",
            "allowed",
            "kind, group, density, damping, velocity, spin, fix, count, radius, region, seed, max_attempts",
        ],
    );
}

#[test]
fn unknown_key_in_run_top_level_and_inline_tables() {
    let text = "[run]\nsteps = 1\nstep = 2\n";
    let e = parse_err(text);
    assert_at(
        &e,
        text,
        "step =",
        &["unknown key 'step' in [run]", "steps, time, dt, safety"],
    );

    let text = format!("foo = 1\n{RUN}");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "foo",
        &[
            "unknown key 'foo'",
            "run, plugins, models, balls, walls, shapes, blocks, clumps, bonds, cell, output",
        ],
    );

    let text = format!(
        "{RUN}[[balls]]\nkind = \"lattice\"\nradius = 1.0\ndensity = 1.0\nregion = {{ min = [0, 0, 0], mux = [9, 9, 9] }}\n"
    );
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "mux",
        &[
            "unknown key 'mux' in region of [[balls]] #1",
            "allowed: min, max",
        ],
    );

    let text = format!("{BOX_WALL}[walls.motion]\nspinn = [0, 0, 1]\n{RUN}");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "spinn",
        &[
            "unknown key 'spinn' in motion of [[walls]] #1",
            "velocity, spin, center",
        ],
    );
}

#[test]
fn key_of_another_kind_is_rejected() {
    let text = random_balls("spacing = 0.003\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_at(
        &e,
        &text,
        "0.003",
        &["'spacing'", "kind = \"random\"", "count, radius, region"],
    );

    let text = format!("{RUN}{BOX_WALL}scale = 2.0\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "2.0",
        &["'scale'", "kind = \"box\"", "min, max, open, divisions"],
    );
}

#[test]
fn wrong_type_says_what_was_expected() {
    let text = random_balls("").replace("radius = 0.001", "radius = \"big\"");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::WrongType);
    assert_at(
        &e,
        &text,
        "\"big\"",
        &[
            "'radius' in [[balls]] #1",
            "expected a number (m)",
            "string \"big\"",
        ],
    );

    let text = "[run]\nsteps = 1\ngravity = [0, \"a\", 0]\n";
    let e = parse_err(text);
    assert_at(
        &e,
        text,
        "\"a\"",
        &["'gravity' in [run]", "expected a number (m/s^2)"],
    );

    let text = "[run]\nsteps = 1\ngravity = [0, -9.81]\n";
    let e = parse_err(text);
    assert_at(
        &e,
        text,
        "[0, -9.81]",
        &["'gravity'", "3 numbers", "found 2"],
    );

    let text = "[run]\nsteps = 1.5\n";
    let e = parse_err(text);
    assert_at(
        &e,
        text,
        "1.5",
        &["'steps' in [run]", "expected an integer"],
    );

    let text = format!("{RUN}[output]\nvtk = -5\n");
    let e = parse_err(&text);
    assert_at(&e, &text, "-5", &["'vtk' in [output]", ">= 0", "got -5"]);

    let text = format!("{RUN}[output]\nvtk = 2.5\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "2.5",
        &["'vtk' in [output]", "expected an integer"],
    );

    let text = format!("{RUN}[output]\noverwrite = 1\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "1\n",
        &["'overwrite' in [output]", "expected a boolean"],
    );
}

#[test]
fn unknown_choice_lists_allowed_values() {
    let text = random_balls("").replace("\"random\"", "\"rand\"");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "\"rand\"",
        &[
            "'kind' in [[balls]] #1",
            "\"random\", \"lattice\", \"list\", \"file\"",
        ],
    );

    let text = format!("{RUN}{BOX_WALL}resolution = \"high\"\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "\"high\"",
        &["'resolution'", "\"reduced\", \"full\""],
    );
}

#[test]
fn fix_entries_must_be_degrees_of_freedom() {
    let text = random_balls("fix = [\"x\", \"w\"]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "\"w\"",
        &[
            "'fix' in [[balls]] #1",
            "\"x\", \"y\", \"z\", \"rx\", \"ry\", \"rz\"",
        ],
    );
}

#[test]
fn missing_required_key() {
    let text =
        format!("{RUN}[[balls]]\nkind = \"random\"\ncount = 5\nradius = 1.0\ndensity = 1.0\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(
        &e,
        &text,
        "[[balls]]",
        &["missing key 'region' in [[balls]] #1"],
    );

    let text = format!("{RUN}[[walls]]\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[[walls]]",
        &["missing key 'name' in [[walls]] #1"],
    );

    let text = random_balls("").replace("density = 2500.0\n", "");
    let e = parse_err(&text);
    assert_at(&e, &text, "[[balls]]", &["missing key 'density'", "kg/m^3"]);
}

#[test]
fn run_needs_exactly_one_of_steps_and_time() {
    let text = "[run]\nsteps = 10\ntime = 0.5\n";
    let e = parse_err(text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(&e, text, "0.5", &["'steps' and 'time' are both given"]);

    let text = "[run]\ngravity = [0, 0, -9.81]\n";
    let e = parse_err(text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(&e, text, "[run]", &["exactly one of 'steps'", "'time'"]);

    let text = "[output]\ncontacts = 0\n";
    let e = parse_err(text);
    assert_error(&e, Path::new(ORIGIN), (1, 1), &["missing table [run]"]);
}

#[test]
fn steps_and_time_must_be_positive() {
    let text = "[run]\nsteps = 0\n";
    assert_at(&parse_err(text), text, "0", &["'steps' in [run]", ">= 1"]);
    let text = "[run]\ntime = -1.0\n";
    assert_at(
        &parse_err(text),
        text,
        "-1.0",
        &["'time' in [run]", "> 0 (s)"],
    );
}

#[test]
fn dt_must_be_positive_or_auto() {
    let text = "[run]\nsteps = 1\ndt = 0.0\n";
    let e = parse_err(text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(&e, text, "0.0", &["'dt' in [run]", "> 0 (s)"]);

    let text = "[run]\nsteps = 1\ndt = -1e-6\n";
    assert_at(&parse_err(text), text, "-1e-6", &["'dt'"]);

    let text = "[run]\nsteps = 1\ndt = \"fast\"\n";
    assert_at(
        &parse_err(text),
        text,
        "\"fast\"",
        &["'dt' in [run]", "\"auto\" or a number (s)"],
    );
}

#[test]
fn safety_range_and_only_with_auto() {
    for bad in ["0.0", "1.5", "-0.2"] {
        let text = format!("[run]\nsteps = 1\nsafety = {bad}\n");
        let e = parse_err(&text);
        assert_at(&e, &text, bad, &["'safety' in [run]", "(0, 1]"]);
    }
    let text = "[run]\nsteps = 1\ndt = 1e-6\nsafety = 0.5\n";
    assert_at(
        &parse_err(text),
        text,
        "0.5",
        &["'safety'", "only applies with dt = \"auto\""],
    );
}

#[test]
fn other_run_ranges() {
    let text = "[run]\nsteps = 1\nthreads = -1\n";
    assert_at(&parse_err(text), text, "-1", &["'threads'"]);
    let text = "[run]\nsteps = 1\nseed = -3\n";
    assert_at(&parse_err(text), text, "-3", &["'seed'"]);
    let text = "[run]\nsteps = 1\ncell_tolerance = -0.1\n";
    assert_at(
        &parse_err(text),
        text,
        "-0.1",
        &["'cell_tolerance'", ">= 0"],
    );
    let text = "[run]\nsteps = 1\ngravity = [0, 0, nan]\n";
    assert_at(&parse_err(text), text, "nan", &["'gravity'", "NaN"]);
}

#[test]
fn blowup_limits_ranges_defaults_and_off() {
    let text = "[run]\nsteps = 1\nblowup_fraction = -0.5\n";
    assert_at(
        &parse_err(text),
        text,
        "-0.5",
        &[
            "'blowup_fraction' in [run]",
            ">= 0",
            "0 turns the check off",
        ],
    );
    for bad in ["0.5", "1.0", "-2.0"] {
        let text = format!("[run]\nsteps = 1\nblowup_energy_jump = {bad}\n");
        assert_at(
            &parse_err(&text),
            &text,
            bad,
            &["'blowup_energy_jump' in [run]", "> 1", "or 0"],
        );
    }
    let text = "[run]\nsteps = 1\nblowup_fraction = \"off\"\n";
    assert_at(
        &parse_err(text),
        text,
        "\"off\"",
        &["'blowup_fraction'", "a number"],
    );
    let limits = |text: &str| parse(text).unwrap().run.blowup;
    assert_eq!(
        limits("[run]\nsteps = 1\n"),
        talus_core::BlowUpLimits {
            fraction: Some(0.5),
            energy_jump: Some(1e6),
        }
    );
    assert_eq!(
        limits("[run]\nsteps = 1\nblowup_fraction = 0.25\nblowup_energy_jump = 1e3\n"),
        talus_core::BlowUpLimits {
            fraction: Some(0.25),
            energy_jump: Some(1e3),
        }
    );
    assert_eq!(
        limits("[run]\nsteps = 1\nblowup_fraction = 0\nblowup_energy_jump = 0\n"),
        talus_core::BlowUpLimits {
            fraction: None,
            energy_jump: None,
        }
    );
}

#[test]
fn radius_must_be_positive() {
    for bad in ["0.0", "-0.001"] {
        let text = random_balls("").replace("radius = 0.001", &format!("radius = {bad}"));
        let e = parse_err(&text);
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert_at(&e, &text, bad, &["'radius' in [[balls]] #1", "> 0 (m)"]);
    }
    let text = random_balls("").replace("radius = 0.001", "radius = [-1.0, 2.0]");
    assert_at(&parse_err(&text), &text, "[-1.0", &["rmin", "> 0"]);
}

#[test]
fn rmin_above_rmax() {
    let text = random_balls("").replace("radius = 0.001", "radius = [0.002, 0.001]");
    let e = parse_err(&text);
    assert_at(&e, &text, "[0.002", &["rmin <= rmax", "0.002", "0.001"]);

    let text = random_balls("").replace("radius = 0.001", "radius = [0.001, 0.002, 0.003]");
    assert_at(
        &parse_err(&text),
        &text,
        "[0.001",
        &["'radius'", "[rmin, rmax]"],
    );
}

#[test]
fn count_must_be_positive() {
    let text = random_balls("").replace("count = 10", "count = 0");
    let e = parse_err(&text);
    assert_at(&e, &text, "0\nradius", &["'count' in [[balls]] #1", ">= 1"]);
}

#[test]
fn region_min_below_max() {
    let text = random_balls("").replace("max = [0.1, 0.1, 0.1]", "max = [0.1, 0.0, 0.1]");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(
        &e,
        &text,
        "{ min",
        &["region of [[balls]] #1", "min must be < max", "along y"],
    );

    let text = format!("{RUN}{BOX_WALL}").replace("max = [1, 1, 1]", "max = [1, 1, -1]");
    assert_at(
        &parse_err(&text),
        &text,
        "[0, 0, 0]",
        &["box of [[walls]] #1", "along z"],
    );
}

#[test]
fn lattice_spacing_and_counts() {
    let lattice = format!(
        "{RUN}[[balls]]\nkind = \"lattice\"\nradius = 0.001\ndensity = 2500.0\nspacing = 0.0015\n\
         region = {{ min = [0, 0, 0], max = [0.01, 0.01, 0.01] }}\n"
    );
    let e = parse_err(&lattice);
    assert_at(
        &e,
        &lattice,
        "0.0015",
        &["'spacing' in [[balls]] #1", ">= 2 * radius"],
    );

    let text = lattice.replace("spacing = 0.0015\n", "counts = [10, 10, 10]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[10, 10",
        &["'counts'", "along x", "region is"],
    );

    let text = lattice.replace("spacing = 0.0015\n", "counts = [1, 1]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1, 1]",
        &["'counts'", "[nx, ny, nz]"],
    );

    let text = lattice.replace("spacing = 0.0015\n", "counts = [1, 0, 1]\n");
    assert_at(&parse_err(&text), &text, "0, 1]", &["'counts'", ">= 1"]);

    let text = lattice.replace("max = [0.01, 0.01, 0.01]", "max = [0.01, 0.001, 0.01]");
    let text = text.replace("spacing = 0.0015\n", "");
    assert_at(
        &parse_err(&text),
        &text,
        "{ min",
        &["smaller than one lattice spacing", "along y"],
    );

    let text = lattice.replace("radius = 0.001", "radius = [0.001, 0.002]");
    assert_at(
        &parse_err(&text),
        &text,
        "[0.001",
        &["single number", "kind = \"lattice\""],
    );
}

#[test]
fn list_rows_need_a_radius() {
    let text = format!(
        "{RUN}[[balls]]\nkind = \"list\"\ndensity = 1.0\nballs = [\n  {{ pos = [0, 0, 0], radius = 1.0 }},\n  {{ pos = [5, 0, 0] }},\n]\n"
    );
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_at(
        &e,
        &text,
        "{ pos = [5",
        &["row #2 of 'balls' in [[balls]] #1", "no 'radius'"],
    );

    let text = text.replace("{ pos = [5, 0, 0] }", "{ pos = [5, 0, 0], radius = -2.0 }");
    assert_at(
        &parse_err(&text),
        &text,
        "-2.0",
        &["'radius' in row #2", "> 0"],
    );

    let text =
        format!("{RUN}[[balls]]\nkind = \"list\"\ndensity = 1.0\nradius = 1.0\nballs = []\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[]",
        &["'balls' in [[balls]] #1 is empty"],
    );

    let text = format!(
        "{RUN}[[balls]]\nkind = \"list\"\ndensity = 1.0\nballs = [ {{ pos = [0, 0], radius = 1.0 }} ]\n"
    );
    assert_at(
        &parse_err(&text),
        &text,
        "[0, 0]",
        &["'pos' in balls #1 of [[balls]] #1", "3 numbers"],
    );
}

#[test]
fn damping_and_density_ranges() {
    let origin = Path::new(ORIGIN);
    let text = random_balls("damping = 1.0\n");
    assert_error(
        &parse_err(&text),
        origin,
        pos_after(&text, "damping = "),
        &["'damping'", "[0, 1)"],
    );
    let text = random_balls("").replace("density = 2500.0", "density = 0.0");
    assert_error(
        &parse_err(&text),
        origin,
        pos_after(&text, "density = "),
        &["'density'", "> 0 (kg/m^3)"],
    );
}

#[test]
fn group_names_must_not_be_empty() {
    let text = random_balls("group = \"\"\n");
    assert_at(
        &parse_err(&text),
        &text,
        "\"\"",
        &["'group' in [[balls]] #1", "empty"],
    );

    let text = random_balls("group = \"*\"\n");
    assert_at(&parse_err(&text), &text, "\"*\"", &["'group'", "wildcard"]);

    let text = format!("{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"grain\", \"\"]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "\"\"]",
        &["group names", "[[models]] #1", "empty"],
    );

    let text = format!("{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"grain\"]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[\"grain\"]",
        &["'groups' in [[models]] #1", "exactly two"],
    );
}

#[test]
fn duplicate_model_pairs() {
    let text = format!(
        "{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"grain\", \"wall\"]\n\n\
         [[models]]\nmodel = \"hertz\"\ngroups = [\"wall\", \"grain\"]\n"
    );
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::Duplicate);
    assert_at(
        &e,
        &text,
        "[\"wall\", \"grain\"]",
        &[
            "group pair (grain, wall) in [[models]] #2",
            "already has a model",
            "configs/test.toml:3:1",
        ],
    );

    // A wildcard rule next to an explicit pair is not a duplicate.
    let text = format!(
        "{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\n\
         [[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"wall\"]\n\
         [[models]]\nmodel = \"hertz\"\ngroups = [\"grain\", \"wall\"]\n"
    );
    let cfg = parse(&text).unwrap();
    assert_eq!(cfg.model_for("wall", "grain").unwrap().model, "hertz");
    assert_eq!(
        cfg.model_for("wall", "wall").unwrap().groups,
        ["*".to_owned(), "wall".to_owned()]
    );
    assert_eq!(cfg.model_for("a", "b").unwrap().groups[0], "*");
}

#[test]
fn model_property_must_be_a_number() {
    let text = format!(
        "{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"a\", \"b\"]\nproperties = {{ kn = 1e5, fric = \"high\" }}\n"
    );
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "\"high\"",
        &["'fric' in properties of [[models]] #1", "expected a number"],
    );
}

#[test]
fn duplicate_wall_names() {
    let text = format!("{RUN}{BOX_WALL}\n{BOX_WALL}");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::Duplicate);
    let second = text.rfind("name = \"box\"").unwrap() + "name = ".len();
    assert_error(
        &e,
        Path::new(ORIGIN),
        pos_at(&text, second),
        &[
            "duplicate wall name 'box'",
            "[[walls]] #2",
            "first used at configs/test.toml:4:8",
        ],
    );
}

#[test]
fn wall_ranges() {
    let text = format!("{RUN}{BOX_WALL}divisions = 0\n");
    let e = parse_err(&text);
    assert_error(
        &e,
        Path::new(ORIGIN),
        pos_after(&text, "divisions = "),
        &["'divisions' in [[walls]] #1", ">= 1"],
    );
    let text = format!("{RUN}{BOX_WALL}cutoff_angle = 95.0\n");
    assert_at(
        &parse_err(&text),
        &text,
        "95.0",
        &["'cutoff_angle'", "[0, 90]"],
    );
    let text = format!("{RUN}{BOX_WALL}open = [\"-x\", \"+x\", \"-y\", \"+y\", \"-z\", \"+z\"]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[\"-x\"",
        &["'open'", "all six faces"],
    );
    let text = format!("{RUN}{BOX_WALL}open = [\"top\"]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "\"top\"",
        &["'open'", "\"-x\", \"+x\""],
    );
    let text = format!("{RUN}{BOX_WALL}").replace("name = \"box\"", "name = \" \"");
    assert_at(&parse_err(&text), &text, "\" \"", &["'name'", "empty"]);
}

#[test]
fn missing_mesh_file_names_written_and_resolved_path() {
    let dir = TempDir::new("missing-mesh");
    let text = format!(
        "{RUN}[[walls]]\nname = \"funnel\"\nkind = \"mesh\"\npath = \"meshes/funnel.stl\"\n"
    );
    let origin = dir.path().join("x.toml");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFile);
    let resolved = dir.path().join("meshes/funnel.stl");
    assert_error(
        &e,
        &origin,
        pos_of(&text, "\"meshes"),
        &[
            "mesh file 'meshes/funnel.stl' not found",
            &resolved.display().to_string(),
        ],
    );
}

#[test]
fn missing_positions_file_and_plugin() {
    let dir = TempDir::new("missing-xyz");
    let origin = dir.path().join("x.toml");
    let text = format!("{RUN}[[balls]]\nkind = \"file\"\ndensity = 1.0\npath = \"data/lat.xyz\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFile);
    assert_error(
        &e,
        &origin,
        pos_of(&text, "\"data"),
        &["positions file 'data/lat.xyz' not found"],
    );

    let text = format!("{RUN}[[plugins]]\npath = \"plugins/libmine.so\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_error(
        &e,
        &origin,
        pos_of(&text, "\"plugins/"),
        &["plugin path 'plugins/libmine.so' not found"],
    );
}

#[test]
fn empty_mesh() {
    let dir = TempDir::new("empty-mesh");
    let mesh = dir.write("m/empty.obj", "# nothing\nv 0 0 0\nv 1 0 0\n");
    let origin = dir.path().join("x.toml");
    let text = format!("{RUN}[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"m/empty.obj\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DataFile);
    assert_eq!(e.file(), mesh);
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("{}: ", mesh.display())),
        "{shown}"
    );
    assert!(shown.contains("no triangles"), "{shown}");
    assert!(
        shown.contains(&format!(
            "{}:{}:",
            origin.display(),
            pos_of(&text, "\"m/").0
        )),
        "{shown}"
    );

    let text = text.replace("empty.obj", "zero.stl");
    dir.write("m/zero.stl", binary_stl(&[]));
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert!(e.to_string().contains("no triangles"), "{e}");
}

#[test]
fn degenerate_triangle_names_file_and_index() {
    let dir = TempDir::new("degenerate");
    let mut tris = cube_triangles();
    tris.push([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0]]);
    let mesh = dir.write("bad.stl", binary_stl(&tris));
    let origin = dir.path().join("x.toml");
    let text = format!("{RUN}[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"bad.stl\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DataFile);
    assert_eq!(e.file(), mesh);
    assert!(
        e.to_string()
            .contains("triangle #13 (index 12) is degenerate"),
        "{e}"
    );
}

#[test]
fn malformed_mesh_files_report_their_line() {
    let dir = TempDir::new("malformed-mesh");
    let origin = dir.path().join("x.toml");

    let mut stl = ascii_stl(&cube_triangles()[..2]);
    stl = stl.replacen("vertex 1 1 0", "vertex 1 one 0", 1);
    let mesh = dir.write("bad.stl", &stl);
    let text = format!("{RUN}[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"bad.stl\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DataFile);
    // The position of the bad number itself.
    assert_error(
        &e,
        &mesh,
        pos_of(&stl, "one"),
        &["cannot read ASCII STL", "coordinate 'one' is not a number"],
    );

    let obj = cube_obj().replace("v 1 1 0", "v 1 x 0");
    let mesh = dir.write("bad.obj", &obj);
    let text = text.replace("bad.stl", "bad.obj");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_error(&e, &mesh, (pos_of(&obj, "v 1 x").0, 1), &["malformed OBJ"]);

    let text = text.replace("bad.obj", "bad.ply");
    dir.write("bad.ply", "ply\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_error(
        &e,
        &origin,
        pos_of(&text, "\"bad.ply"),
        &["unsupported format", ".stl", ".obj"],
    );
}

#[test]
fn malformed_xyz_line_is_reported_with_its_line() {
    let dir = TempDir::new("bad-xyz");
    let xyz = "# R 1e-3 rho 2500\n0 0 0\n1e-2 2e-2\n";
    let data = dir.write("data/bad.xyz", xyz);
    let origin = dir.path().join("x.toml");
    let text = format!("{RUN}[[balls]]\nkind = \"file\"\npath = \"data/bad.xyz\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DataFile);
    assert_error(
        &e,
        &data,
        (3, 1),
        &[
            "3 or 4 numbers",
            "found 2",
            &format!(
                "file given at {}:{}",
                origin.display(),
                pos_of(&text, "\"data").0
            ),
        ],
    );

    dir.write("data/bad.xyz", "0 0 0 1e-3\n0 zero 0 1e-3\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_error(&e, &data, (2, 3), &["'zero'", "not a number"]);
}

#[test]
fn file_balls_without_radius_or_density() {
    let dir = TempDir::new("no-radius");
    let data = dir.write("p.xyz", "0 0 0\n1 1 1\n");
    let origin = dir.path().join("x.toml");
    let text = format!("{RUN}[[balls]]\nkind = \"file\"\ndensity = 1.0\npath = \"p.xyz\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_error(&e, &data, (1, 1), &["no radius for this ball"]);

    let text = format!("{RUN}[[balls]]\nkind = \"file\"\nradius = 0.5\npath = \"p.xyz\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingKey);
    assert_error(
        &e,
        &origin,
        pos_of(&text, "[[balls]]"),
        &["missing key 'density'"],
    );

    dir.write("p.dat", "0 0 0\n");
    let text =
        format!("{RUN}[[balls]]\nkind = \"file\"\nradius = 0.5\ndensity = 1.0\npath = \"p.dat\"\n");
    let e = talus_config::parse_str(&text, &origin).unwrap_err();
    assert_error(
        &e,
        &origin,
        pos_of(&text, "\"p.dat"),
        &["cannot tell the format", "format = \"xyz\" or \"csv\""],
    );
}

#[test]
fn load_reports_missing_config_file() {
    let e = talus_config::load(Path::new("no/such/config.toml")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFile);
    assert!(e.location().is_none());
    assert!(
        e.to_string()
            .starts_with("no/such/config.toml: cannot read config file"),
        "{e}"
    );
}

#[test]
fn error_at_uses_item_locations() {
    let text = format!(
        "{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"a\", \"b\"]\nproperties = {{ kn = 1e5, ks = 2e4 }}\n"
    );
    let cfg = parse(&text).unwrap();
    let model = &cfg.models[0];
    let e = error_at(
        &model.location,
        "model linear: missing required property fric",
    );
    assert_eq!(e.kind(), ErrorKind::Rejected);
    assert_at(
        &e,
        &text,
        "[[models]]",
        &["model linear: missing required property fric"],
    );

    let (_, value, loc) = model.properties.iter().find(|p| p.0 == "ks").unwrap();
    assert_eq!(*value, 2e4);
    let e = error_at(loc, "ks must be <= kn");
    assert_at(&e, &text, "ks =", &["ks must be <= kn"]);

    let loc = Location {
        file: "a.toml".into(),
        line: 2,
        col: 3,
    };
    assert_eq!(loc.to_string(), "a.toml:2:3");
}

#[test]
fn a_config_that_is_not_utf8_is_refused_at_the_byte() {
    let dir = TempDir::new("latin1");
    let path = dir.write("x.toml", b"[run]\nsteps = 3\n# caf\xe9 au lait\n");
    let e = talus_config::load(&path).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_error(&e, &path, (3, 6), &["byte 0xE9 is not UTF-8 text"]);
}
