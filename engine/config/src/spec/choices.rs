//! The string-valued choices of the raw config (the kinds of `[[balls]]`,
//! `[[walls]]`, `[[shapes]]` and `[[blocks]]`, resolutions, frames,
//! sides, degrees of freedom, faces), each naming its allowed strings in
//! its wrong-value error, and the keys each kind of table allows.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

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
