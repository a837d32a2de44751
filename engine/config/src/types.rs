//! Validated configuration: plain data, SI units, every default applied.
//!
//! Reads: nothing (built by `validate`). Writes: nothing. Invariant: a value
//! of these types has passed every check this crate can make on its own;
//! items that the engine checks later (model properties, ball generators)
//! carry the [`Location`] of their table or key for its messages.
//!
//! What the engine consumes as is uses the engine's own types (talus-core's
//! [`Timestep`], [`Fixity`], [`RadiusDist`], [`Aabb`], [`Resolution`],
//! [`RigidMotion`], [`Servo`]); the fields that hold them say which of
//! their invariants validation guarantees. Locations stay here, next to
//! those values, never inside them.

use std::path::PathBuf;

use talus_core::generate::{BlockOrientation, RadiusDist};
use talus_core::math::Quat;
use talus_core::wall::{Deformation, Resolution, RigidMotion, Servo};
use talus_core::{Aabb, BlockShape, Fixity, Timestep, Vec3};
use talus_core::{BlockResolution, BlowUpLimits, ContactFrame};

use crate::error::Location;

/// A whole run, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The config file as named by the caller (`load`'s path or
    /// `parse_str`'s origin).
    pub source: PathBuf,
    /// The raw TOML text, kept verbatim for the run metadata (`run.json`).
    pub text: String,
    /// `[run]`.
    pub run: RunSettings,
    /// `[[plugins]]`, in file order.
    pub plugins: Vec<PluginPath>,
    /// `[[models]]`, in file order.
    pub models: Vec<ModelAssignment>,
    /// `[[balls]]`, in file order.
    pub balls: Vec<BallSource>,
    /// `[[walls]]`, in file order.
    pub walls: Vec<WallSource>,
    /// `[[shapes]]`, in file order, a mesh table giving one entry per
    /// object: a shape's index here is its index in the simulation's shape
    /// table, the one [`BlockSource`]s refer to.
    pub shapes: Vec<ShapeSource>,
    /// `[[blocks]]`, in file order.
    pub blocks: Vec<BlockSource>,
    /// The clump shapes of `[[shapes]] kind = "clump"`, in file order:
    /// the template table the [`BlockSource`]s of `clumps` refer to.
    pub templates: Vec<TemplateSource>,
    /// `[[clumps]]`, in file order (shape indices into `templates`).
    pub clumps: Vec<BlockSource>,
    /// `[[bonds]]`, in file order.
    pub bonds: Vec<BondRule>,
    /// `[cell]`, if given.
    pub cell: Option<CellSettings>,
    /// `[output]`.
    pub output: OutputSettings,
}

impl RunConfig {
    /// The model rule that applies to a contact between groups `a` and `b`.
    ///
    /// Precedence: an explicit pair (`["a", "b"]` in either order) wins over
    /// a rule with one wildcard (`["*", "b"]`), which wins over `["*", "*"]`.
    /// Among several one-wildcard rules that match, the first in the file
    /// wins.
    pub fn model_for(&self, a: &str, b: &str) -> Option<&ModelAssignment> {
        let exact = |m: &&ModelAssignment| {
            let [g0, g1] = &m.groups;
            (g0 == a && g1 == b) || (g0 == b && g1 == a)
        };
        let one_wild = |m: &&ModelAssignment| {
            let [g0, g1] = &m.groups;
            (g0 == "*") != (g1 == "*") && {
                let named = if g0 == "*" { g1 } else { g0 };
                named == a || named == b
            }
        };
        let both_wild = |m: &&ModelAssignment| m.groups[0] == "*" && m.groups[1] == "*";
        self.models
            .iter()
            .find(exact)
            .or_else(|| self.models.iter().find(one_wild))
            .or_else(|| self.models.iter().find(both_wild))
    }
}

/// `[run]`: how long and how the run is integrated.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// The `[run]` table, where the engine's complaints about the run as
    /// a whole (no bodies, no timestep) point.
    pub location: Location,
    /// How long to run (`steps` or `time`).
    pub duration: Duration,
    /// The timestep (`dt`, `safety`): `Fixed(dt)` with `dt > 0` s, or
    /// `Auto { safety }` with `safety` in (0, 1] (default 0.8).
    pub dt: Timestep,
    /// Gravitational acceleration, m/s^2. Default `[0, 0, 0]`.
    pub gravity: [f64; 3],
    /// Worker threads; 0 = all cores. Default 0.
    pub threads: usize,
    /// Master seed for every random choice of the run. Default 1.
    pub seed: u64,
    /// Enlargement of piece extents for the cell space, m. `None` = auto
    /// (the engine picks 0.1 x the smallest ball radius); `cell_tolerance = 0`
    /// also means auto.
    pub cell_tolerance: Option<f64>,
    /// How block-block contacts are resolved (`block_resolution`): `full`
    /// (default) at the centroid of the overlap volume, `reduced` at the
    /// centroid of the area cut by the plane halfway between the deepest
    /// points.
    pub block_resolution: BlockResolution,
    /// When the run counts as blown up (`blowup_fraction`,
    /// `blowup_energy_jump`): a fraction > 0 and a jump > 1, or `None`
    /// where the config gives 0 (the check off). Default 0.5 and 1e6.
    pub blowup: BlowUpLimits,
}

/// Run length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Duration {
    /// A number of steps, > 0.
    Steps(u64),
    /// Simulated time, s, > 0.
    Time(f64),
}

/// `[[plugins]]`: one plugin library or folder of libraries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginPath {
    /// The path resolved against the config file's folder; it existed when
    /// the config was validated.
    pub path: PathBuf,
    /// The path as written in the config.
    pub written: String,
    /// Where `path` is written.
    pub location: Location,
}

/// `[[models]]`: a contact model and its properties for a pair of groups.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelAssignment {
    /// Model name, as registered by a plugin (e.g. `"linear"`).
    pub model: String,
    /// The two groups; order is irrelevant; `"*"` matches any group.
    pub groups: [String; 2],
    /// `(name, value, location of the key)`, sorted by name. Values are
    /// unchecked here: the engine checks them against the model descriptor.
    pub properties: Vec<(String, f64, Location)>,
    /// How block contacts between the two groups are resolved
    /// (`block_resolution`); `None` takes `[run] block_resolution`.
    pub block_resolution: Option<BlockResolution>,
    /// How the contacts between the two groups carry their frame
    /// (`frame`, and `no_ratchet` for the six-DOF frame); the default is
    /// [`ContactFrame::Rotations`].
    pub frame: ContactFrame,
    /// The `[[models]]` table.
    pub location: Location,
}

/// `[[bonds]]`: bond the contacts between two groups whose gap is below
/// a value, once, at a step or a time.
#[derive(Debug, Clone, PartialEq)]
pub struct BondRule {
    /// The two groups (no wildcard); order is irrelevant.
    pub groups: [String; 2],
    /// Contacts whose gap is below this bond (m). Default 0: touching or
    /// overlapping pieces.
    pub gap: f64,
    /// When. Default: step 0, before the first cycle.
    pub at: talus_core::When,
    /// The `[[bonds]]` table.
    pub location: Location,
}

/// `[[balls]]`: one source of balls and the properties they share.
#[derive(Debug, Clone, PartialEq)]
pub struct BallSource {
    /// The `[[balls]]` table.
    pub location: Location,
    /// Group name. Default `"default"`.
    pub group: String,
    /// Density, kg/m^3, > 0.
    pub density: f64,
    /// Local damping coefficient, dimensionless, in [0, 1). Default 0.
    pub damping: f64,
    /// Initial velocity, m/s (rows of an explicit list may override it).
    /// Default zeros.
    pub velocity: [f64; 3],
    /// Initial angular velocity, rad/s. Default zeros.
    pub spin: [f64; 3],
    /// Fixed degrees of freedom (`fix`): a fixed component keeps its
    /// initial velocity (bits 0..2 translation along x, y, z; bits 3..5
    /// rotation about x, y, z). Default none.
    pub fix: Fixity,
    /// How the balls are generated.
    pub kind: BallKind,
}

/// How a [`BallSource`] produces balls.
#[derive(Debug, Clone, PartialEq)]
pub enum BallKind {
    /// Non-overlapping random placement, done by the engine
    /// ([`talus_core::generate::random_balls`]).
    Random {
        /// Number of balls, > 0.
        count: usize,
        /// Radius distribution, m: `Fixed(r)` with `r > 0`, or
        /// `Uniform(rmin, rmax)` with `0 < rmin <= rmax`.
        radius: RadiusDist,
        /// Region that holds the balls entirely, m; `min < max` on every
        /// axis.
        region: Aabb,
        /// Seed for this source. Default: `run.seed`.
        seed: u64,
        /// Attempts per ball before giving up, > 0. Default 1000.
        max_attempts: u32,
    },
    /// A simple cubic lattice, placed by the engine
    /// ([`talus_core::generate::lattice_balls`]).
    Lattice {
        /// Ball radius, m, > 0.
        radius: f64,
        /// Centre-to-centre distance, m, >= 2 radius. Default 2 radius.
        spacing: f64,
        /// Region the lattice fills, m; `min < max` on every axis, and at
        /// least one spacing long on every axis when `counts` is `None`.
        region: Aabb,
        /// Number of balls per axis, each > 0; `None` fills the region.
        /// When given, the lattice fits in the region (checked).
        counts: Option<[usize; 3]>,
    },
    /// Explicit balls: `kind = "list"` rows or the rows of a positions file.
    Explicit(Vec<BallRow>),
}

/// One explicit ball.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BallRow {
    /// Centre, m.
    pub pos: [f64; 3],
    /// Radius, m, > 0 (already resolved from the row, the `radius` key or
    /// the xyz header).
    pub radius: f64,
    /// Initial velocity, m/s; `None` = the source's `velocity`.
    pub velocity: Option<[f64; 3]>,
}

/// `[[walls]]`: one wall, always as a triangle mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct WallSource {
    /// The `[[walls]]` table.
    pub location: Location,
    /// Unique wall name.
    pub name: String,
    /// Group name. Default `"wall"`.
    pub group: String,
    /// Contact resolution mode: `Reduced` (associative contact logic only,
    /// the default) or `Full` (plus the segment check, and contact-state
    /// propagation across facets whose normals differ by at most the cutoff
    /// angle).
    pub resolution: Resolution,
    /// Cutoff angle of the full resolution mode, degrees, in [0, 90].
    /// Default 10.
    pub cutoff_angle_deg: f64,
    /// Rigid motion (`[walls.motion]`): translational velocity, m/s, and
    /// angular velocity about [`WallSource::centre`], rad/s (each default
    /// zeros); `None` = fixed wall.
    pub motion: Option<RigidMotion>,
    /// Centre of rotation of `motion`, m (`center` in `[walls.motion]`);
    /// `None` = centroid of the wall's vertices ([`MeshData::centroid`]).
    /// Always `None` without `motion`.
    pub centre: Option<Vec3>,
    /// Deformable motion; exclusive with `motion` and `servo`. Validation
    /// guarantees one velocity per mesh vertex (`v0 + G (x - c)` at the
    /// vertex's initial position, then the rows of a vertex velocity
    /// file) and schedule times that increase strictly.
    pub deform: Option<Deformation>,
    /// Servo control of the translation; exclusive with `motion` and
    /// `deform`. Validation guarantees a unit `direction`, a positive
    /// `target` load in N (a `stress` is multiplied by the wall's area
    /// projected on the plane normal to `direction`), and a positive `gain`
    /// ((m/s)/N) and `max_speed` (m/s).
    pub servo: Option<Servo>,
    /// Per facet, the sides that do not interact: bit 1 the front (the side
    /// the normal points to), bit 2 the back. Empty when every side is
    /// active.
    pub inactive: Vec<u8>,
    /// The triangles, welded, in world coordinates (scale and translate
    /// applied). The right-hand vertex order gives the active side.
    pub mesh: MeshData,
}

/// An indexed triangle mesh, welded: no two vertices closer than the weld
/// tolerance, no unreferenced vertices, no degenerate triangles.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshData {
    /// Vertex positions, m.
    pub vertices: Vec<[f64; 3]>,
    /// Vertex indices; the normal `(v1 - v0) x (v2 - v0)` points to the
    /// active side.
    pub triangles: Vec<[u32; 3]>,
}

impl MeshData {
    /// Mean of the vertex positions, m (zeros for an empty mesh).
    pub fn centroid(&self) -> [f64; 3] {
        let n = self.vertices.len().max(1) as f64;
        let mut sum = [0.0; 3];
        for v in &self.vertices {
            for axis in 0..3 {
                sum[axis] += v[axis];
            }
        }
        sum.map(|s| s / n)
    }
}

/// One block shape of `[[shapes]]` (a mesh table gives one per object).
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeSource {
    /// The `[[shapes]]` table.
    pub location: Location,
    /// The shape, named as the config names it (`name`, or `name/object`
    /// for an object of a mesh file), already in its principal frame with
    /// its volume, unit-density moments and bounding radius. For a shape
    /// of a plugin this is a stand-in (a point-sized tetrahedron) until
    /// the shape is made from its plugin ([`ShapeSource::plugin`]), which
    /// the config cannot load.
    pub shape: BlockShape,
    /// For `kind = "plugin"`: the shape kind and its property values.
    pub plugin: Option<PluginShape>,
}

/// A `[[shapes]]` table of `kind = "plugin"`: a convex shape kind that a
/// plugin adds, with its property values, made once the plugins load.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginShape {
    /// The shape kind, as the plugin names it (e.g. `"superellipsoid"`).
    pub kind: String,
    /// Where `shape` is given.
    pub kind_location: Location,
    /// The property values, sorted by name, each with where it is given.
    pub properties: Vec<(String, f64, Location)>,
}

/// One clump shape of `[[shapes]] kind = "clump"`.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateSource {
    /// The `[[shapes]]` table.
    pub location: Location,
    /// The template, in its principal frame with its mass properties.
    pub template: talus_core::ClumpTemplate,
    /// For a shape filled from a mesh file: the file and how closely its
    /// pebbles fill the solid.
    pub fill: Option<MeshFill>,
}

/// How a clump shape made from a mesh file fills it.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshFill {
    /// The mesh file, as resolved.
    pub path: PathBuf,
    /// Pebbles asked for (the fill may stop short, see
    /// [`talus_geometry::fill_with_pebbles`]).
    pub asked: usize,
    /// What the pebbles reach.
    pub fidelity: talus_geometry::Fidelity,
}

/// `[[blocks]]` or `[[clumps]]`: one source of rigid bodies and the
/// properties they share.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSource {
    /// The `[[blocks]]` table.
    pub location: Location,
    /// Group name. Default `"default"`.
    pub group: String,
    /// Density, kg/m^3, > 0.
    pub density: f64,
    /// Local damping coefficient, dimensionless, in [0, 1). Default 0.
    pub damping: f64,
    /// Initial velocity, m/s (rows may override it). Default zeros.
    pub velocity: [f64; 3],
    /// Initial angular velocity, rad/s (rows may override it). Default
    /// zeros.
    pub spin: [f64; 3],
    /// Fixed degrees of freedom, as for balls; the three rotational flags
    /// are all set or none (a block's rotation is fixed as a whole).
    pub fix: Fixity,
    /// How the blocks are generated.
    pub kind: BlockKind,
}

/// How a [`BlockSource`] produces blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockKind {
    /// Non-overlapping random placement by bounding spheres, done by the
    /// engine ([`talus_core::generate::random_blocks`]).
    Random {
        /// Shape indices with their weights (>= 0, at least one > 0).
        choices: Vec<(u32, f64)>,
        /// Orientations: uniformly random (the default) or one fixed turn
        /// from the frame each shape was given in.
        orientation: BlockOrientation,
        /// Number of blocks, > 0.
        count: usize,
        /// Region that holds the blocks' bounding spheres, m; `min < max`
        /// on every axis.
        region: Aabb,
        /// Seed for this source. Default: `run.seed`.
        seed: u64,
        /// Attempts per block before giving up, > 0. Default 1000.
        max_attempts: u32,
    },
    /// A simple cubic lattice, one block per cell, placed by the engine
    /// ([`talus_core::generate::lattice_blocks`]).
    Lattice {
        /// Shape indices with their weights, as for `Random`.
        choices: Vec<(u32, f64)>,
        /// Orientations: fixed (default the identity: shapes as given) or
        /// uniformly random.
        orientation: BlockOrientation,
        /// Cell size, m, at least
        /// [`talus_core::generate::lattice_block_spacing`] (the default).
        spacing: f64,
        /// Region the lattice fills, m; `min < max` on every axis, at least
        /// one spacing long on every axis when `counts` is `None`.
        region: Aabb,
        /// Number of cells per axis, each > 0; `None` fills the region.
        /// When given, the lattice fits in the region (checked).
        counts: Option<[usize; 3]>,
        /// Seed of the shape and orientation draws. Default: `run.seed`.
        seed: u64,
    },
    /// Explicit blocks: `kind = "list"` rows or the rows of a CSV file.
    Explicit(Vec<BlockRow>),
}

/// One explicit block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockRow {
    /// Shape index.
    pub shape: u32,
    /// Centroid, m; `None` = where the shape was given (its centroid in
    /// the coordinates of its vertices or mesh file).
    pub pos: Option<[f64; 3]>,
    /// Turn from the frame the shape was given in, a unit quaternion
    /// (normalised). Default the identity.
    pub orientation: Quat,
    /// Initial velocity, m/s; `None` = the source's `velocity`.
    pub velocity: Option<[f64; 3]>,
    /// Initial angular velocity, rad/s; `None` = the source's `spin`.
    pub spin: Option<[f64; 3]>,
}

/// `[output]`: where and how often the run writes.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSettings {
    /// Output folder, relative to the current working directory (not to the
    /// config file). Default `out/<config file stem>`.
    pub dir: PathBuf,
    /// Where `dir` is given (the `dir` key of `[output]`), for messages
    /// about the folder; `None` for the default folder.
    pub dir_location: Option<Location>,
    /// Record contacts every N steps; 0 = never. Default 1000.
    pub contacts: u64,
    /// Record bodies every N steps; 0 = never. Default 1000.
    pub bodies: u64,
    /// Record walls every N steps; 0 = never. Default 100.
    pub walls: u64,
    /// Record the periodic cell every N steps; 0 = never. Default 100.
    pub cell: u64,
    /// Write a VTK frame for ParaView (`vtk/` in the output folder) every
    /// N steps; 0 = never. Default 0.
    pub vtk: u64,
    /// Replace an existing output folder. Default true.
    pub overwrite: bool,
    /// Wall-clock seconds after which the parts in flight are closed, so a
    /// killed run loses at most about this much output. Default 10 s.
    pub part_seconds: f64,
    /// Write a checkpoint every N steps (`OUT/checkpoint.bin`, the latest
    /// only); 0 = only when the run is interrupted. Default 0.
    pub checkpoint: u64,
}

/// `[cell]`: the periodic cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSettings {
    /// The cell: corner, edges, periodic axes, velocity gradient.
    pub cell: talus_core::Cell,
    /// Where the `[cell]` table is.
    pub location: Location,
}
