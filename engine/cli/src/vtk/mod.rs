//! VTK output for ParaView: every N steps, the bodies, walls and contacts
//! of a snapshot as VTK XML PolyData files (`.vtp`), and one collection
//! index (`run.pvd`) that lists every frame's files with its simulated
//! time. docs/output.md ("VTK files for ParaView") lists the arrays.
//!
//! Reads: a [`Snapshot`] (bodies, block shapes, walls with their current
//! vertices, contacts). Writes: `OUT/vtk/<part>-<step>.vtp` for the parts
//! `balls`, `blocks`, `walls` and `contacts`, and `OUT/vtk/run.pvd`.
//! Invariant: every file the index names is complete. Each file is
//! written under a hidden temporary name and renamed into place; the index
//! is rewritten (the same way) only once all files of a frame are in
//! place, so a killed run leaves an index of exactly the frames written in
//! full. A frame needs bodies, walls and active contacts only, all
//! current after a cycle, so the run loop hands a frame that falls between
//! the Parquet frames [`talus_core::Simulation::view`], which refreshes
//! nothing: VTK output cannot change the run.
//!
//! Data arrays use the "binary" format of the VTK XML files: the bytes of
//! the values (little-endian), preceded by their count as a UInt64, in
//! base64 inside the element. Doubles go through unchanged, the file stays
//! well-formed XML (raw appended data would not be), and encoding costs a
//! table lookup per three bytes.

use anyhow::{Context, Result};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use talus_core::snapshot::{BodyKind, BodyRow, PieceId};
use talus_core::{Snapshot, Vec3};

/// The name of the index file in the VTK folder.
pub const INDEX: &str = "run.pvd";

/// The folder of the VTK files in an output folder.
pub const FOLDER: &str = "vtk";

/// What one file of a frame holds; its name prefixes the file name and
/// its number is the `part` of the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Balls as points (vertex cells).
    Balls,
    /// Blocks as triangle meshes, posed.
    Blocks,
    /// Walls as triangle meshes, at their current vertices.
    Walls,
    /// Active contacts as lines between their ends.
    Contacts,
    /// The pebbles of clumps as points (vertex cells).
    Pebbles,
}

impl Part {
    /// Every part, in the order of their part numbers.
    pub const ALL: [Part; 5] = [
        Part::Balls,
        Part::Blocks,
        Part::Walls,
        Part::Contacts,
        Part::Pebbles,
    ];

    /// The name used in file names and in the index.
    pub const fn name(self) -> &'static str {
        match self {
            Part::Balls => "balls",
            Part::Blocks => "blocks",
            Part::Walls => "walls",
            Part::Contacts => "contacts",
            Part::Pebbles => "pebbles",
        }
    }

    /// The file of this part at `step`, relative to the VTK folder.
    pub fn file_name(self, step: u64) -> String {
        format!("{}-{step:010}.vtp", self.name())
    }
}

/// Removes the files of a series in `dir` (if it exists) for which
/// `remove` says so; `remove` may also stop with an error.
fn remove_ours(dir: &Path, mut remove: impl FnMut(&str) -> Result<bool>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    let listing =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in listing {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| ours(n)) else {
            continue;
        };
        if remove(name)? {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// A series of VTK frames being written into `OUT/vtk`.
pub struct Series {
    dir: PathBuf,
    /// The `<DataSet>` lines of the frames written so far. Behind a
    /// `RefCell` so that the run loop's recording closure can stay `Fn`.
    entries: RefCell<String>,
}

/// Whether `name` is a file this module writes (or its temporary).
fn ours(name: &str) -> bool {
    // A hidden name is ours only as a temporary: `.NAME.tmp`.
    let name = match name.strip_prefix('.') {
        Some(hidden) => match hidden.strip_suffix(".tmp") {
            Some(n) => n,
            None => return false,
        },
        None => name,
    };
    name == INDEX
        || Part::ALL.iter().any(|p| {
            name.strip_prefix(p.name())
                .and_then(|r| r.strip_prefix('-'))
                .and_then(|r| r.strip_suffix(".vtp"))
                .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
        })
}

impl Series {
    /// Prepares `out/vtk` for a run that writes a frame every `every`
    /// steps (0: none). VTK files an older run left there are removed when
    /// `overwrite` is set, and refused otherwise, so a series never mixes
    /// two runs; other files in the folder are left alone. Returns `None`
    /// when the run writes no frame.
    pub fn start(out: &Path, every: u64, overwrite: bool) -> Result<Option<Series>> {
        let dir = out.join(FOLDER);
        remove_ours(&dir, |name| {
            if !overwrite {
                anyhow::bail!(
                    "{} holds the VTK files of an older run ({name}); remove them or set \
                     overwrite = true in [output]",
                    dir.display()
                );
            }
            Ok(true)
        })?;
        if every == 0 {
            // Leave no empty folder behind from an older run's series.
            let _ = std::fs::remove_dir(&dir);
            return Ok(None);
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Some(Series {
            dir,
            entries: RefCell::new(String::new()),
        }))
    }

    /// Takes up the series in `out/vtk` of a run continued from its
    /// checkpoint at step `step`: the frames after that step (written
    /// before the run stopped) and any temporary file go, the index keeps
    /// the frames up to it, and the run's own frames are added after them.
    pub fn resume(out: &Path, every: u64, step: u64) -> Result<Option<Series>> {
        let dir = out.join(FOLDER);
        let index = std::fs::read_to_string(dir.join(INDEX)).unwrap_or_default();
        // The step in a frame file's name: `<part>-<10 digits>.vtp`.
        let step_of = |name: &str| -> Option<u64> {
            let stem = name.strip_suffix(".vtp")?;
            stem.rsplit_once('-')?.1.parse().ok()
        };
        remove_ours(&dir, |name| {
            Ok(name.starts_with('.') || step_of(name).is_some_and(|s| s > step))
        })?;
        if every == 0 {
            return Ok(None);
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let kept: String = index
            .lines()
            .filter(|line| line.trim_start().starts_with("<DataSet"))
            .filter(|line| {
                let file = line
                    .split("file=\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next());
                file.and_then(step_of).is_some_and(|s| s <= step)
            })
            .map(|line| format!("{line}\n"))
            .collect();
        Ok(Some(Series {
            dir,
            entries: RefCell::new(kept),
        }))
    }

    /// Writes the frame of `snap`: one file per part the run has (balls,
    /// blocks and walls when there are any; contacts always), then the
    /// index with this frame added.
    pub fn write(&self, snap: &Snapshot<'_>) -> Result<()> {
        let step = snap.step();
        let mut listed = String::new();
        for (number, part) in Part::ALL.into_iter().enumerate() {
            let Some(xml) = part_xml(part, snap) else {
                continue;
            };
            let file = part.file_name(step);
            replace(&self.dir, &file, &xml)?;
            // Display of an f64 is the shortest text that reads back as
            // the same number.
            let _ = writeln!(
                listed,
                "    <DataSet timestep=\"{}\" group=\"\" part=\"{number}\" name=\"{}\" file=\"{file}\"/>",
                snap.time(),
                part.name()
            );
        }
        let mut entries = self.entries.borrow_mut();
        entries.push_str(&listed);
        let index = format!(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" \
             byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <Collection>\n{entries}  \
             </Collection>\n</VTKFile>\n"
        );
        replace(&self.dir, INDEX, index.as_bytes())
    }
}

/// Writes `bytes` to the file `name` of `dir` through a hidden temporary
/// file and a rename, so the file is always either absent, the old one or
/// the whole new one.
fn replace(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(name))
        .with_context(|| format!("cannot rename {}", tmp.display()))
}

/// The `.vtp` file of `part` at the snapshot, or `None` when the run has
/// nothing of that part (no ball, no block or no wall).
pub fn part_xml(part: Part, snap: &Snapshot<'_>) -> Option<Vec<u8>> {
    let poly = match part {
        Part::Balls => balls(snap),
        Part::Blocks => blocks(snap),
        Part::Walls => walls(snap),
        Part::Contacts => Some(contacts(snap)),
        Part::Pebbles => pebbles(snap),
    }?;
    Some(poly.to_xml(snap))
}

/// The values of a data array.
enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    /// Vectors: three Float64 components per tuple.
    Vec3(Vec<Vec3>),
}

impl Values {
    fn data(&self) -> Data<'_> {
        match self {
            Values::F64(v) => Data::F64(v),
            Values::I64(v) => Data::I64(v),
            Values::I32(v) => Data::I32(v),
            Values::Vec3(v) => Data::Vec3(v),
        }
    }
}

/// The values of a data array, borrowed.
#[derive(Clone, Copy)]
enum Data<'a> {
    F64(&'a [f64]),
    I64(&'a [i64]),
    I32(&'a [i32]),
    Vec3(&'a [Vec3]),
}

impl Data<'_> {
    fn vtk_type(self) -> &'static str {
        match self {
            Data::F64(_) | Data::Vec3(_) => "Float64",
            Data::I64(_) => "Int64",
            Data::I32(_) => "Int32",
        }
    }

    fn components(self) -> usize {
        match self {
            Data::Vec3(_) => 3,
            _ => 1,
        }
    }

    /// The number of tuples.
    fn len(self) -> usize {
        match self {
            Data::F64(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::Vec3(v) => v.len(),
        }
    }

    fn byte_len(self) -> usize {
        match self {
            Data::F64(v) => 8 * v.len(),
            Data::I64(v) => 8 * v.len(),
            Data::I32(v) => 4 * v.len(),
            Data::Vec3(v) => 24 * v.len(),
        }
    }

    fn encode(self, enc: &mut Base64<'_>) {
        match self {
            Data::F64(v) => v.iter().for_each(|x| enc.push(&x.to_le_bytes())),
            Data::I64(v) => v.iter().for_each(|x| enc.push(&x.to_le_bytes())),
            Data::I32(v) => v.iter().for_each(|x| enc.push(&x.to_le_bytes())),
            Data::Vec3(v) => v.iter().for_each(|p| {
                let mut b = [0; 24];
                for (k, x) in [p.x, p.y, p.z].into_iter().enumerate() {
                    b[8 * k..8 * k + 8].copy_from_slice(&x.to_le_bytes());
                }
                enc.push(&b);
            }),
        }
    }

    /// Writes the `<DataArray>` element named `name`: the byte count as a
    /// UInt64, then the values, base64-encoded as one stream.
    fn write(self, name: &str, out: &mut Vec<u8>, indent: &str) {
        let _ = write!(
            Text(out),
            "{indent}<DataArray type=\"{}\" Name=\"{name}\" NumberOfComponents=\"{}\" \
             NumberOfTuples=\"{}\" format=\"binary\">",
            self.vtk_type(),
            self.components(),
            self.len()
        );
        let mut enc = Base64::new(out);
        enc.push(&(self.byte_len() as u64).to_le_bytes());
        self.encode(&mut enc);
        enc.finish();
        out.extend_from_slice(b"</DataArray>\n");
    }
}

/// A named data array.
struct Array {
    name: &'static str,
    values: Values,
}

impl Array {
    fn new(name: &'static str, values: Values) -> Array {
        Array { name, values }
    }

    fn write(&self, out: &mut Vec<u8>, indent: &str) {
        self.values.data().write(self.name, out, indent);
    }
}

/// The kind of cells of a piece.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cells {
    /// One point each.
    Verts,
    /// Two points each.
    Lines,
    /// Three points each (triangles).
    Polys,
}

impl Cells {
    fn tag(self) -> &'static str {
        match self {
            Cells::Verts => "Verts",
            Cells::Lines => "Lines",
            Cells::Polys => "Polys",
        }
    }

    fn size(self) -> usize {
        match self {
            Cells::Verts => 1,
            Cells::Lines => 2,
            Cells::Polys => 3,
        }
    }
}

/// One piece of PolyData: points, cells of one kind and their data.
struct PolyData {
    points: Vec<Vec3>,
    cells: Cells,
    /// Point indices, `cells.size()` per cell.
    connectivity: Vec<i64>,
    point_data: Vec<Array>,
    cell_data: Vec<Array>,
    /// Labels that integer arrays index (group or wall names), written
    /// as a string array of the field data.
    labels: Option<(&'static str, Vec<String>)>,
}

impl PolyData {
    fn new(cells: Cells) -> PolyData {
        PolyData {
            points: Vec::new(),
            cells,
            connectivity: Vec::new(),
            point_data: Vec::new(),
            cell_data: Vec::new(),
            labels: None,
        }
    }

    fn n_cells(&self) -> usize {
        self.connectivity.len() / self.cells.size()
    }

    /// The whole `.vtp` file. Its field data holds the step and the time
    /// (as `TimeValue`, which ParaView reads as the time of a file opened
    /// on its own).
    fn to_xml(&self, snap: &Snapshot<'_>) -> Vec<u8> {
        let n_points = self.points.len();
        let n_cells = self.n_cells();
        // Base64 of doubles is ~11 bytes a value.
        let values = 3 * n_points
            + self.connectivity.len()
            + n_cells
            + self
                .point_data
                .iter()
                .chain(&self.cell_data)
                .map(|a| a.values.data().byte_len() / 8)
                .sum::<usize>();
        let mut out = Vec::with_capacity(1024 + 11 * values);
        out.extend_from_slice(
            b"<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" \
              byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PolyData>\n    <FieldData>\n",
        );
        let time = Array::new("TimeValue", Values::F64(vec![snap.time()]));
        let step = Array::new("step", Values::I64(vec![snap.step() as i64]));
        for a in [time, step] {
            a.write(&mut out, "      ");
        }
        if let Some((name, labels)) = &self.labels {
            write_strings(&mut out, name, labels);
        }
        out.extend_from_slice(b"    </FieldData>\n");
        let count = |c: Cells| if c == self.cells { n_cells } else { 0 };
        let _ = writeln!(
            Text(&mut out),
            "    <Piece NumberOfPoints=\"{n_points}\" NumberOfVerts=\"{}\" NumberOfLines=\"{}\" \
             NumberOfStrips=\"0\" NumberOfPolys=\"{}\">",
            count(Cells::Verts),
            count(Cells::Lines),
            count(Cells::Polys)
        );
        for (tag, arrays) in [
            ("PointData", &self.point_data),
            ("CellData", &self.cell_data),
        ] {
            let _ = writeln!(Text(&mut out), "      <{tag}>");
            for a in arrays {
                a.write(&mut out, "        ");
            }
            let _ = writeln!(Text(&mut out), "      </{tag}>");
        }
        out.extend_from_slice(b"      <Points>\n");
        Data::Vec3(&self.points).write("Points", &mut out, "        ");
        out.extend_from_slice(b"      </Points>\n");
        let tag = self.cells.tag();
        let _ = writeln!(Text(&mut out), "      <{tag}>");
        let size = self.cells.size() as i64;
        let offsets: Vec<i64> = (1..=n_cells as i64).map(|k| k * size).collect();
        Data::I64(&self.connectivity).write("connectivity", &mut out, "        ");
        Data::I64(&offsets).write("offsets", &mut out, "        ");
        let _ = writeln!(Text(&mut out), "      </{tag}>");
        out.extend_from_slice(b"    </Piece>\n  </PolyData>\n</VTKFile>\n");
        out
    }
}

/// A string array of the field data: the strings, each ended by a zero
/// byte (a zero inside a name would split it), as VTK stores them.
fn write_strings(out: &mut Vec<u8>, name: &str, strings: &[String]) {
    let _ = write!(
        Text(out),
        "      <Array type=\"String\" Name=\"{name}\" NumberOfTuples=\"{}\" format=\"binary\">",
        strings.len()
    );
    let bytes: usize = strings.iter().map(|s| s.len() + 1).sum();
    let mut enc = Base64::new(out);
    enc.push(&(bytes as u64).to_le_bytes());
    for s in strings {
        enc.push(s.as_bytes());
        enc.push(&[0]);
    }
    enc.finish();
    out.extend_from_slice(b"</Array>\n");
}

/// `fmt::Write` into a byte buffer (the XML is ASCII).
struct Text<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Text<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A base64 encoder (RFC 4648, standard alphabet, `=` padding) that
/// appends to a buffer; bytes come in any number of pushes.
struct Base64<'a> {
    out: &'a mut Vec<u8>,
    pending: [u8; 3],
    n_pending: usize,
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

impl<'a> Base64<'a> {
    fn new(out: &'a mut Vec<u8>) -> Base64<'a> {
        Base64 {
            out,
            pending: [0; 3],
            n_pending: 0,
        }
    }

    #[inline]
    fn group(&mut self, b: [u8; 3]) {
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        self.out.extend_from_slice(&[
            ALPHABET[(v >> 18) as usize & 63],
            ALPHABET[(v >> 12) as usize & 63],
            ALPHABET[(v >> 6) as usize & 63],
            ALPHABET[v as usize & 63],
        ]);
    }

    #[inline]
    fn push(&mut self, mut bytes: &[u8]) {
        while self.n_pending > 0 && !bytes.is_empty() {
            self.pending[self.n_pending] = bytes[0];
            self.n_pending += 1;
            bytes = &bytes[1..];
            if self.n_pending == 3 {
                self.group(self.pending);
                self.n_pending = 0;
            }
        }
        let mut chunks = bytes.chunks_exact(3);
        for c in &mut chunks {
            self.group([c[0], c[1], c[2]]);
        }
        for &b in chunks.remainder() {
            self.pending[self.n_pending] = b;
            self.n_pending += 1;
        }
    }

    /// Encodes what is left, padded with `=`.
    fn finish(mut self) {
        let n = self.n_pending;
        if n == 0 {
            return;
        }
        self.pending[n..].fill(0);
        self.group(self.pending);
        let len = self.out.len();
        self.out[len - (3 - n)..].fill(b'=');
    }
}

/// The index of `name` in `names`, as the group arrays store it.
fn label_index(names: &[String], name: &str) -> i32 {
    names
        .iter()
        .position(|n| n == name)
        .map_or(-1, |i| i as i32)
}

/// The arrays every body carries, one tuple per point (balls) or per
/// triangle (blocks): id, group, velocity and spin.
#[derive(Default)]
struct BodyArrays {
    id: Vec<i64>,
    group: Vec<i32>,
    vel: Vec<Vec3>,
    spin: Vec<Vec3>,
}

impl BodyArrays {
    fn push(&mut self, b: &BodyRow<'_>, names: &[String]) {
        self.id.push(b.id as i64);
        self.group.push(label_index(names, b.group));
        self.vel.push(b.vel);
        self.spin.push(b.spin);
    }

    /// The arrays, with `extra` after the group.
    fn into_arrays(self, extra: Option<Array>) -> Vec<Array> {
        let mut all = vec![
            Array::new("id", Values::I64(self.id)),
            Array::new("group", Values::I32(self.group)),
        ];
        all.extend(extra);
        all.push(Array::new("velocity", Values::Vec3(self.vel)));
        all.push(Array::new("spin", Values::Vec3(self.spin)));
        all
    }
}

/// Balls as points with radius, velocity, spin, id and group.
fn balls(snap: &Snapshot<'_>) -> Option<PolyData> {
    let names = snap.group_names();
    let mut p = PolyData::new(Cells::Verts);
    let (mut arrays, mut radius) = (BodyArrays::default(), Vec::new());
    for b in snap.bodies().filter(|b| b.kind == BodyKind::Ball) {
        p.connectivity.push(p.points.len() as i64);
        p.points.push(b.pos);
        arrays.push(&b, names);
        radius.push(b.radius);
    }
    if p.points.is_empty() {
        return None;
    }
    p.point_data = arrays.into_arrays(Some(Array::new("radius", Values::F64(radius))));
    p.labels = Some(("group_names", names.to_vec()));
    Some(p)
}

/// The pebbles of clumps as points with radius: each template's pebble
/// turned by its clump's orientation and moved to its centroid; per
/// point, the clump's id, group, velocity and spin, and the pebble's
/// index in its template.
fn pebbles(snap: &Snapshot<'_>) -> Option<PolyData> {
    let templates = snap.templates();
    let names = snap.group_names();
    let mut p = PolyData::new(Cells::Verts);
    let (mut arrays, mut radius, mut index) = (BodyArrays::default(), Vec::new(), Vec::new());
    for b in snap.bodies().filter(|b| b.kind == BodyKind::Clump) {
        let Some(t) = b.shape.and_then(|s| templates.get(s as usize)) else {
            continue;
        };
        for (k, &(c, r)) in t.pebbles.iter().enumerate() {
            p.connectivity.push(p.points.len() as i64);
            p.points.push(b.orientation * c + b.pos);
            arrays.push(&b, names);
            radius.push(r);
            index.push(k as i64);
        }
    }
    if p.points.is_empty() {
        return None;
    }
    p.point_data = arrays.into_arrays(Some(Array::new("radius", Values::F64(radius))));
    p.point_data.push(Array::new("pebble", Values::I64(index)));
    p.labels = Some(("group_names", names.to_vec()));
    Some(p)
}

/// Blocks as triangle meshes: each block's shape vertices turned by its
/// orientation and moved to its centroid; per triangle, the block's id,
/// group, velocity and spin.
fn blocks(snap: &Snapshot<'_>) -> Option<PolyData> {
    let shapes = snap.shapes();
    let names = snap.group_names();
    let mut p = PolyData::new(Cells::Polys);
    let mut arrays = BodyArrays::default();
    for b in snap.bodies().filter(|b| b.kind == BodyKind::Block) {
        let Some(shape) = b.shape.and_then(|s| shapes.get(s as usize)) else {
            continue;
        };
        let first = p.points.len() as i64;
        let poly = &shape.polyhedron;
        p.points
            .extend(poly.vertices().iter().map(|&v| b.orientation * v + b.pos));
        for tri in poly.facets() {
            p.connectivity
                .extend(tri.iter().map(|&k| first + i64::from(k)));
            arrays.push(&b, names);
        }
    }
    if p.points.is_empty() {
        return None;
    }
    p.cell_data = arrays.into_arrays(None);
    p.labels = Some(("group_names", names.to_vec()));
    Some(p)
}

/// Walls as triangle meshes at their current vertices; per triangle, the
/// wall id and the facet index in its wall.
fn walls(snap: &Snapshot<'_>) -> Option<PolyData> {
    if snap.n_walls() == 0 {
        return None;
    }
    let mut p = PolyData::new(Cells::Polys);
    let (mut wall, mut facet, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for w in snap.walls() {
        let first = p.points.len() as i64;
        p.points.extend_from_slice(w.vertices);
        for (k, tri) in w.facets.iter().enumerate() {
            p.connectivity
                .extend(tri.iter().map(|&v| first + i64::from(v)));
            wall.push(w.id as i64);
            facet.push(k as i64);
        }
        names.push(w.name.to_string());
    }
    p.cell_data = vec![
        Array::new("wall", Values::I64(wall)),
        Array::new("facet", Values::I64(facet)),
    ];
    p.labels = Some(("wall_names", names));
    Some(p)
}

/// Active contacts as lines: from end1's centre to end2's centre, or to
/// the contact point when end2 is a wall facet; per line, the contact id,
/// the force on end2 (global), the normal force and the gap.
fn contacts(snap: &Snapshot<'_>) -> PolyData {
    let (mut balls, mut blocks, mut clumps) = (Vec::new(), Vec::new(), Vec::new());
    for b in snap.bodies() {
        match b.kind {
            BodyKind::Ball => balls.push(b.pos),
            BodyKind::Block => blocks.push(b.pos),
            BodyKind::Clump => clumps.push((b.pos, b.orientation, b.shape)),
        }
    }
    let templates = snap.templates();
    let centre = |p: PieceId, xc: Vec3| -> Vec3 {
        let at = |v: &[Vec3], id: u64| v.get((id as usize).wrapping_sub(1)).copied();
        match p {
            PieceId::Ball { id } => at(&balls, id),
            PieceId::Block { id } => at(&blocks, id),
            PieceId::Pebble { clump, index } => clumps
                .get((clump as usize).wrapping_sub(1))
                .and_then(|&(x, q, t)| {
                    let t = templates.get(t? as usize)?;
                    Some(q * t.pebbles.get(index as usize)?.0 + x)
                }),
            PieceId::Facet { .. } => None,
        }
        .unwrap_or(xc)
    };
    let mut p = PolyData::new(Cells::Lines);
    let (mut id, mut force, mut f_n, mut gap) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in snap.contacts().filter(|c| c.active) {
        let k = p.points.len() as i64;
        p.points.push(centre(c.end1, c.xc));
        p.points.push(centre(c.end2, c.xc));
        p.connectivity.extend([k, k + 1]);
        id.push(c.id as i64);
        force.push(c.force);
        f_n.push(c.force_local[0]);
        gap.push(c.gap);
    }
    p.cell_data = vec![
        Array::new("id", Values::I64(id)),
        Array::new("force", Values::Vec3(force)),
        Array::new("f_n", Values::F64(f_n)),
        Array::new("gap", Values::F64(gap)),
    ];
    p
}

#[cfg(test)]
mod tests;
