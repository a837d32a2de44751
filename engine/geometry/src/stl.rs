//! STL files, ASCII and binary, as triangle soups.
//!
//! Reads: the bytes of an STL file. Writes: one `[corner; 3]` per facet,
//! in file order, corners in file order; the stored facet normals are
//! skipped (the corner order gives the orientation). Invariant: every
//! coordinate returned is finite; an ASCII coordinate is the nearest `f64`
//! to the decimal written (no detour through `f32`), a binary one is the
//! file's `f32` widened exactly.
//!
//! A file is ASCII when it starts with the word `solid` and its size is not
//! exactly that of a binary file whose header says so: many exporters
//! start binary headers with "solid" too, and the exact binary size (84
//! bytes plus 50 per triangle) settles it.
//!
//! ASCII grammar, keywords in any case, one statement per line:
//! `solid [name]`, then per facet `facet [normal nx ny nz]`, `outer loop`,
//! three `vertex x y z`, `endloop`, `endfacet`; then `endsolid [name]`.
//! Several solids may follow each other; a missing final `endsolid` is
//! forgiven.

use std::fmt;

/// One facet: its three corners (m, or the file's unit).
pub type StlTriangle = [[f64; 3]; 3];

/// Why an STL file could not be read, with the 1-based line and column of
/// an ASCII file's fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StlError {
    /// 1-based line of an ASCII file; `None` for a binary file.
    pub line: Option<usize>,
    /// 1-based column, in characters (1 when unknown).
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for StlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}, column {}: {}", self.col, self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for StlError {}

/// Size of the binary header: 80 bytes of text, then a `u32` count.
const BINARY_HEADER: usize = 84;
/// Size of one binary facet: normal, three corners (`f32` each) and a
/// 2-byte attribute.
const BINARY_FACET: usize = 50;

/// The size a binary STL whose header counts `n` facets has.
fn binary_size(bytes: &[u8]) -> Option<u64> {
    let count = bytes.get(80..BINARY_HEADER)?;
    let n = u32::from_le_bytes(count.try_into().ok()?);
    Some(BINARY_HEADER as u64 + BINARY_FACET as u64 * u64::from(n))
}

/// Whether `bytes` are read as ASCII STL (see the module docs).
pub fn is_ascii_stl(bytes: &[u8]) -> bool {
    let word = bytes.len() >= 5
        && bytes[..5].eq_ignore_ascii_case(b"solid")
        && bytes.get(5).is_none_or(|b| b.is_ascii_whitespace());
    word && binary_size(bytes) != Some(bytes.len() as u64)
}

/// Reads an STL file, ASCII or binary.
///
/// # Errors
/// An [`StlError`] for the first malformed statement (ASCII, with its
/// line and column), a truncated binary file, or a coordinate that is not
/// finite.
pub fn read_stl(bytes: &[u8]) -> Result<Vec<StlTriangle>, StlError> {
    if is_ascii_stl(bytes) {
        read_ascii(bytes)
    } else {
        read_binary(bytes)
    }
}

fn whole(message: String) -> StlError {
    StlError {
        line: None,
        col: 1,
        message,
    }
}

/// Reads a binary STL.
fn read_binary(bytes: &[u8]) -> Result<Vec<StlTriangle>, StlError> {
    let Some(expected) = binary_size(bytes) else {
        return Err(whole(format!(
            "binary STL: {} bytes, shorter than the 84-byte header",
            bytes.len()
        )));
    };
    let n = (expected - BINARY_HEADER as u64) / BINARY_FACET as u64;
    if (bytes.len() as u64) < expected {
        let whole_facets = (bytes.len() - BINARY_HEADER) / BINARY_FACET;
        return Err(whole(format!(
            "binary STL: the header counts {n} triangles but the file holds {whole_facets} (truncated?)"
        )));
    }
    let f32_at = |at: usize| f64::from(f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()));
    let mut out = Vec::with_capacity(n as usize);
    for k in 0..n as usize {
        // Skip the normal (12 bytes).
        let start = BINARY_HEADER + k * BINARY_FACET + 12;
        let tri: StlTriangle =
            std::array::from_fn(|c| std::array::from_fn(|axis| f32_at(start + 12 * c + 4 * axis)));
        if tri.iter().flatten().any(|v| !v.is_finite()) {
            return Err(whole(format!(
                "binary STL: triangle #{} has a coordinate that is not finite",
                k + 1
            )));
        }
        out.push(tri);
    }
    Ok(out)
}

/// The whitespace-separated words of a line with their 1-based columns
/// (in characters).
fn words(line: &str) -> Vec<(usize, &str)> {
    line.split_whitespace()
        .map(|w| {
            let offset = w.as_ptr() as usize - line.as_ptr() as usize;
            (line[..offset].chars().count() + 1, w)
        })
        .collect()
}

/// Where the ASCII reader is in the grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// `solid` (or the end of the file, after a first solid).
    Solid,
    /// `facet` or `endsolid`.
    Facet,
    /// `outer loop`.
    Loop,
    /// `vertex` number `k` (0-based) of the facet.
    Vertex(usize),
    /// `endloop`.
    EndLoop,
    /// `endfacet`.
    EndFacet,
}

impl Expect {
    fn describe(self) -> &'static str {
        match self {
            Expect::Solid => "'solid'",
            Expect::Facet => "'facet normal nx ny nz' or 'endsolid'",
            Expect::Loop => "'outer loop'",
            Expect::Vertex(_) => "'vertex x y z'",
            Expect::EndLoop => "'endloop' (a facet has three vertices)",
            Expect::EndFacet => "'endfacet'",
        }
    }
}

/// Reads an ASCII STL at full precision.
fn read_ascii(bytes: &[u8]) -> Result<Vec<StlTriangle>, StlError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let before = &bytes[..e.valid_up_to()];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            // The valid prefix of the line is UTF-8 by construction.
            let col =
                std::str::from_utf8(&before[line_start..]).map_or(1, |s| s.chars().count() + 1);
            return Err(StlError {
                line: Some(line),
                col,
                message: "ASCII STL holds a byte that is not UTF-8 text".to_owned(),
            });
        }
    };
    let mut out = Vec::new();
    let mut state = Expect::Solid;
    let mut solids = 0usize;
    let mut tri = [[0.0; 3]; 3];
    let mut last_line = 1;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let w = words(line);
        let Some(&(col, first)) = w.first() else {
            continue;
        };
        last_line = line_no;
        let at = |col: usize, message: String| StlError {
            line: Some(line_no),
            col,
            message,
        };
        let keyword = first.to_ascii_lowercase();
        let unexpected = || {
            at(
                col,
                format!("expected {}, found '{first}'", state.describe()),
            )
        };
        state = match (state, keyword.as_str()) {
            (Expect::Solid, "solid") => {
                solids += 1;
                Expect::Facet
            }
            (Expect::Facet, "facet") => Expect::Loop,
            (Expect::Facet, "endsolid") => Expect::Solid,
            (Expect::Loop, "outer") => {
                match w.get(1) {
                    Some((_, word)) if word.eq_ignore_ascii_case("loop") => {}
                    _ => return Err(at(col, "expected 'outer loop'".to_owned())),
                }
                Expect::Vertex(0)
            }
            (Expect::Vertex(k), "vertex") => {
                if w.len() != 4 {
                    return Err(at(
                        col,
                        format!(
                            "expected 'vertex x y z' (3 numbers), found {} number(s)",
                            w.len() - 1
                        ),
                    ));
                }
                for (axis, &(c, token)) in w[1..].iter().enumerate() {
                    tri[k][axis] = match token.parse::<f64>() {
                        Ok(v) if v.is_finite() => v,
                        Ok(_) => return Err(at(c, format!("coordinate '{token}' is not finite"))),
                        Err(_) => {
                            return Err(at(c, format!("coordinate '{token}' is not a number")))
                        }
                    };
                }
                if k == 2 {
                    out.push(tri);
                    Expect::EndLoop
                } else {
                    Expect::Vertex(k + 1)
                }
            }
            (Expect::EndLoop, "endloop") => Expect::EndFacet,
            (Expect::EndFacet, "endfacet") => Expect::Facet,
            _ => return Err(unexpected()),
        };
    }
    match state {
        Expect::Solid | Expect::Facet if solids > 0 => Ok(out),
        _ => Err(StlError {
            line: Some(last_line),
            col: 1,
            message: format!("the file ends where {} was expected", state.describe()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ascii(corners: &[[f64; 3]]) -> String {
        let mut s = String::from("solid t\n");
        for tri in corners.chunks(3) {
            s.push_str("facet normal 0 0 1\n outer loop\n");
            for v in tri {
                s.push_str(&format!("  vertex {} {} {}\n", v[0], v[1], v[2]));
            }
            s.push_str(" endloop\nendfacet\n");
        }
        s.push_str("endsolid t\n");
        s
    }

    fn binary(tris: &[[[f32; 3]; 3]], header: &[u8]) -> Vec<u8> {
        let mut b = vec![b' '; 80];
        b[..header.len()].copy_from_slice(header);
        b.extend_from_slice(&(tris.len() as u32).to_le_bytes());
        for t in tris {
            b.extend_from_slice(&[0; 12]);
            for c in t.iter().flatten() {
                b.extend_from_slice(&c.to_le_bytes());
            }
            b.extend_from_slice(&[0, 0]);
        }
        b
    }

    #[test]
    fn ascii_keeps_every_digit() {
        let corners = [
            [0.0, 0.0, 1e-3],
            [1.0, 0.0, 1e-3],
            [0.1, 0.7, 0.123456789012345],
        ];
        let read = read_stl(ascii(&corners).as_bytes()).unwrap();
        assert_eq!(read, vec![corners]);
        // The same text through f32 would not round-trip.
        assert_ne!(f64::from(1e-3f32), 1e-3);
    }

    #[test]
    fn keywords_in_any_case_several_solids_and_no_final_endsolid() {
        let text = "SOLID a\nFACET NORMAL 0 0 1\nOUTER LOOP\nVERTEX 0 0 0\nVERTEX 1 0 0\nVERTEX 0 1 0\nENDLOOP\nENDFACET\nENDSOLID a\n\
                    solid\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\nvertex 1 0 1\nvertex 0 1 1\nendloop\nendfacet\n";
        let read = read_stl(text.as_bytes()).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[1][2], [0.0, 1.0, 1.0]);
    }

    #[test]
    fn ascii_faults_are_located() {
        let good = ascii(&[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let bad = good.replacen("  vertex 1 0 0", "  vertex 1 zero 0", 1);
        let e = read_stl(bad.as_bytes()).unwrap_err();
        assert_eq!((e.line, e.col), (Some(5), 12), "{e}");
        assert!(e.message.contains("'zero' is not a number"), "{e}");

        let bad = good.replacen("  vertex 1 0 0", "  vertex 1 0 inf", 1);
        let e = read_stl(bad.as_bytes()).unwrap_err();
        assert!(e.message.contains("not finite"), "{e}");

        let bad = good.replacen(" endloop", " vertex 0 0 1", 1);
        let e = read_stl(bad.as_bytes()).unwrap_err();
        assert_eq!(e.line, Some(7));
        assert!(e.message.contains("endloop"), "{e}");

        let cut = &good[..good.find(" endloop").unwrap()];
        let e = read_stl(cut.as_bytes()).unwrap_err();
        assert!(e.message.contains("the file ends"), "{e}");

        let mut bytes = good.into_bytes();
        bytes[20] = 0xff;
        let e = read_stl(&bytes).unwrap_err();
        assert!(e.message.contains("UTF-8"), "{e}");
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn binary_is_read_even_with_a_solid_header() {
        let tris = [[[0.0f32, 0.0, 1e-3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]];
        for header in [&b"binary"[..], &b"solid exported"[..]] {
            let read = read_stl(&binary(&tris, header)).unwrap();
            assert_eq!(read.len(), 1);
            assert_eq!(read[0][0][2], f64::from(1e-3f32));
        }
    }

    #[test]
    fn truncated_or_non_finite_binary_is_refused() {
        let tris = [[[0.0f32; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]; 2];
        let full = binary(&tris, b"bin");
        let e = read_stl(&full[..full.len() - 10]).unwrap_err();
        assert!(
            e.message
                .contains("counts 2 triangles but the file holds 1"),
            "{e}"
        );
        assert!(read_stl(&full[..40])
            .unwrap_err()
            .message
            .contains("header"));
        let mut nan = tris;
        nan[1][2][0] = f32::NAN;
        let e = read_stl(&binary(&nan, b"bin")).unwrap_err();
        assert!(e.message.contains("triangle #2"), "{e}");
    }
}
