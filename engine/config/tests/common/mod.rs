//! Helpers shared by the integration tests.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use talus_config::{ConfigError, RunConfig};

/// A fresh, empty folder under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "talus-config-test-{}-{n}-{tag}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `bytes` to `rel` inside the folder (creating subfolders).
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The config origin used by tests that need no files.
pub const ORIGIN: &str = "configs/test.toml";

/// The smallest valid config: one step.
pub const RUN: &str = "[run]\nsteps = 10\n";

pub fn parse(text: &str) -> Result<RunConfig, ConfigError> {
    talus_config::parse_str(text, Path::new(ORIGIN))
}

pub fn parse_err(text: &str) -> ConfigError {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// 1-based line and column of the first occurrence of `needle` in `text`.
pub fn pos_of(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("'{needle}' not in text"));
    pos_at(text, at)
}

/// 1-based line and column just after the first occurrence of `prefix`.
pub fn pos_after(text: &str, prefix: &str) -> (usize, usize) {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("'{prefix}' not in text"));
    pos_at(text, at + prefix.len())
}

/// 1-based line and column of byte offset `at` in `text`.
pub fn pos_at(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, col)
}

/// Asserts the error's display starts with `file:line:col:` and contains
/// every word.
pub fn assert_error(err: &ConfigError, file: &Path, (line, col): (usize, usize), words: &[&str]) {
    let shown = err.to_string();
    let prefix = format!("{}:{line}:{col}: ", file.display());
    assert!(
        shown.starts_with(&prefix),
        "expected prefix '{prefix}', got: {shown}"
    );
    for w in words {
        assert!(shown.contains(w), "expected '{w}' in: {shown}");
    }
    assert!(!shown.contains('\n'), "error is not one line: {shown}");
}

/// Like [`assert_error`] for errors in the config text `text` at `needle`.
pub fn assert_at(err: &ConfigError, text: &str, needle: &str, words: &[&str]) {
    assert_error(err, Path::new(ORIGIN), pos_of(text, needle), words);
}

/// A unit cube [0,1]^3 as 12 triangles with outward normals, each a list of
/// three corners.
pub fn cube_triangles() -> Vec<[[f32; 3]; 3]> {
    let c =
        |i: usize| -> [f32; 3] { [(i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32] };
    // Quads with outward winding (corner index bits: x=1, y=2, z=4).
    let quads = [
        [0, 2, 3, 1], // z = 0, normal -z
        [4, 5, 7, 6], // z = 1, normal +z
        [0, 1, 5, 4], // y = 0, normal -y
        [2, 6, 7, 3], // y = 1, normal +y
        [0, 4, 6, 2], // x = 0, normal -x
        [1, 3, 7, 5], // x = 1, normal +x
    ];
    let mut tris = Vec::new();
    for q in quads {
        tris.push([c(q[0]), c(q[1]), c(q[2])]);
        tris.push([c(q[0]), c(q[2]), c(q[3])]);
    }
    tris
}

pub fn ascii_stl(tris: &[[[f32; 3]; 3]]) -> String {
    let mut s = String::from("solid cube\n");
    for t in tris {
        s.push_str("  facet normal 0 0 0\n    outer loop\n");
        for v in t {
            s.push_str(&format!("      vertex {} {} {}\n", v[0], v[1], v[2]));
        }
        s.push_str("    endloop\n  endfacet\n");
    }
    s.push_str("endsolid cube\n");
    s
}

/// Binary STL; the header starts with "solid" on purpose, as many exporters
/// write it.
pub fn binary_stl(tris: &[[[f32; 3]; 3]]) -> Vec<u8> {
    let mut b = vec![0u8; 80];
    b[..11].copy_from_slice(b"solid cube ");
    b.extend_from_slice(&(tris.len() as u32).to_le_bytes());
    for t in tris {
        for _ in 0..3 {
            b.extend_from_slice(&0f32.to_le_bytes());
        }
        for v in t {
            for c in v {
                b.extend_from_slice(&c.to_le_bytes());
            }
        }
        b.extend_from_slice(&[0, 0]);
    }
    b
}

/// The unit cube as OBJ: 8 vertices, 6 quads (triangulated on load).
pub fn cube_obj() -> String {
    let mut s = String::from("# unit cube\no cube\n");
    for i in 0..8 {
        s.push_str(&format!("v {} {} {}\n", i & 1, (i >> 1) & 1, (i >> 2) & 1));
    }
    for q in [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ] {
        s.push_str(&format!(
            "f {} {} {} {}\n",
            q[0] + 1,
            q[1] + 1,
            q[2] + 1,
            q[3] + 1
        ));
    }
    s
}
