//! talus-geometry: the convex polyhedron kernel of talus rigid blocks.
//!
//! It sits below the engine's narrow phase: the rblock resolvers (ball–rblock,
//! rblock–rblock, rblock–facet) and the volume-stiffness model call it; it
//! knows nothing of bodies, contacts or time. Positions are global, in
//! metres, as `glam::DVec3` (f64).
//!
//! Goals, in order:
//! 1. Correct and robust: every query terminates, never panics and never
//!    returns NaN for finite input; failures are [`GeometryError`] values.
//!    Results are checked against brute force and closed forms.
//! 2. Deterministic: the same input gives the same bits (no fast-math, no
//!    hashing, no threads).
//! 3. Fast in the warm case: per-contact caches ([`FacetCache`],
//!    [`OverlapCache`]) make the common step cheap.
//!
//! Pipeline concepts, one module each:
//! [`hull`] point cloud -> convex hull; [`polyhedron`] hull -> block with
//! adjacency and half-spaces; [`mass`] volume, centroid and inertia;
//! [`support`] support mappings; [`gjk`] distance; [`epa`] penetration; [`signed`] the signed distance
//! of curved shapes;
//! [`closest`] ball–block closest point by traversal; [`overlap`] overlap
//! polyhedron by duality and the fitted contact normal; [`pressed`] the
//! overlap's gradients under a motion of one block (pressed surface, area,
//! elastic foundation); [`cut`] plane cuts and
//! the reduced contact; [`rounding`] erode/dilate and facet extrusion;
//! [`shapes`] named and random block shapes and the principal frame;
//! [`mesh`] blocks from OBJ/STL files, each object checked closed and
//! convex; [`stl`] the STL reader (ASCII at full precision);
//! [`sphere_union`](mod@sphere_union) mass properties of a clump's
//! overlapping pebbles; [`pebble_fill`] clump templates: a closed
//! (possibly non-convex) mesh filled with a chosen number of pebbles, and
//! the fidelity reached.
//!
//! Conventions: a plane's inner side is `normal . x <= offset`; contact
//! normals point from end1 (A) to end2 (B); a gap below zero is overlap.

pub mod area_moments;
pub mod closest;
pub mod cut;
pub mod epa;
pub mod error;
pub mod gjk;
pub mod hull;
pub mod mass;
pub mod mesh;
pub mod overlap;
pub mod pebble_fill;
pub mod polyhedron;
pub mod pressed;
pub mod rounding;
pub mod shapes;
pub mod signed;
pub mod sphere_union;
pub mod stl;
pub mod support;

pub use area_moments::AreaMoments;
pub use closest::{
    closest_surface_point, closest_surface_point_scan, contact_ball_rblock, BallBlockContact,
    FacetCache, SurfaceFeature, SurfacePoint,
};
pub use cut::{
    contact_rblock_rblock_reduced, cut_polyhedron, reduced_from_penetration, section, PlaneCut,
    ReducedContact, Section,
};
pub use epa::{epa_from_simplex, epa_penetration, epa_penetration_with, EpaOptions, Penetration};
pub use error::GeometryError;
pub use gjk::{
    gjk_distance, gjk_distance_from, gjk_distance_with, GjkOptions, Proximity, Separation, Simplex,
};
pub use hull::{convex_hull, convex_hull_with, Hull, HullOptions};
pub use mass::{mass_properties, symmetric_eigen, MassProperties};
pub use mesh::{
    blocks_from_bytes, blocks_from_file, blocks_from_file_with, blocks_from_triangles, MeshBlock,
    MeshError, MeshErrorKind, MeshFormat, MeshOptions,
};
pub use overlap::{
    contact_rblock_rblock_volume, fit_contact_plane, overlap_polyhedron, End, OverlapCache,
    OverlapFace, OverlapPolyhedron, VolumeContact,
};
pub use pebble_fill::{fill_with_pebbles, Fidelity, FillError, FillOptions, PebbleFill};
pub use polyhedron::{ConvexPolyhedron, Edge, Plane};
pub use pressed::{Foundation, PressedContact, PressedSurface};
pub use rounding::{
    contact_rounded, erode, extrude_facet, extrude_facet_away_from, RoundedContact,
    RoundedPolyhedron,
};
pub use shapes::{
    box_block, octahedron_block, principal_frame, prism_block, random_block, tetrahedron_block,
    PrincipalFrame, RandomBlock, Shape,
};
pub use signed::{signed_distance, smooth_signed_distance, SignedContact, SignedOptions};
pub use sphere_union::{sphere_union, UnionProperties};
pub use support::{Posed, Sphere, SupportMap, Triangle};
