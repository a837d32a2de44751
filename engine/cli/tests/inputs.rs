//! Bad input through the `talus` binary: each case runs `talus check` (and
//! `talus run` where the two used to differ) on a config in a temporary
//! folder and expects exit code 1 with one line, `file:line:col: message`,
//! naming the real cause: no panic trace, no abort, no hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `talus` with `args`, killing it after `limit`: a hang fails the
/// test instead of stalling it.
fn talus_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the talus binary runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("talus {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

const LIMIT: Duration = Duration::from_secs(60);

const MODEL: &str = "[[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\nproperties = { kn = 1e5, ks = 1e5, fric = 0.5 }\n";

/// Writes `text` as `name` in `dir` and returns the path.
fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// 1-based line and column of the first `needle` in `text`.
fn pos(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("'{needle}' not in text"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, col)
}

/// Runs `talus <command> <config>` and checks: exit code 1, one line on
/// stderr starting `error: <config>:line:col: `, every word present.
fn refused(command: &str, cfg: &Path, (line, col): (usize, usize), words: &[&str]) -> String {
    let out = cfg.with_extension("out");
    let mut args = vec![command, cfg.to_str().unwrap()];
    if command == "run" {
        args.extend(["--quiet", "--out", out.to_str().unwrap()]);
    }
    let o = talus_within(&args, LIMIT);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "exit status {:?}:\n{e}", o.status);
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "panic:\n{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "not one line:\n{e}");
    let at = format!("error: {}:{line}:{col}: ", cfg.display());
    assert!(e.starts_with(&at), "expected '{at}', got:\n{e}");
    for w in words {
        assert!(e.contains(w), "'{w}' missing from:\n{e}");
    }
    e
}

fn balls_lattice(radius: &str, max: &str) -> String {
    format!(
        "[run]\nsteps = 30\n[[balls]]\nkind = \"lattice\"\nradius = {radius}\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [{max}, {max}, {max}] }}\n{MODEL}"
    )
}

#[test]
fn huge_lattices_are_counted_not_made() {
    let tmp = tempfile::tempdir().unwrap();
    // A huge region (was: "capacity overflow" panic), a tiny radius in a
    // 1 m cube (was: an abort allocating 3e18 bytes).
    for (name, text, count) in [
        (
            "region.toml",
            balls_lattice("0.001", "1e9"),
            "1.250e35 balls",
        ),
        ("radius.toml", balls_lattice("1e-6", "1"), "1.250e17 balls"),
    ] {
        let cfg = write(tmp.path(), name, &text);
        refused(
            "check",
            &cfg,
            pos(&text, "{ min"),
            &[count, "of memory", "this machine has available"],
        );
    }
}

#[test]
fn block_generators_are_counted_too() {
    let tmp = tempfile::tempdir().unwrap();
    let shape = "[[shapes]]\nname = \"c\"\nkind = \"box\"\nsize = [1e-3, 1e-3, 1e-3]\n";
    let lattice = format!(
        "[run]\nsteps = 3\n{shape}[[blocks]]\nkind = \"lattice\"\nshape = \"c\"\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [1e3, 1e3, 1e3] }}\n{MODEL}"
    );
    let cfg = write(tmp.path(), "lattice.toml", &lattice);
    refused(
        "check",
        &cfg,
        pos(&lattice, "{ min"),
        &["1.000e18 blocks", "of memory"],
    );
    let random = lattice
        .replace("kind = \"lattice\"", "kind = \"random\"\ncount = 1e12")
        .replace("max = [1e3, 1e3, 1e3]", "max = [1, 1, 1]");
    let cfg = write(tmp.path(), "random.toml", &random);
    refused(
        "check",
        &cfg,
        pos(&random, "1e12"),
        &["1000000000000 blocks", "74 %"],
    );
}

#[test]
fn a_huge_random_count_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "[run]\nsteps = 3\n[[balls]]\nkind = \"random\"\ncount = 1e12\nradius = 0.001\ndensity = 2500\nregion = {{ min = [0, 0, 0], max = [1, 1, 1] }}\n{MODEL}"
    );
    let cfg = write(tmp.path(), "count.toml", &text);
    refused(
        "check",
        &cfg,
        pos(&text, "1e12"),
        &["1000000000000 balls of radius 0.001 m", "74 %"],
    );
}

#[test]
fn threads_are_bounded_in_the_config_and_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "[run]\nsteps = 3\nthreads = 100000\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{{ pos = [0, 0, 0] }}]\n{MODEL}"
    );
    let cfg = write(tmp.path(), "threads.toml", &text);
    for command in ["check", "run"] {
        refused(
            command,
            &cfg,
            pos(&text, "100000"),
            &["'threads' in [run] is 100000", "per CPU"],
        );
    }
    let fine = write(
        tmp.path(),
        "fine.toml",
        text.replace("threads = 100000\n", ""),
    );
    let o = talus_within(
        &[
            "run",
            fine.to_str().unwrap(),
            "--threads",
            "100000",
            "--quiet",
            "--out",
            tmp.path().join("o").to_str().unwrap(),
        ],
        LIMIT,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.starts_with("error: --threads is 100000") && e.contains("per CPU"),
        "{e}"
    );
}

#[test]
fn divisions_are_refused_before_the_box_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "[run]\nsteps = 3\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{{ pos = [0.5, 0.5, 0.5] }}]\n[[walls]]\nname = \"box\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\ndivisions = 1000\n{MODEL}"
    );
    let cfg = write(tmp.path(), "divisions.toml", &text);
    // It took 24 s and 4 GB to say "ok"; now the value is refused before
    // any facet is made (the hang guard of `talus_within` still applies).
    refused(
        "check",
        &cfg,
        pos(&text, "1000\n"),
        &["'divisions' in [[walls]] #1 must be at most 256"],
    );
}

#[test]
fn random_shape_vertex_counts_that_cannot_be_drawn_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "[run]\nsteps = 3\n[[shapes]]\nname = \"r\"\nkind = \"random\"\nvertices = [1000, 1000]\naxes = [0.01, 0.01, 0.01]\nroughness = 0.2\n[[blocks]]\nkind = \"list\"\ndensity = 2500\nblocks = [{{ shape = \"r\", pos = [0, 0, 0] }}]\n{MODEL}"
    );
    let cfg = write(tmp.path(), "rough.toml", &text);
    refused(
        "check",
        &cfg,
        pos(&text, "[1000, 1000]"),
        &["no random shape with 1000 to 1000 corners"],
    );
}

#[test]
fn a_config_with_nothing_to_run_fails_check_as_it_fails_run() {
    let tmp = tempfile::tempdir().unwrap();
    // `check` said ok; `run` then failed without a location.
    let text = "[run]\nsteps = 30\n";
    let cfg = write(tmp.path(), "empty.toml", text);
    for command in ["check", "run"] {
        refused(command, &cfg, (1, 1), &["makes no balls, blocks or clumps"]);
    }
}

#[test]
fn check_refuses_what_the_first_forces_refuse() {
    // Found only when the run is prepared (cell space, first contacts,
    // timestep): a model with no stiffness leaves the automatic timestep
    // undefined. `check` prepares the run as `run` does.
    let tmp = tempfile::tempdir().unwrap();
    let text = "[run]\nsteps = 3\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{ pos = [0, 0, 0] }]\n[[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\nproperties = { kn = 0, ks = 0 }\n";
    let cfg = write(tmp.path(), "stiffless.toml", text);
    let check = refused("check", &cfg, (1, 1), &["no timestep"]);
    let run = refused("run", &cfg, (1, 1), &["no timestep"]);
    assert!(
        run.contains(check.trim_start_matches("error: ").trim_end()),
        "{check}\n{run}"
    );
}

#[test]
fn a_subnormal_radius_is_blamed_for_the_zero_mass() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "[run]\nsteps = 3\n[[balls]]\nkind = \"list\"\nradius = 1e-320\ndensity = 2500\nballs = [{{ pos = [0, 0, 0] }}]\n{MODEL}"
    );
    let cfg = write(tmp.path(), "tiny.toml", &text);
    let e = refused(
        "check",
        &cfg,
        pos(&text, "1e-320"),
        &["radius 1e-320 m", "mass is zero"],
    );
    assert!(!e.contains("stiffness"), "{e}");
}

#[test]
fn groups_without_a_model_are_located() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[run]\nsteps = 3\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{ pos = [0.5, 0.5, 0.5] }]\n[[walls]]\nname = \"box\"\nkind = \"box\"\nmin = [0, 0, 0]\nmax = [1, 1, 1]\n[[models]]\nmodel = \"linear\"\ngroups = [\"default\", \"default\"]\nproperties = { kn = 1e5 }\n";
    let cfg = write(tmp.path(), "pairs.toml", text);
    // At the wall's table, naming where the balls' group comes from.
    let e = refused(
        "check",
        &cfg,
        pos(text, "[[walls]]"),
        &[
            "no [[models]] entry covers groups 'default' and 'wall'",
            "comes from the table at",
        ],
    );
    assert!(e.contains(&format!("{}:3:1", cfg.display())), "{e}");
    // Without any model: at the balls' table.
    let alone = text.split("[[walls]]").next().unwrap();
    let cfg = write(tmp.path(), "alone.toml", alone);
    refused(
        "check",
        &cfg,
        pos(alone, "[[balls]]"),
        &["groups 'default' and 'default'"],
    );
}

#[test]
fn a_config_that_is_not_utf8_is_located() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write(tmp.path(), "latin1.toml", b"[run]\nsteps = 3\n# caf\xe9\n");
    refused("check", &cfg, (3, 6), &["byte 0xE9 is not UTF-8"]);
}

#[test]
fn a_mesh_scaled_out_of_bounds_is_blamed_on_the_scale() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "tri.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    );
    let text = format!(
        "[run]\nsteps = 3\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{{ pos = [0.2, 0.2, 0.5] }}]\n[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"tri.obj\"\nscale = 1e300\n{MODEL}"
    );
    let cfg = write(tmp.path(), "scale.toml", &text);
    let e = refused(
        "check",
        &cfg,
        pos(&text, "1e300"),
        &["scaled by 'scale' = 1e300", "lies 1e300 m"],
    );
    assert!(!e.contains("no triangles"), "{e}");
}

#[cfg(unix)]
#[test]
fn a_fifo_given_as_a_mesh_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe.stl");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let text = format!(
        "[run]\nsteps = 3\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{{ pos = [0.2, 0.2, 0.5] }}]\n[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"pipe.stl\"\n{MODEL}"
    );
    let cfg = write(tmp.path(), "fifo.toml", &text);
    refused(
        "check",
        &cfg,
        pos(&text, "\"pipe.stl\""),
        &["a FIFO (named pipe), not a regular file"],
    );
}

/// An output folder the config names but that cannot be made (here under
/// a regular file) is reported at the config's `dir` key.
#[test]
fn an_output_folder_that_cannot_be_made_names_its_config_line() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("a_file");
    std::fs::write(&blocker, "x").unwrap();
    let out = blocker.join("out");
    let text = format!(
        "[run]\nsteps = 5\n[[balls]]\nkind = \"list\"\nradius = 0.01\ndensity = 2500\nballs = [{{ pos = [0, 0, 0] }}]\n{MODEL}\n[output]\ndir = \"{}\"\n",
        out.display()
    );
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, &text).unwrap();
    let o = talus_within(&["run", cfg.to_str().unwrap(), "--quiet"], LIMIT);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{e}");
    let line = text.lines().position(|l| l.starts_with("dir =")).unwrap() + 1;
    let at = format!("error: {}:{line}:7: [output] dir: ", cfg.display());
    assert!(
        e.starts_with(&at) && e.trim_end().lines().count() == 1,
        "{e}"
    );
}
