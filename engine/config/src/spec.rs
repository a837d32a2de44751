//! Raw configuration, straight from serde.
//!
//! Reads: TOML text (through `toml`). Writes: `*Spec` types whose fields keep
//! their byte spans (`Spanned`). Invariant: only the shape of the input is
//! checked here (known keys, types, units in the "expected ..." wording);
//! ranges, defaults and cross-key rules belong to `validate`.
//!
//! Values use small newtypes ([`Num`], [`Vec3`], [`Int`], choice enums) whose
//! serde `expecting` text names the type and unit, so a wrong type reads
//! "expected a number (m)" rather than "expected f64".

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_spanned::Spanned;

/// A unit, for the "expected ..." wording of wrong-type errors.
pub(crate) trait Unit {
    /// The unit symbol, or `""` for dimensionless values.
    const SYMBOL: &'static str;
}

macro_rules! units {
    ($($name:ident = $symbol:literal),+ $(,)?) => {$(
        #[derive(Debug, Clone, Copy)]
        pub(crate) enum $name {}
        impl Unit for $name {
            const SYMBOL: &'static str = $symbol;
        }
    )+};
}

units! {
    Unitless = "",
    Meters = "m",
    Seconds = "s",
    KgPerM3 = "kg/m^3",
    MetersPerS = "m/s",
    MetersPerS2 = "m/s^2",
    RadPerS = "rad/s",
    Degrees = "degrees",
    PerS = "1/s",
    Newtons = "N",
    Pascals = "Pa",
    MetersPerSPerN = "(m/s)/N",
    PerPaS = "1/(Pa s)",
}

fn number_phrase<U: Unit>(f: &mut fmt::Formatter<'_>, article: &str, noun: &str) -> fmt::Result {
    if U::SYMBOL.is_empty() {
        write!(f, "{article}{noun}")
    } else {
        write!(f, "{article}{noun} ({})", U::SYMBOL)
    }
}

/// A finite number in unit `U`; TOML integers are accepted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Num<U>(pub f64, PhantomData<U>);

struct NumVisitor<U>(PhantomData<U>);

impl<'de, U: Unit> Visitor<'de> for NumVisitor<U> {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        number_phrase::<U>(f, "a ", "number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }
}

impl<'de, U: Unit> Deserialize<'de> for Num<U> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumVisitor::<U>(PhantomData))
            .map(|v| Num(v, PhantomData))
    }
}

/// Three finite numbers in unit `U`: `[x, y, z]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vec3<U>(pub [f64; 3], PhantomData<U>);

struct Vec3Visitor<U>(PhantomData<U>);

impl<'de, U: Unit> Visitor<'de> for Vec3Visitor<U> {
    type Value = [f64; 3];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        number_phrase::<U>(f, "an array of ", "3 numbers [x, y, z]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[f64; 3], A::Error> {
        let mut out = [0.0; 3];
        for (i, slot) in out.iter_mut().enumerate() {
            match seq.next_element::<Num<U>>()? {
                Some(n) => *slot = n.0,
                None => return Err(de::Error::invalid_length(i, &self)),
            }
        }
        let mut extra = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            extra += 1;
        }
        if extra > 0 {
            return Err(de::Error::invalid_length(3 + extra, &self));
        }
        Ok(out)
    }
}

impl<'de, U: Unit> Deserialize<'de> for Vec3<U> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(Vec3Visitor::<U>(PhantomData))
            .map(|v| Vec3(v, PhantomData))
    }
}

/// An integer (range checked in `validate`). A float with an integral value
/// such as `2e4` is accepted, since that is how large counts are often typed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Int(pub i64);

struct IntVisitor;

impl Visitor<'_> for IntVisitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        // 2^53: beyond it not every integer is a float.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if v.is_finite() && v.fract() == 0.0 && v.abs() <= EXACT {
            Ok(v as i64)
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntVisitor).map(Int)
    }
}

/// Defines a string-valued choice whose wrong-value error lists the
/// allowed strings.
macro_rules! choice {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub(crate) enum $name { $($variant),+ }

        impl $name {
            /// The string as written in the config.
            #[allow(dead_code, reason = "only the kinds are named back in messages")]
            pub(crate) fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The choice written as `s`, if any.
            #[allow(dead_code, reason = "only the kinds are looked up by name")]
            pub(crate) fn from_name(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("one of ")?;
                        let names: &[&str] = &[$($text),+];
                        for (i, n) in names.iter().enumerate() {
                            if i > 0 {
                                f.write_str(", ")?;
                            }
                            write!(f, "\"{n}\"")?;
                        }
                        Ok(())
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        match v {
                            $($text => Ok($name::$variant),)+
                            _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                        }
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

choice!(
    /// `[[balls]] kind`.
    BallKindSpec { Random = "random", Lattice = "lattice", List = "list", File = "file" }
);
choice!(
    /// `[[walls]] kind`.
    WallKindSpec { Box = "box", Mesh = "mesh" }
);
choice!(
    /// `[[shapes]] kind`.
    ShapeKindSpec {
        Box = "box",
        Tetrahedron = "tetrahedron",
        Octahedron = "octahedron",
        Prism = "prism",
        Random = "random",
        Vertices = "vertices",
        Mesh = "mesh",
        Clump = "clump",
        Plugin = "plugin",
    }
);
choice!(
    /// `[[blocks]] kind`.
    BlockKindSpec { Random = "random", Lattice = "lattice", List = "list", File = "file" }
);

/// Keys every `[[balls]]` table may have, whatever its kind.
pub(crate) const BALL_COMMON_KEYS: &[&str] = &[
    "kind", "group", "density", "damping", "velocity", "spin", "fix",
];
/// Keys every `[[walls]]` table may have, whatever its kind.
pub(crate) const WALL_COMMON_KEYS: &[&str] = &[
    "name",
    "kind",
    "group",
    "resolution",
    "cutoff_angle",
    "motion",
    "deform",
    "servo",
    "inactive",
];

/// Keys every `[[shapes]]` table may have, whatever its kind.
pub(crate) const SHAPE_COMMON_KEYS: &[&str] = &["name", "kind", "dilate", "erode"];
/// Keys every `[[blocks]]` table may have, whatever its kind.
pub(crate) const BLOCK_COMMON_KEYS: &[&str] = &[
    "kind", "shape", "shapes", "weights", "group", "density", "damping", "velocity", "spin", "fix",
];

impl ShapeKindSpec {
    /// The keys this kind adds to [`SHAPE_COMMON_KEYS`].
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            ShapeKindSpec::Box => &["size"],
            ShapeKindSpec::Tetrahedron | ShapeKindSpec::Octahedron => &["edge"],
            ShapeKindSpec::Prism => &["sides", "radius", "height"],
            ShapeKindSpec::Random => &["vertices", "axes", "roughness", "seed"],
            ShapeKindSpec::Vertices => &["points", "hull"],
            ShapeKindSpec::Mesh => &["path", "scale"],
            ShapeKindSpec::Clump => &["pebbles", "path", "scale", "count", "resolution"],
            ShapeKindSpec::Plugin => &["shape", "properties"],
        }
    }
}

impl BlockKindSpec {
    /// The keys this kind adds to [`BLOCK_COMMON_KEYS`], where `rows` is
    /// the key of a list's rows (`["blocks"]` or `["clumps"]`).
    pub(crate) fn keys(self, rows: &'static [&'static str]) -> &'static [&'static str] {
        match self {
            BlockKindSpec::Random => &["count", "region", "orientation", "seed", "max_attempts"],
            BlockKindSpec::Lattice => &["region", "spacing", "counts", "orientation", "seed"],
            BlockKindSpec::List => rows,
            BlockKindSpec::File => &["path"],
        }
    }
}

impl BallKindSpec {
    /// The keys this kind adds to [`BALL_COMMON_KEYS`].
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            BallKindSpec::Random => &["count", "radius", "region", "seed", "max_attempts"],
            BallKindSpec::Lattice => &["radius", "spacing", "region", "counts"],
            BallKindSpec::List => &["radius", "balls"],
            BallKindSpec::File => &["path", "radius", "format"],
        }
    }
}

impl WallKindSpec {
    /// The keys this kind adds to [`WALL_COMMON_KEYS`].
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            WallKindSpec::Box => &["min", "max", "open", "divisions"],
            WallKindSpec::Mesh => &["path", "scale", "translate", "flip_normals"],
        }
    }
}
choice!(
    /// `[[walls]] resolution`.
    ResolutionSpec { Reduced = "reduced", Full = "full" }
);
choice!(
    /// `block_resolution` of `[run]` and `[[models]]`.
    BlockResolutionSpec { Reduced = "reduced", Full = "full", Potential = "potential" }
);
choice!(
    /// `frame` of `[[models]]`: how contacts carry their frame.
    FrameSpec { Rotations = "rotations", SixDof = "six_dof" }
);
choice!(
    /// `side` of a `[[walls]] inactive` entry.
    SideSpec { Front = "front", Back = "back", Both = "both" }
);
choice!(
    /// `[[balls]] format`.
    PositionsFormat { Xyz = "xyz", Csv = "csv" }
);
choice!(
    /// An entry of `[[balls]] fix`.
    DofSpec { X = "x", Y = "y", Z = "z", Rx = "rx", Ry = "ry", Rz = "rz" }
);
choice!(
    /// An entry of `[[walls]] open`.
    FaceSpec { MinusX = "-x", PlusX = "+x", MinusY = "-y", PlusY = "+y", MinusZ = "-z", PlusZ = "+z" }
);

/// `dt`: `"auto"` or a number of seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DtSpec {
    Auto,
    Fixed(f64),
}

impl<'de> Deserialize<'de> for DtSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DtSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"auto\" or a number (s)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DtSpec, E> {
                if v == "auto" {
                    Ok(DtSpec::Auto)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DtSpec, E> {
                Ok(DtSpec::Fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DtSpec, E> {
                Ok(DtSpec::Fixed(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DtSpec, E> {
                if v.is_finite() {
                    Ok(DtSpec::Fixed(v))
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `radius`: a number, or `[rmin, rmax]` for a uniform distribution.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RadiusSpec {
    Fixed(f64),
    Range(f64, f64),
}

impl<'de> Deserialize<'de> for RadiusSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RadiusSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number (m) or an array [rmin, rmax] (m)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RadiusSpec, E> {
                Ok(RadiusSpec::Fixed(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RadiusSpec, E> {
                Ok(RadiusSpec::Fixed(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RadiusSpec, E> {
                if v.is_finite() {
                    Ok(RadiusSpec::Fixed(v))
                } else {
                    Err(E::invalid_value(de::Unexpected::Float(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RadiusSpec, A::Error> {
                let lo = seq.next_element::<Num<Meters>>()?;
                let hi = seq.next_element::<Num<Meters>>()?;
                let mut n = usize::from(lo.is_some()) + usize::from(hi.is_some());
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                match (lo, hi) {
                    (Some(lo), Some(hi)) if n == 2 => Ok(RadiusSpec::Range(lo.0, hi.0)),
                    _ => Err(de::Error::invalid_length(n, &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A rotation as a quaternion `[w, x, y, z]` (checked to be of unit length
/// in `validate`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuatSpec(pub [f64; 4]);

const QUAT_EXPECTING: &str = "an array of 4 numbers [w, x, y, z] (a unit quaternion)";

impl<'de> Deserialize<'de> for QuatSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QuatSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(QUAT_EXPECTING)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<QuatSpec, A::Error> {
                quat_from_seq(seq, &self)
            }
        }
        d.deserialize_seq(V)
    }
}

fn quat_from_seq<'de, A: SeqAccess<'de>>(
    mut seq: A,
    expected: &dyn de::Expected,
) -> Result<QuatSpec, A::Error> {
    let mut out = [0.0; 4];
    let mut n = 0;
    while let Some(v) = seq.next_element::<Num<Unitless>>()? {
        if n < 4 {
            out[n] = v.0;
        }
        n += 1;
    }
    if n == 4 {
        Ok(QuatSpec(out))
    } else {
        Err(de::Error::invalid_length(n, expected))
    }
}

/// `orientation` of a block fill: `"random"` or a quaternion.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OrientationSpec {
    Random,
    Fixed(QuatSpec),
}

impl<'de> Deserialize<'de> for OrientationSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrientationSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "\"random\" or {QUAT_EXPECTING}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OrientationSpec, E> {
                if v == "random" {
                    Ok(OrientationSpec::Random)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<OrientationSpec, A::Error> {
                quat_from_seq(seq, &self).map(OrientationSpec::Fixed)
            }
        }
        d.deserialize_any(V)
    }
}

/// `properties`: a table of numbers, keys with their spans, in key order.
#[derive(Debug, Clone, Default)]
pub(crate) struct PropertiesSpec(pub Vec<(Spanned<String>, Spanned<Num<Unitless>>)>);

impl<'de> Deserialize<'de> for PropertiesSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PropertiesSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of numbers, e.g. { kn = 1e5, fric = 0.5 }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PropertiesSpec, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<Spanned<Num<Unitless>>>()?;
                    out.push((key, value));
                }
                Ok(PropertiesSpec(out))
            }
        }
        d.deserialize_map(V)
    }
}

type S<T> = Spanned<T>;

/// The whole file.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a TOML document")]
pub(crate) struct ConfigSpec {
    pub run: Option<S<RunSpec>>,
    #[serde(default)]
    pub plugins: Vec<S<PluginSpec>>,
    #[serde(default)]
    pub models: Vec<S<ModelSpec>>,
    #[serde(default)]
    pub balls: Vec<S<BallSpec>>,
    #[serde(default)]
    pub walls: Vec<S<WallSpec>>,
    #[serde(default)]
    pub shapes: Vec<S<ShapeSpec>>,
    #[serde(default)]
    pub blocks: Vec<S<BlockSpec>>,
    #[serde(default)]
    pub clumps: Vec<S<BlockSpec>>,
    #[serde(default)]
    pub bonds: Vec<S<BondSpec>>,
    pub cell: Option<S<CellSpec>>,
    pub output: Option<S<OutputSpec>>,
}

/// `[cell]`: the periodic cell, as a box (`min`, `max`) or a corner and
/// three edge vectors (`origin`, `edges`).
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table [cell] with min and max, or origin and edges"
)]
pub(crate) struct CellSpec {
    pub min: Option<S<Vec3<Meters>>>,
    pub max: Option<S<Vec3<Meters>>>,
    pub origin: Option<S<Vec3<Meters>>>,
    pub edges: Option<S<Vec<S<Vec3<Meters>>>>>,
    pub periodic: Option<S<[bool; 3]>>,
    pub velocity_gradient: Option<S<Vec<S<Vec3<PerS>>>>>,
    pub servo: Option<S<CellServoSpec>>,
    #[serde(default)]
    pub stages: Vec<S<CellStageSpec>>,
}

/// `[[cell.stages]]`: a later stage of the cell's motion.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table [[cell.stages]] with at_step or at_time, and velocity_gradient or servo"
)]
pub(crate) struct CellStageSpec {
    pub at_step: Option<S<Int>>,
    pub at_time: Option<S<Num<Seconds>>>,
    pub velocity_gradient: Option<S<Vec<S<Vec3<PerS>>>>>,
    pub servo: Option<S<CellServoSpec>>,
}

/// `[cell.servo]`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table [cell.servo] with control, stress, gain and max_rate"
)]
pub(crate) struct CellServoSpec {
    pub control: S<[bool; 3]>,
    pub stress: S<Vec3<Pascals>>,
    pub gain: Option<S<Num<PerPaS>>>,
    pub max_rate: Option<S<Num<PerS>>>,
}

/// `[run]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [run]")]
pub(crate) struct RunSpec {
    pub steps: Option<S<Int>>,
    pub time: Option<S<Num<Seconds>>>,
    pub dt: Option<S<DtSpec>>,
    pub safety: Option<S<Num<Unitless>>>,
    pub gravity: Option<S<Vec3<MetersPerS2>>>,
    pub threads: Option<S<Int>>,
    pub seed: Option<S<Int>>,
    pub cell_tolerance: Option<S<Num<Meters>>>,
    pub block_resolution: Option<S<BlockResolutionSpec>>,
    pub blowup_fraction: Option<S<Num<Unitless>>>,
    pub blowup_energy_jump: Option<S<Num<Unitless>>>,
}

/// `[[plugins]]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[plugins]] with a path")]
pub(crate) struct PluginSpec {
    pub path: S<String>,
}

/// `[[models]]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[models]]")]
pub(crate) struct ModelSpec {
    pub model: S<String>,
    pub groups: S<Vec<S<String>>>,
    pub properties: Option<S<PropertiesSpec>>,
    pub block_resolution: Option<S<BlockResolutionSpec>>,
    pub frame: Option<S<FrameSpec>>,
    pub no_ratchet: Option<S<bool>>,
}

/// `[[bonds]]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[bonds]]")]
pub(crate) struct BondSpec {
    pub groups: S<Vec<S<String>>>,
    pub gap: Option<S<Num<Meters>>>,
    pub at_step: Option<S<Int>>,
    pub at_time: Option<S<Num<Seconds>>>,
}

/// `region = { min = [..], max = [..] }`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { min = [x, y, z], max = [x, y, z] } (m)"
)]
pub(crate) struct RegionSpec {
    pub min: S<Vec3<Meters>>,
    pub max: S<Vec3<Meters>>,
}

/// One row of `kind = "list"`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { pos = [x, y, z], radius = r, velocity = [vx, vy, vz] }"
)]
pub(crate) struct BallRowSpec {
    pub pos: S<Vec3<Meters>>,
    pub radius: Option<S<Num<Meters>>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
}

/// `[[balls]]`: one flat table for every kind; `validate` rejects the keys
/// that the chosen kind does not use.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[balls]]")]
pub(crate) struct BallSpec {
    pub kind: S<BallKindSpec>,
    pub group: Option<S<String>>,
    pub density: Option<S<Num<KgPerM3>>>,
    pub damping: Option<S<Num<Unitless>>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
    pub fix: Option<S<Vec<S<DofSpec>>>>,
    pub count: Option<S<Int>>,
    pub radius: Option<S<RadiusSpec>>,
    pub region: Option<S<RegionSpec>>,
    pub seed: Option<S<Int>>,
    pub max_attempts: Option<S<Int>>,
    pub spacing: Option<S<Num<Meters>>>,
    pub counts: Option<S<Vec<S<Int>>>>,
    pub balls: Option<S<Vec<S<BallRowSpec>>>>,
    pub path: Option<S<String>>,
    pub format: Option<S<PositionsFormat>>,
}

/// `[walls.motion]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [walls.motion]")]
pub(crate) struct MotionSpec {
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
    pub center: Option<S<Vec3<Meters>>>,
}

/// `[walls.deform]`: per-vertex velocities from an affine field.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [walls.deform]")]
pub(crate) struct DeformSpec {
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub gradient: Option<S<Vec<S<Vec3<PerS>>>>>,
    pub center: Option<S<Vec3<Meters>>>,
    pub schedule: Option<S<ScheduleSpec>>,
    pub vertex_velocities: Option<S<String>>,
}

/// `schedule = { time = [..], factor = [..] }`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { time = [t0, t1, ..] (s), factor = [f0, f1, ..] }"
)]
pub(crate) struct ScheduleSpec {
    pub time: S<Vec<S<Num<Seconds>>>>,
    pub factor: S<Vec<S<Num<Unitless>>>>,
}

/// `[walls.servo]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [walls.servo]")]
pub(crate) struct ServoSpec {
    pub direction: S<Vec3<Unitless>>,
    pub force: Option<S<Num<Newtons>>>,
    pub stress: Option<S<Num<Pascals>>>,
    pub gain: S<Num<MetersPerSPerN>>,
    pub max_speed: S<Num<MetersPerS>>,
}

/// An entry of `[[walls]] inactive`: a side and at most one facet selector.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { side = \"front\" | \"back\" | \"both\" } with at most one of facets = [i, ..], normal = [x, y, z] (and angle), region = { min, max }"
)]
pub(crate) struct InactiveSpec {
    pub side: S<SideSpec>,
    pub facets: Option<S<Vec<S<Int>>>>,
    pub normal: Option<S<Vec3<Unitless>>>,
    pub angle: Option<S<Num<Degrees>>>,
    pub region: Option<S<RegionSpec>>,
}

/// `[[walls]]`: one flat table for both kinds, like [`BallSpec`].
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[walls]]")]
pub(crate) struct WallSpec {
    pub name: S<String>,
    pub kind: S<WallKindSpec>,
    pub group: Option<S<String>>,
    pub resolution: Option<S<ResolutionSpec>>,
    pub cutoff_angle: Option<S<Num<Degrees>>>,
    pub motion: Option<S<MotionSpec>>,
    pub deform: Option<S<DeformSpec>>,
    pub servo: Option<S<ServoSpec>>,
    pub inactive: Option<S<Vec<S<InactiveSpec>>>>,
    pub min: Option<S<Vec3<Meters>>>,
    pub max: Option<S<Vec3<Meters>>>,
    pub open: Option<S<Vec<S<FaceSpec>>>>,
    pub divisions: Option<S<Int>>,
    pub path: Option<S<String>>,
    pub scale: Option<S<Num<Unitless>>>,
    pub translate: Option<S<Vec3<Meters>>>,
    pub flip_normals: Option<S<bool>>,
}

/// `[[shapes]]`: one flat table for every kind, like [`BallSpec`].
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[shapes]]")]
pub(crate) struct ShapeSpec {
    pub name: S<String>,
    pub kind: S<ShapeKindSpec>,
    pub size: Option<S<Vec3<Meters>>>,
    pub edge: Option<S<Num<Meters>>>,
    pub sides: Option<S<Int>>,
    pub radius: Option<S<Num<Meters>>>,
    pub height: Option<S<Num<Meters>>>,
    pub vertices: Option<S<Vec<S<Int>>>>,
    pub axes: Option<S<Vec3<Meters>>>,
    pub roughness: Option<S<Num<Unitless>>>,
    pub seed: Option<S<Int>>,
    pub points: Option<S<Vec<S<Vec3<Meters>>>>>,
    pub hull: Option<S<bool>>,
    pub path: Option<S<String>>,
    pub scale: Option<S<Num<Unitless>>>,
    pub dilate: Option<S<Num<Meters>>>,
    pub erode: Option<S<Num<Meters>>>,
    pub pebbles: Option<S<Vec<S<PebbleSpec>>>>,
    pub count: Option<S<Int>>,
    pub resolution: Option<S<Int>>,
    pub shape: Option<S<String>>,
    pub properties: Option<S<PropertiesSpec>>,
}

/// One pebble of `[[shapes]] kind = "clump"`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { pos = [x, y, z], radius = r }"
)]
pub(crate) struct PebbleSpec {
    pub pos: S<Vec3<Meters>>,
    pub radius: S<Num<Meters>>,
}

/// One row of `[[blocks]] kind = "list"`.
#[derive(Debug, serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table { shape = \"name\", pos = [x, y, z], orientation = [w, x, y, z], velocity = [vx, vy, vz], spin = [wx, wy, wz] }"
)]
pub(crate) struct BlockRowSpec {
    pub shape: Option<S<String>>,
    pub pos: Option<S<Vec3<Meters>>>,
    pub orientation: Option<S<QuatSpec>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
}

/// `[[blocks]]` and `[[clumps]]`: one flat table for every kind, like
/// [`BallSpec`] (a list's rows under `blocks` or `clumps`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [[blocks]] or [[clumps]]")]
pub(crate) struct BlockSpec {
    pub kind: S<BlockKindSpec>,
    pub shape: Option<S<String>>,
    pub shapes: Option<S<Vec<S<String>>>>,
    pub weights: Option<S<Vec<S<Num<Unitless>>>>>,
    pub group: Option<S<String>>,
    pub density: Option<S<Num<KgPerM3>>>,
    pub damping: Option<S<Num<Unitless>>>,
    pub velocity: Option<S<Vec3<MetersPerS>>>,
    pub spin: Option<S<Vec3<RadPerS>>>,
    pub fix: Option<S<Vec<S<DofSpec>>>>,
    pub count: Option<S<Int>>,
    pub region: Option<S<RegionSpec>>,
    pub orientation: Option<S<OrientationSpec>>,
    pub seed: Option<S<Int>>,
    pub max_attempts: Option<S<Int>>,
    pub spacing: Option<S<Num<Meters>>>,
    pub counts: Option<S<Vec<S<Int>>>>,
    pub blocks: Option<S<Vec<S<BlockRowSpec>>>>,
    pub clumps: Option<S<Vec<S<BlockRowSpec>>>>,
    pub path: Option<S<String>>,
}

/// `[output]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table [output]")]
pub(crate) struct OutputSpec {
    pub dir: Option<S<String>>,
    pub contacts: Option<S<Int>>,
    pub bodies: Option<S<Int>>,
    pub walls: Option<S<Int>>,
    pub cell: Option<S<Int>>,
    pub vtk: Option<S<Int>>,
    pub overwrite: Option<S<bool>>,
    pub part_seconds: Option<S<Num<Seconds>>>,
    pub checkpoint: Option<S<Int>>,
}
