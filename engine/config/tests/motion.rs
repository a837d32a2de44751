//! `[walls.deform]` and `[walls.servo]`: what they resolve to on a box
//! mesh, and the errors of bad tables.

mod common;

use common::*;
use talus_config::ErrorKind;

fn wall_with(extra: &str) -> String {
    format!(
        "{RUN}[[walls]]\nname = \"w\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 2, 3]\n\
         divisions = 2\n{extra}"
    )
}

#[test]
fn deform_gives_each_vertex_the_affine_field_at_its_start_position() {
    let text = wall_with(
        "[walls.deform]\nvelocity = [0.1, 0, 0]\n\
         gradient = [[0, 0, 0], [0, -0.5, 0], [0.25, 0, 1]]\ncenter = [0.5, 1, 0]\n\
         schedule = { time = [0, 1, 2], factor = [1, 1, -1] }\n",
    );
    let w = parse(&text).unwrap().walls.remove(0);
    let d = w.deform.unwrap();
    assert_eq!(d.velocity.len(), w.mesh.vertices.len());
    for (v, x) in d.velocity.iter().zip(&w.mesh.vertices) {
        let r = [x[0] - 0.5, x[1] - 1.0, x[2]];
        let expected = [0.1, -0.5 * r[1], 0.25 * r[0] + r[2]];
        for k in 0..3 {
            assert!(
                (v[k] - expected[k]).abs() < 1e-15,
                "{v:?} vs {expected:?} at {x:?}"
            );
        }
    }
    assert_eq!(d.schedule, vec![(0.0, 1.0), (1.0, 1.0), (2.0, -1.0)]);
    assert!(w.servo.is_none() && w.motion.is_none());

    // Default centre: the mean of the vertices (here the box centre).
    let text = wall_with("[walls.deform]\ngradient = [[-1, 0, 0], [0, 0, 0], [0, 0, 0]]\n");
    let w = parse(&text).unwrap().walls.remove(0);
    for (v, x) in w.deform.unwrap().velocity.iter().zip(&w.mesh.vertices) {
        assert!((v[0] + (x[0] - 0.5)).abs() < 1e-15);
    }
}

#[test]
fn servo_stress_becomes_a_force_over_the_projected_area() {
    // A closed 1 x 2 x 3 box: across z it shows the floor and the lid,
    // 2 m^2 each; the side faces are edge-on.
    let text = wall_with(
        "[walls.servo]\ndirection = [0, 0, -2]\nstress = 10.0\ngain = 0.01\nmax_speed = 0.5\n",
    );
    let s = parse(&text).unwrap().walls[0].servo.unwrap();
    assert_eq!(s.direction.to_array(), [0.0, 0.0, -1.0]);
    assert!((s.target - 10.0 * 4.0).abs() < 1e-12, "{}", s.target);
    assert_eq!((s.gain, s.max_speed), (0.01, 0.5));
    let text = wall_with(
        "[walls.servo]\ndirection = [1, 0, 0]\nforce = 7.5\ngain = 0.01\nmax_speed = 0.5\n",
    );
    assert_eq!(parse(&text).unwrap().walls[0].servo.unwrap().target, 7.5);
}

#[test]
fn bad_deform_and_servo_tables_are_located_and_explained() {
    let servo = "[walls.servo]\ndirection = [0, 0, 1]\nforce = 1.0\ngain = 0.1\nmax_speed = 1.0\n";
    let cases: Vec<(String, &str, ErrorKind, &str)> = vec![
        (
            format!("[walls.motion]\nvelocity = [1, 0, 0]\n{servo}"),
            "[walls.servo]",
            ErrorKind::InvalidValue,
            "has both [walls.motion] and [walls.servo]; a wall moves one way only",
        ),
        (
            "[walls.motion]\nvelocity = [1, 0, 0]\n[walls.deform]\nvelocity = [0, 0, 1]\n".into(),
            "[walls.deform]",
            ErrorKind::InvalidValue,
            "has both [walls.motion] and [walls.deform]",
        ),
        (
            "[walls.deform]\ngradient = [[0, 0, 0], [0, 0, 0]]\n".into(),
            "[[0, 0, 0], [0, 0, 0]]",
            ErrorKind::InvalidValue,
            "'gradient' in [walls.deform] of [[walls]] #1 must have 3 rows",
        ),
        (
            "[walls.deform]\nschedule = { time = [0, 1], factor = [1] }\n".into(),
            "{ time",
            ErrorKind::InvalidValue,
            "needs as many factors as times",
        ),
        (
            "[walls.deform]\nschedule = { time = [0, 2, 1], factor = [1, 1, 1] }\n".into(),
            "1], factor",
            ErrorKind::InvalidValue,
            "must increase strictly",
        ),
        (
            "[walls.servo]\ndirection = [0, 0, 1]\ngain = 0.1\nmax_speed = 1.0\n".into(),
            "[walls.servo]",
            ErrorKind::InvalidValue,
            "needs exactly one of 'force' (N) and 'stress' (Pa)",
        ),
        (
            "[walls.servo]\ndirection = [0, 0, 0]\nforce = 1.0\ngain = 0.1\nmax_speed = 1.0\n"
                .into(),
            "[0, 0, 0]\nforce",
            ErrorKind::InvalidValue,
            "'direction' in [walls.servo] of [[walls]] #1 must not be zero",
        ),
        (
            "[walls.servo]\ndirection = [0, 0, 1]\nforce = 1.0\ngain = -0.1\nmax_speed = 1.0\n"
                .into(),
            "-0.1",
            ErrorKind::InvalidValue,
            "'gain' in [walls.servo] of [[walls]] #1 must be > 0 ((m/s)/N)",
        ),
        (
            "[walls.servo]\ndirection = [0, 0, 1]\nforce = 1.0\ngain = 0.1\n".into(),
            "[walls.servo]",
            ErrorKind::MissingKey,
            "max_speed",
        ),
    ];
    for (extra, at, kind, words) in cases {
        let text = wall_with(&extra);
        let e = parse_err(&text);
        assert_eq!(e.kind(), kind, "{e}");
        assert_at(&e, &text, at, &[words]);
    }
}

#[test]
fn vertex_velocity_files_override_the_field_at_matching_vertices() {
    let dir = TempDir::new("vertex-velocities");
    dir.write(
        "moves.csv",
        "# x y z vx vy vz\n1, 2, 3, 0, 0, -1\n0 0 3.0000000001 0.5 0 0  # rounded in export\n",
    );
    let text =
        wall_with("[walls.deform]\nvelocity = [0, 0.25, 0]\nvertex_velocities = \"moves.csv\"\n");
    let cfg = dir.write("c.toml", &text);
    let w = talus_config::load(&cfg).unwrap().walls.remove(0);
    let d = w.deform.unwrap();
    for (v, x) in d.velocity.iter().zip(&w.mesh.vertices) {
        let expected = if *x == [1.0, 2.0, 3.0] {
            [0.0, 0.0, -1.0]
        } else if *x == [0.0, 0.0, 3.0] {
            [0.5, 0.0, 0.0]
        } else {
            [0.0, 0.25, 0.0]
        };
        assert_eq!(v.to_array(), expected, "vertex {x:?}");
    }

    for (rows, line, words) in [
        (
            "1 2 3 0 0 0\n0.5 0.5 0.5 1 1 1\n",
            2,
            "no mesh vertex at (0.5, 0.5, 0.5)",
        ),
        (
            "1 2 3 0 0 0\n1 2 3 1 1 1\n",
            2,
            "this row and line 1 name the same vertex",
        ),
        ("1 2 3 0 0\n", 1, "expected 6 numbers"),
        ("1 2 3 0 0 x\n", 1, "'x' is not a finite number"),
    ] {
        dir.write("moves.csv", rows);
        let e = talus_config::load(&cfg).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DataFile, "{e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("moves.csv:{line}:")) && text.contains(words),
            "{text}"
        );
    }
}
