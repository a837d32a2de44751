//! Positions files: the peer benchmark `.xyz` format and CSV.
//!
//! Reads: file text. Writes: rows with their 1-based line numbers and the
//! defaults found in an xyz header. Invariant: every number is finite and
//! every radius read from a row is > 0; a row's line number points at the
//! line it came from, so later checks can name it.

use crate::mesh::FileIssue;

/// One ball as read from a file, before radius defaults are applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RawRow {
    /// 1-based line in the file.
    pub line: usize,
    pub pos: [f64; 3],
    pub radius: Option<f64>,
    pub velocity: Option<[f64; 3]>,
}

/// The content of a positions file.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct PositionsFile {
    pub rows: Vec<RawRow>,
    /// `R <value>` of an xyz header: default radius, m.
    pub header_radius: Option<f64>,
    /// `rho <value>` of an xyz header: default density, kg/m^3.
    pub header_density: Option<f64>,
}

/// Fields of a line with their 1-based character columns: split on
/// whitespace (`sep = None`) or on `sep`, each field trimmed, its column
/// that of its first non-blank character.
fn fields(line: &str, sep: Option<char>) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    match sep {
        None => {
            let mut start: Option<(usize, usize)> = None;
            for (col0, (i, c)) in line.char_indices().enumerate() {
                if c.is_whitespace() {
                    if let Some((s, col)) = start.take() {
                        out.push((col, &line[s..i]));
                    }
                } else if start.is_none() {
                    start = Some((i, col0 + 1));
                }
            }
            if let Some((s, col)) = start {
                out.push((col, &line[s..]));
            }
        }
        Some(sep) => {
            let mut col = 1;
            for field in line.split(sep) {
                let n_chars = field.chars().count();
                let lead = field.chars().take_while(|c| c.is_whitespace()).count();
                let offset = if lead == n_chars { 0 } else { lead };
                out.push((col + offset, field.trim()));
                col += n_chars + 1;
            }
        }
    }
    out
}

fn number(line_no: usize, col: usize, token: &str, what: &str) -> Result<f64, FileIssue> {
    let token = token.trim();
    match token.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(FileIssue::at(
            line_no,
            col,
            format!("{what} must be finite, found '{token}'"),
        )),
        Err(_) => Err(FileIssue::at(
            line_no,
            col,
            format!("{what} is not a number: '{token}'"),
        )),
    }
}

fn positive_radius(line_no: usize, col: usize, r: f64) -> Result<f64, FileIssue> {
    if r > 0.0 {
        Ok(r)
    } else {
        Err(FileIssue::at(
            line_no,
            col,
            format!("radius must be > 0 (m), found {r:?}"),
        ))
    }
}

/// Reads the xyz format of the peer benchmarks: an optional first line
/// `# key value key value ...` (keys `R` = radius and `rho` = density are
/// used, `N` = number of balls is checked, others are ignored), then one
/// ball per line: `x y z` or `x y z r`. Blank lines and later lines
/// starting with `#` are skipped.
pub(crate) fn read_xyz(text: &str) -> Result<PositionsFile, FileIssue> {
    let mut out = PositionsFile::default();
    let mut expected_n: Option<(usize, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('#') {
            if line_no == 1 {
                read_xyz_header(line, &mut out, &mut expected_n)?;
            }
            continue;
        }
        let f = fields(line, None);
        if f.len() != 3 && f.len() != 4 {
            return Err(FileIssue::at(
                line_no,
                f.first().map_or(1, |x| x.0),
                format!(
                    "expected 'x y z' or 'x y z r' (3 or 4 numbers), found {} field(s)",
                    f.len()
                ),
            ));
        }
        let mut pos = [0.0; 3];
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            pos[axis] = number(line_no, f[axis].0, f[axis].1, name)?;
        }
        let radius = match f.get(3) {
            Some(&(col, tok)) => Some(positive_radius(
                line_no,
                col,
                number(line_no, col, tok, "radius")?,
            )?),
            None => None,
        };
        out.rows.push(RawRow {
            line: line_no,
            pos,
            radius,
            velocity: None,
        });
    }
    if let Some((n, col)) = expected_n {
        if n != out.rows.len() {
            return Err(FileIssue::at(
                1,
                col,
                format!(
                    "header says N {n} but the file has {} ball(s) (truncated?)",
                    out.rows.len()
                ),
            ));
        }
    }
    Ok(out)
}

fn read_xyz_header(
    line: &str,
    out: &mut PositionsFile,
    expected_n: &mut Option<(usize, usize)>,
) -> Result<(), FileIssue> {
    let f = fields(line, None);
    // Skip the '#' (alone or glued to the first key).
    let mut tokens: Vec<(usize, &str)> = Vec::new();
    for (col, tok) in f {
        if let Some(rest) = tok.strip_prefix('#') {
            if !rest.is_empty() {
                tokens.push((col + 1, rest));
            }
        } else {
            tokens.push((col, tok));
        }
    }
    let mut k = 0;
    while k < tokens.len() {
        let (_, key) = tokens[k];
        if matches!(key, "R" | "rho" | "N") {
            let Some(&(col, value)) = tokens.get(k + 1) else {
                return Err(FileIssue::at(
                    1,
                    tokens[k].0,
                    format!("header key '{key}' has no value"),
                ));
            };
            let v = number(1, col, value, &format!("header value of '{key}'"))?;
            match key {
                "R" => out.header_radius = Some(positive_radius(1, col, v)?),
                "rho" => {
                    if v <= 0.0 {
                        return Err(FileIssue::at(
                            1,
                            col,
                            format!("header density rho must be > 0 (kg/m^3), found {v:?}"),
                        ));
                    }
                    out.header_density = Some(v);
                }
                _ => {
                    if v < 0.0 || v.fract() != 0.0 {
                        return Err(FileIssue::at(
                            1,
                            col,
                            format!("header N must be a whole number >= 0, found {v:?}"),
                        ));
                    }
                    *expected_n = Some((v as usize, col));
                }
            }
            k += 2;
        } else {
            k += 1;
        }
    }
    Ok(())
}

/// The columns a CSV file may have: each a name with its aliases; some
/// required, some only all together.
pub(crate) struct CsvSchema {
    /// Per column, its accepted names (lower case), the first one canonical.
    pub columns: &'static [&'static [&'static str]],
    /// Columns every file must have.
    pub required: &'static [usize],
    /// Column sets that come all together or not at all.
    pub together: &'static [&'static [usize]],
    /// The header as a reader would write it, for messages
    /// (`x,y,z[,radius][,vx,vy,vz]`).
    pub layout: &'static str,
}

/// One CSV data row: per schema column, its value and 1-based character
/// column, `None` when the file has no such column.
pub(crate) struct CsvRow {
    /// 1-based line in the file.
    pub line: usize,
    pub values: Vec<Option<(f64, usize)>>,
}

impl CsvRow {
    /// The value of schema column `k`, if the file has it.
    pub(crate) fn get(&self, k: usize) -> Option<f64> {
        self.values[k].map(|v| v.0)
    }

    /// The values of schema columns `ks`, if the file has them (a
    /// validated row has all of a `together` set or none).
    pub(crate) fn all<const N: usize>(&self, ks: [usize; N]) -> Option<[f64; N]> {
        let mut out = [0.0; N];
        for (slot, k) in out.iter_mut().zip(ks) {
            *slot = self.get(k)?;
        }
        Some(out)
    }
}

/// Reads CSV with a header row naming the columns of `schema`
/// (case-insensitive, any order), then plain numbers separated by commas
/// (no quoting). Blank lines and lines starting with `#` are skipped.
pub(crate) fn read_csv_rows(text: &str, schema: &CsvSchema) -> Result<Vec<CsvRow>, FileIssue> {
    let mut rows = Vec::new();
    // Per schema column, its field index in the file.
    let mut columns: Option<(usize, Vec<Option<usize>>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let f = fields(line, Some(','));
        let Some((n_fields, index)) = &columns else {
            columns = Some((f.len(), csv_header(line_no, &f, schema)?));
            continue;
        };
        if f.len() != *n_fields {
            return Err(FileIssue::at(
                line_no,
                1,
                format!(
                    "expected {n_fields} comma-separated field(s) as in the header, found {}",
                    f.len()
                ),
            ));
        }
        let mut values = Vec::with_capacity(index.len());
        for (k, idx) in index.iter().enumerate() {
            values.push(match *idx {
                Some(idx) => {
                    let (col, token) = f[idx];
                    Some((number(line_no, col, token, schema.columns[k][0])?, col))
                }
                None => None,
            });
        }
        rows.push(CsvRow {
            line: line_no,
            values,
        });
    }
    if columns.is_none() {
        return Err(FileIssue::whole(format!(
            "CSV file has no header row (expected columns {})",
            schema.layout
        )));
    }
    Ok(rows)
}

/// The field index of every schema column in a header row.
fn csv_header(
    line_no: usize,
    f: &[(usize, &str)],
    schema: &CsvSchema,
) -> Result<Vec<Option<usize>>, FileIssue> {
    let mut found: Vec<Option<usize>> = vec![None; schema.columns.len()];
    for (idx, &(col, name)) in f.iter().enumerate() {
        let name = name.trim().trim_matches('"').to_ascii_lowercase();
        let Some(k) = schema
            .columns
            .iter()
            .position(|c| c.contains(&name.as_str()))
        else {
            let allowed: Vec<&str> = schema
                .columns
                .iter()
                .flat_map(|c| c.iter())
                .copied()
                .collect();
            return Err(FileIssue::at(
                line_no,
                col,
                format!(
                    "unknown CSV column '{name}'; allowed: {}",
                    allowed.join(", ")
                ),
            ));
        };
        if found[k].is_some() {
            return Err(FileIssue::at(
                line_no,
                col,
                format!("duplicate CSV column '{name}'"),
            ));
        }
        found[k] = Some(idx);
    }
    let names = |ks: &[usize]| -> String {
        ks.iter()
            .map(|&k| schema.columns[k][0])
            .collect::<Vec<_>>()
            .join(", ")
    };
    for &k in schema.required {
        if found[k].is_none() {
            return Err(FileIssue::at(
                line_no,
                1,
                format!(
                    "CSV header lacks column '{}' ({} are required)",
                    schema.columns[k][0],
                    names(schema.required)
                ),
            ));
        }
    }
    for set in schema.together {
        let n = set.iter().filter(|&&k| found[k].is_some()).count();
        if n != 0 && n != set.len() {
            return Err(FileIssue::at(
                line_no,
                1,
                format!("CSV columns {} come all together or not at all", names(set)),
            ));
        }
    }
    Ok(found)
}

/// The columns of a balls positions CSV: `x`, `y`, `z` required; `radius`
/// (or `r`) optional; `vx`, `vy`, `vz` optional but all three together.
const BALL_CSV: CsvSchema = CsvSchema {
    columns: &[
        &["x"],
        &["y"],
        &["z"],
        &["radius", "r"],
        &["vx"],
        &["vy"],
        &["vz"],
    ],
    required: &[0, 1, 2],
    together: &[&[4, 5, 6]],
    layout: "x,y,z[,radius][,vx,vy,vz]",
};

/// Reads a balls positions CSV (columns in [`BALL_CSV`]).
pub(crate) fn read_csv(text: &str) -> Result<PositionsFile, FileIssue> {
    let mut out = PositionsFile::default();
    for row in read_csv_rows(text, &BALL_CSV)? {
        let radius = match row.values[3] {
            Some((r, col)) => Some(positive_radius(row.line, col, r)?),
            None => None,
        };
        out.rows.push(RawRow {
            line: row.line,
            pos: row.all([0, 1, 2]).expect("x, y, z are required"),
            radius,
            velocity: row.all([4, 5, 6]),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_report_columns() {
        assert_eq!(fields("  1 2\t3", None), vec![(3, "1"), (5, "2"), (7, "3")]);
        assert_eq!(fields("a,,b", Some(',')), vec![(1, "a"), (3, ""), (4, "b")]);
        assert_eq!(fields("a,b,", Some(',')), vec![(1, "a"), (3, "b"), (5, "")]);
    }

    #[test]
    fn xyz_with_peer_header() {
        let text = "# Lx 5.25e-02 Ly 4.2e-02 Lz 6.2e-02 R 1.000000e-03 rho 2500.0 N 3\n\
                    1e-3 1e-3 1e-3\n2e-3 1e-3 1e-3\n3e-3 1e-3 1e-3 2e-3\n";
        let f = read_xyz(text).unwrap();
        assert_eq!(f.header_radius, Some(1e-3));
        assert_eq!(f.header_density, Some(2500.0));
        assert_eq!(f.rows.len(), 3);
        assert_eq!(f.rows[1].line, 3);
        assert_eq!(f.rows[1].pos, [2e-3, 1e-3, 1e-3]);
        assert_eq!(f.rows[2].radius, Some(2e-3));
    }

    #[test]
    fn xyz_errors_name_line_and_column() {
        let e = read_xyz("0 0 0\n1 abc 0\n").unwrap_err();
        assert_eq!((e.line, e.col), (Some(2), 3));
        assert!(e.message.contains("'abc'"), "{}", e.message);
        let e = read_xyz("0 0 0\n\n1 2\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("3 or 4 numbers"));
        let e = read_xyz("# R 1e-3 N 2\n0 0 0\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("N 2"));
        let e = read_xyz("0 0 0 -1\n").unwrap_err();
        assert_eq!((e.line, e.col), (Some(1), 7));
    }

    #[test]
    fn csv_reads_columns_in_any_order() {
        let text = "z, x, y, r, vx, vy, vz\n3,1,2,0.5,0,0,-1\n\n6,4,5,0.25,1,0,0\n";
        let f = read_csv(text).unwrap();
        assert_eq!(f.rows.len(), 2);
        assert_eq!(f.rows[0].pos, [1.0, 2.0, 3.0]);
        assert_eq!(f.rows[0].radius, Some(0.5));
        assert_eq!(f.rows[0].velocity, Some([0.0, 0.0, -1.0]));
        assert_eq!(f.rows[1].line, 4);
    }

    #[test]
    fn csv_errors() {
        let e = read_csv("x,y,w\n").unwrap_err();
        assert!(
            e.message.contains("unknown CSV column 'w'"),
            "{}",
            e.message
        );
        assert_eq!((e.line, e.col), (Some(1), 5));
        let e = read_csv("x,y\n").unwrap_err();
        assert!(e.message.contains("'z'"));
        let e = read_csv("x,y,z\n1,2,3\n1,2\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = read_csv("x,y,z\n1,2,q\n").unwrap_err();
        assert_eq!((e.line, e.col), (Some(2), 5));
        let e = read_csv("").unwrap_err();
        assert_eq!(e.line, None);
    }
}
