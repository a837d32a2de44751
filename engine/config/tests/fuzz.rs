//! Fuzz test: the example configs and meshes, mutated (bytes, lines, TOML
//! tokens, numbers) by a proptest strategy, fed to the config parser and
//! validator and to the mesh readers. Every input must come back as a
//! value or an error: no panic (caught with `catch_unwind`), no abort, no
//! hang. Each error must be one line, and one about the config text must
//! name its line and column.
//!
//! CI runs it for `DEFAULT_SECONDS`; outside CI, run it longer with
//!
//! ```text
//! TALUS_FUZZ_SECONDS=600 cargo test --release -p talus-config --test fuzz -- --nocapture
//! ```
//!
//! (`TALUS_FUZZ_SEED` picks another sequence of inputs). A failing input
//! is shrunk by proptest and printed with the seed that finds it.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use common::*;
use talus_config::{ConfigError, Machine, MeshData};
use talus_geometry::{blocks_from_bytes, MeshFormat, MeshOptions};

/// How long the test runs by default.
const DEFAULT_SECONDS: u64 = 20;
/// Longest an input may take (a loaded machine included): above it, the
/// test fails.
const SLOW: Duration = Duration::from_secs(15);
/// Past this an input is taken to hang: the watchdog aborts the process.
const HANG: Duration = Duration::from_secs(120);

/// A machine of 2 GB and 2 CPUs: what validation weighs inputs against,
/// the same wherever the test runs.
fn machine() -> Machine {
    Machine {
        memory: 2_000_000_000,
        memory_source: "the fuzz test",
        cpus: 2,
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What a seed input is, and so how it is fed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A config, parsed as if it stood at its own path.
    Config,
    /// A mesh file with this extension.
    Mesh(&'static str),
}

#[derive(Debug, Clone)]
struct Seed {
    name: String,
    kind: Kind,
    bytes: Vec<u8>,
}

/// The triangles of an OBJ's `v` and `f` lines (polygons as fans).
fn obj_triangles(text: &str) -> Vec<[[f32; 3]; 3]> {
    let mut v: Vec<[f32; 3]> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first() {
            Some(&"v") => v.push(std::array::from_fn(|k| w[k + 1].parse().unwrap())),
            Some(&"f") => {
                let idx: Vec<usize> = w[1..]
                    .iter()
                    .map(|s| s.parse::<usize>().unwrap() - 1)
                    .collect();
                for k in 1..idx.len() - 1 {
                    out.push([v[idx[0]], v[idx[k]], v[idx[k + 1]]]);
                }
            }
            _ => {}
        }
    }
    out
}

/// Every config of `configs/` (and its benchmarks), every mesh of
/// `configs/meshes/` with its triangles also as ASCII and binary STL, and
/// a closed cube (block shapes need closed meshes) in the three formats.
fn seeds() -> Vec<Seed> {
    let root = workspace().join("configs");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("bench")] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for p in files {
            out.push(Seed {
                name: p.strip_prefix(&root).unwrap().display().to_string(),
                kind: Kind::Config,
                bytes: std::fs::read(&p).unwrap(),
            });
        }
    }
    let mut meshes: Vec<(String, String)> = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("meshes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        meshes.push((name, text));
    }
    meshes.push(("cube.obj".to_owned(), cube_obj()));
    for (name, obj) in meshes {
        let tris = obj_triangles(&obj);
        let stem = name.trim_end_matches(".obj");
        out.push(Seed {
            name: format!("{stem}.ascii.stl"),
            kind: Kind::Mesh("stl"),
            bytes: ascii_stl(&tris).into_bytes(),
        });
        out.push(Seed {
            name: format!("{stem}.binary.stl"),
            kind: Kind::Mesh("stl"),
            bytes: binary_stl(&tris),
        });
        out.push(Seed {
            name,
            kind: Kind::Mesh("obj"),
            bytes: obj.into_bytes(),
        });
    }
    out
}

/// Values that break things: limits, signs, huge and tiny, not numbers,
/// other types, TOML punctuation, and names the configs use.
const DICTIONARY: &[&str] = &[
    "0",
    "-0.0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "7",
    "1000",
    "4096",
    "1e3",
    "1e6",
    "1e9",
    "1e12",
    "1e15",
    "1e300",
    "-1e300",
    "1e-9",
    "1e-12",
    "1e-320",
    "5e-324",
    "1.7976931348623157e308",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "0.999999",
    "true",
    "false",
    "\"\"",
    "\"*\"",
    "\"auto\"",
    "[]",
    "[[]]",
    "{}",
    "[0, 0, 0]",
    "[1, 1, 1]",
    "[1e300, 0, 0]",
    "[0, 0]",
    "[1, 2, 3, 4]",
    "=",
    ",",
    "[",
    "]",
    "{",
    "}",
    "\n",
    "#",
    "\"",
    "'",
    "\\",
    "[[balls]]",
    "[[walls]]",
    "[[shapes]]",
    "[[blocks]]",
    "[[models]]",
    "[run]",
    "[output]",
    "[walls.deform]",
    "[walls.servo]",
    "[walls.motion]",
    "kind",
    "\"lattice\"",
    "\"random\"",
    "\"list\"",
    "\"file\"",
    "\"box\"",
    "\"mesh\"",
    "\"vertices\"",
    "\"prism\"",
    "\"tetrahedron\"",
    "count",
    "counts",
    "radius",
    "region",
    "divisions",
    "vertices",
    "roughness",
    "scale",
    "threads",
    "spacing",
    "density",
    "path",
    "\"meshes/slope.obj\"",
    "\"/dev/zero\"",
    "\"/\"",
    "\".\"",
    "é",
    "\u{0}",
    "\u{feff}",
    "solid",
    "endsolid",
    "facet",
    "vertex",
    "outer loop",
    "endloop",
    "endfacet",
    "v",
    "f",
    "o",
    "-2",
    "0/0",
];

/// One change to an input. Positions are taken modulo the input's size.
#[derive(Debug, Clone)]
enum Mutation {
    /// Sets byte `at` to `value`.
    Byte { at: usize, value: u8 },
    /// Removes `len` bytes from `at`.
    Cut { at: usize, len: usize },
    /// Inserts a copy of `len` bytes from `from` at `at`.
    Copy { from: usize, len: usize, at: usize },
    /// Keeps the first `at` bytes.
    Truncate { at: usize },
    /// Removes a line.
    DropLine { line: usize },
    /// Writes a line twice.
    RepeatLine { line: usize },
    /// Swaps two lines.
    SwapLines { a: usize, b: usize },
    /// Replaces a token (word, number, string, punctuation) with a
    /// dictionary entry.
    Token { token: usize, word: usize },
    /// Replaces a token with another token of the input.
    TokenFromInput { token: usize, other: usize },
    /// Replaces a number `x` with `x * 10^exp`, negated or not.
    Scale {
        number: usize,
        exp: i32,
        negate: bool,
    },
    /// Replaces a number with a dictionary entry.
    Number { number: usize, word: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let pos = any::<usize>();
    prop_oneof![
        1 => (pos, any::<u8>()).prop_map(|(at, value)| Mutation::Byte { at, value }),
        1 => (pos, 1..64usize).prop_map(|(at, len)| Mutation::Cut { at, len }),
        1 => (pos, 1..256usize, pos)
            .prop_map(|(from, len, at)| Mutation::Copy { from, len, at }),
        1 => pos.prop_map(|at| Mutation::Truncate { at }),
        2 => pos.prop_map(|line| Mutation::DropLine { line }),
        2 => pos.prop_map(|line| Mutation::RepeatLine { line }),
        1 => (pos, pos).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        3 => (pos, pos).prop_map(|(token, word)| Mutation::Token { token, word }),
        2 => (pos, pos).prop_map(|(token, other)| Mutation::TokenFromInput { token, other }),
        8 => (pos, -330..330i32, any::<bool>())
            .prop_map(|(number, exp, negate)| Mutation::Scale { number, exp, negate }),
        6 => (pos, pos).prop_map(|(number, word)| Mutation::Number { number, word }),
    ]
}

/// Byte ranges of the tokens of `b`: runs of word characters (letters,
/// digits, `_ . + -`), quoted strings, or single other bytes.
fn tokens(b: &[u8]) -> Vec<(usize, usize)> {
    let word = |c: u8| c.is_ascii_alphanumeric() || b"_.+-".contains(&c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            i = (i + 1).min(b.len());
        } else if word(c) {
            while i < b.len() && word(b[i]) {
                i += 1;
            }
        } else {
            i += 1;
        }
        out.push((start, i));
    }
    out
}

/// The tokens of `b` that read as numbers.
fn numbers(b: &[u8]) -> Vec<(usize, usize)> {
    tokens(b)
        .into_iter()
        .filter(|&(s, e)| {
            std::str::from_utf8(&b[s..e]).is_ok_and(|t| t.parse::<f64>().is_ok_and(f64::is_finite))
        })
        .collect()
}

/// Line ranges of `b`, newline included.
fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < b.len() {
        out.push((start, b.len()));
    }
    out
}

fn splice(b: &mut Vec<u8>, (s, e): (usize, usize), with: &[u8]) {
    b.splice(s..e, with.iter().copied());
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let n = b.len();
    let pick = |v: &Vec<(usize, usize)>, k: usize| (!v.is_empty()).then(|| v[k % v.len()]);
    match *m {
        Mutation::Byte { at, value } if n > 0 => b[at % n] = value,
        Mutation::Cut { at, len } if n > 0 => {
            let s = at % n;
            b.drain(s..(s + len).min(n));
        }
        Mutation::Copy { from, len, at } if n > 0 => {
            let s = from % n;
            let piece = b[s..(s + len).min(n)].to_vec();
            let at = at % (n + 1);
            b.splice(at..at, piece);
        }
        Mutation::Truncate { at } => b.truncate(at % (n + 1)),
        Mutation::DropLine { line } => {
            if let Some(r) = pick(&lines(b), line) {
                splice(b, r, b"");
            }
        }
        Mutation::RepeatLine { line } => {
            if let Some((s, e)) = pick(&lines(b), line) {
                let copy = b[s..e].to_vec();
                b.splice(e..e, copy);
            }
        }
        Mutation::SwapLines { a, b: other } => {
            let ls = lines(b);
            if let (Some(x), Some(y)) = (pick(&ls, a), pick(&ls, other)) {
                let (first, second) = if x.0 <= y.0 { (x, y) } else { (y, x) };
                if first.1 <= second.0 {
                    let (p, q) = (b[first.0..first.1].to_vec(), b[second.0..second.1].to_vec());
                    splice(b, second, &p);
                    splice(b, first, &q);
                }
            }
        }
        Mutation::Token { token, word } => {
            if let Some(r) = pick(&tokens(b), token) {
                splice(b, r, DICTIONARY[word % DICTIONARY.len()].as_bytes());
            }
        }
        Mutation::TokenFromInput { token, other } => {
            let ts = tokens(b);
            if let (Some(r), Some((s, e))) = (pick(&ts, token), pick(&ts, other)) {
                let with = b[s..e].to_vec();
                splice(b, r, &with);
            }
        }
        Mutation::Scale {
            number,
            exp,
            negate,
        } => {
            if let Some((s, e)) = pick(&numbers(b), number) {
                let x: f64 = std::str::from_utf8(&b[s..e]).unwrap().parse().unwrap();
                let y = x * 10f64.powi(exp) * if negate { -1.0 } else { 1.0 };
                // Integers stay integers where they can: counts are typed so.
                let text = if y.fract() == 0.0 && y.abs() < 1e18 {
                    format!("{}", y as i64)
                } else {
                    format!("{y:e}")
                };
                splice(b, (s, e), text.as_bytes());
            }
        }
        Mutation::Number { number, word } => {
            if let Some(r) = pick(&numbers(b), number) {
                splice(b, r, DICTIONARY[word % DICTIONARY.len()].as_bytes());
            }
        }
        _ => {}
    }
}

/// An input: a seed and the mutations applied to it.
#[derive(Debug, Clone)]
struct Input {
    seed: usize,
    mutations: Vec<Mutation>,
}

/// Inputs from `configs` (seeds `0..configs`) three times in four, from
/// meshes (the rest of `0..n_seeds`) once; one to four mutations (more
/// break the syntax, and little gets past the parser).
fn input(configs: usize, n_seeds: usize) -> impl Strategy<Value = Input> {
    let seed = prop_oneof![3 => 0..configs, 1 => configs..n_seeds];
    (seed, prop::collection::vec(mutation(), 1..5))
        .prop_map(|(seed, mutations)| Input { seed, mutations })
}

/// Checks what every error must be: one line; about the config text, at
/// a line and column. Gives the error's kind.
fn check_error(e: &ConfigError, origin: &Path) -> Result<String, String> {
    let shown = e.to_string();
    if shown.contains('\n') {
        return Err(format!("error of more than one line: {shown:?}"));
    }
    if e.file() == origin && e.location().is_none() {
        return Err(format!("error about the config without line:col: {shown}"));
    }
    Ok(format!("{:?}", e.kind()))
}

/// The config a mesh input is fed through: a wall and a block shape of
/// the mesh file `file`.
fn mesh_config(file: &str) -> String {
    format!(
        "[run]\nsteps = 1\n[[walls]]\nname = \"w\"\nkind = \"mesh\"\npath = \"{file}\"\n[[shapes]]\nname = \"s\"\nkind = \"mesh\"\npath = \"{file}\"\nscale = 0.5\n"
    )
}

/// Feeds one input; `Ok` says how it ended (`"valid"` or the kind of the
/// error), `Err` what went wrong (the panic's message, a bad error).
fn feed(seeds: &[Seed], scratch: &Path, input: &Input) -> Result<String, String> {
    let seed = &seeds[input.seed];
    let mut bytes = seed.bytes.clone();
    for m in &input.mutations {
        apply(&mut bytes, m);
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<String, String> {
        match seed.kind {
            Kind::Config => {
                // At its own path, so that the meshes it names are found.
                let origin = workspace().join("configs").join(&seed.name);
                match std::str::from_utf8(&bytes) {
                    Ok(text) => match talus_config::parse_str_on(text, &origin, machine()) {
                        Ok(_) => Ok("config valid".to_owned()),
                        Err(e) => check_error(&e, &origin),
                    },
                    Err(_) => {
                        let path = scratch.join("input.toml");
                        std::fs::write(&path, &bytes).unwrap();
                        let e = talus_config::load(&path).expect_err("not UTF-8");
                        check_error(&e, &path)
                    }
                }
            }
            Kind::Mesh(ext) => {
                if ext == "stl" {
                    let _ = talus_geometry::stl::read_stl(&bytes);
                }
                let format = if ext == "stl" {
                    MeshFormat::Stl
                } else {
                    MeshFormat::Obj
                };
                let _ =
                    blocks_from_bytes(&bytes, format, Path::new("fuzz"), MeshOptions::default());
                let file = format!("input.{ext}");
                std::fs::write(scratch.join(&file), &bytes).unwrap();
                let origin = scratch.join("mesh.toml");
                match talus_config::parse_str_on(&mesh_config(&file), &origin, machine()) {
                    Ok(cfg) => {
                        let MeshData { vertices, .. } = &cfg.walls[0].mesh;
                        if vertices.iter().flatten().any(|v| !v.is_finite()) {
                            return Err("a wall vertex is not finite".to_owned());
                        }
                        Ok("mesh valid".to_owned())
                    }
                    Err(e) => check_error(&e, &origin).map(|k| format!("mesh {k}")),
                }
            }
        }
    }));
    match outcome {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Err(format!("panicked: {what}"))
        }
    }
}

/// The input as it was fed, for a failure report.
fn shown(seeds: &[Seed], input: &Input) -> String {
    let mut bytes = seeds[input.seed].bytes.clone();
    for m in &input.mutations {
        apply(&mut bytes, m);
    }
    format!(
        "seed input {} with {:?}:\n{}",
        seeds[input.seed].name,
        input.mutations,
        String::from_utf8_lossy(&bytes)
    )
}

#[test]
fn mutated_configs_and_meshes_never_panic_abort_or_hang() {
    let seconds: u64 = std::env::var("TALUS_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECONDS);
    let rng_seed: u64 = std::env::var("TALUS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(19);
    let seeds = seeds();
    // Configs first, then meshes (see `seeds`).
    let configs = seeds.iter().filter(|s| s.kind == Kind::Config).count();
    assert!(configs >= 4 && configs < seeds.len());
    let scratch = TempDir::new("fuzz");

    // Panics are caught and reported with their input; the default hook
    // would print each one's trace in between.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));

    // The watchdog: an input that runs past HANG aborts the whole test
    // with the input, rather than hang CI.
    let started = Arc::new(AtomicU64::new(u64::MAX));
    let current = Arc::new(Mutex::new(String::new()));
    let epoch = Instant::now();
    {
        let (started, current) = (started.clone(), current.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let at = started.load(Ordering::Relaxed);
            if at != u64::MAX && epoch.elapsed().as_millis() as u64 > at + HANG.as_millis() as u64 {
                eprintln!(
                    "fuzz: an input runs for more than {HANG:?}:\n{}",
                    current.lock().unwrap()
                );
                std::process::abort();
            }
        });
    }

    let strategy = input(configs, seeds.len());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &{
            let mut s = [0u8; 32];
            s[..8].copy_from_slice(&rng_seed.to_le_bytes());
            s
        }),
    );
    let deadline = Duration::from_secs(seconds);
    let (mut tried, mut slowest, mut slowest_input) = (0u64, Duration::ZERO, String::new());
    let mut outcomes: std::collections::BTreeMap<String, u64> = Default::default();
    let mut failure = None;
    while epoch.elapsed() < deadline {
        let mut tree = strategy.new_tree(&mut runner).unwrap();
        let input = tree.current();
        *current.lock().unwrap() = shown(&seeds, &input);
        let t0 = Instant::now();
        started.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        let result = feed(&seeds, scratch.path(), &input);
        started.store(u64::MAX, Ordering::Relaxed);
        let took = t0.elapsed();
        tried += 1;
        if took > slowest {
            slowest = took;
            slowest_input = format!("{} {:?}", seeds[input.seed].name, input.mutations);
        }
        let result = result.and_then(|outcome| {
            *outcomes.entry(outcome).or_default() += 1;
            if took > SLOW {
                Err(format!("took {took:?}"))
            } else {
                Ok(())
            }
        });
        if let Err(why) = result {
            // Shrink: the simplest input that still fails.
            let mut last = (why, input);
            while tree.simplify() {
                let smaller = tree.current();
                match feed(&seeds, scratch.path(), &smaller) {
                    Err(why) => last = (why, smaller),
                    Ok(_) => {
                        if !tree.complicate() {
                            break;
                        }
                    }
                }
            }
            failure = Some(last);
            break;
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "fuzz: {tried} inputs from {} seeds in {:.1} s (seed {rng_seed}); slowest {slowest:?}: {slowest_input}",
        seeds.len(),
        epoch.elapsed().as_secs_f64()
    );
    eprintln!("fuzz: outcomes {outcomes:?}");
    if let Some((why, input)) = failure {
        panic!("{why}\n{}", shown(&seeds, &input));
    }
    assert!(tried > 0);
}
