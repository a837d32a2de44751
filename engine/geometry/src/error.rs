//! Typed failures of the geometry kernel.
//!
//! Reads: nothing. Writes: nothing.
//! Invariant: no public function of this crate panics on bad input; it returns
//! one of these values instead, and every iterative routine that hits its
//! iteration cap says so with [`GeometryError::IterationCap`].

use std::fmt;

/// Why a geometric construction or query could not produce a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GeometryError {
    /// An input coordinate, direction or radius is NaN or infinite.
    NonFinite,
    /// Fewer distinct points than the construction needs (after merging
    /// points closer than the tolerance).
    TooFewPoints {
        /// Number of distinct points found.
        distinct: usize,
    },
    /// All points lie on one line (within the tolerance): no volume.
    Collinear,
    /// All points lie in one plane (within the tolerance): no volume.
    Coplanar,
    /// An iterative algorithm reached its iteration cap before converging.
    IterationCap {
        /// The algorithm that gave up (`"gjk"`, `"epa"`, `"hull"`, ...).
        stage: &'static str,
    },
    /// The two shapes do not overlap, so there is no overlap polyhedron or
    /// penetration.
    NotOverlapping,
    /// No point strictly inside a set of half-spaces could be found (the
    /// intersection is empty or thinner than the tolerance).
    NoInteriorPoint,
    /// A scalar argument is out of its valid range (negative radius, zero
    /// direction, ...).
    InvalidArgument(&'static str),
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NonFinite => write!(f, "input contains a non-finite value"),
            Self::TooFewPoints { distinct } => {
                write!(f, "need at least 4 distinct points, found {distinct}")
            }
            Self::Collinear => write!(f, "points are collinear within the tolerance"),
            Self::Coplanar => write!(f, "points are coplanar within the tolerance"),
            Self::IterationCap { stage } => {
                write!(f, "{stage} reached its iteration cap without converging")
            }
            Self::NotOverlapping => write!(f, "the shapes do not overlap"),
            Self::NoInteriorPoint => {
                write!(f, "no point strictly inside the half-space intersection")
            }
            Self::InvalidArgument(what) => write!(f, "invalid argument: {what}"),
        }
    }
}

impl std::error::Error for GeometryError {}
