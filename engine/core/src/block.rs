//! Rigid blocks: convex polyhedral bodies, their shapes and how one is
//! made.
//!
//! A shape is stored once, in its principal frame (centroid at the origin,
//! inertia tensor diagonal), in the simulation's shape table; a block is a
//! body of the block archetype (see [`crate::body::BlockBundle`]) with a
//! pose, the shape's index and the mass and principal moments its density
//! gives. A block's surface in world axes is `R x + c` for every point `x`
//! of its shape, `R` its orientation and `c` its centroid.

use crate::balls::Fixity;
use crate::body::{self, BlockBundle, BlocksMut, BlocksRef};
use crate::convex::ConvexGeometry;
use crate::error::SetupError;
use crate::math::{Quat, Vec3};
use crate::rigid::PrincipalInertia;
use crate::sim::Simulation;
use talus_geometry::{principal_frame, ConvexPolyhedron, RoundedPolyhedron};

/// How the contacts of blocks (with blocks and with wall facets) are
/// resolved, per pair of groups (`docs/physics.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BlockResolution {
    /// At the centroid of the overlap polyhedron, along its volume's
    /// gradient under a translation (the elastic foundation under a face).
    #[default]
    Full,
    /// At the area the two blocks' cuts share halfway between their
    /// deepest points, along the penetration normal.
    Reduced,
    /// As `Full`, with the contact on the line of action of the overlap
    /// volume's whole gradient and the twist arm and the contact area's
    /// gradient given to the model, so that a volume-based model can
    /// derive its force from a potential (no energy created at impacts).
    Potential,
}

/// A block shape in its principal frame.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockShape {
    /// Name, for messages and output.
    pub name: String,
    /// The polyhedron (the core of a rounded shape) in the principal
    /// coordinates of the shape: its centroid at the origin, principal
    /// axes along x, y, z with ascending moments.
    pub polyhedron: ConvexPolyhedron,
    /// Rounding radius (m): the shape is the polyhedron dilated by a ball
    /// of this radius (0: sharp).
    pub rounding: f64,
    /// Volume (m^3).
    pub volume: f64,
    /// Principal moments of inertia for unit density (m^5).
    pub unit_moments: Vec3,
    /// Distance from the centroid to the farthest point (m).
    pub radius: f64,
    /// Rotation from the principal frame to the frame the polyhedron was
    /// given in: a point `y` of [`BlockShape::polyhedron`] is the point
    /// `input_rotation * y + input_centroid` of the polyhedron as given.
    pub input_rotation: Quat,
    /// The centroid in the frame the polyhedron was given in (m).
    pub input_centroid: Vec3,
    /// For a shape a plugin gives ([`crate::convex`]): the shape, whose
    /// bodies' contacts are resolved from its support function;
    /// [`BlockShape::polyhedron`] is then an outline inscribed in it, for
    /// output. `None` for a polyhedron.
    pub convex: Option<ConvexGeometry>,
}

impl BlockShape {
    /// The shape of `polyhedron` (in any frame), moved to its principal
    /// frame.
    pub fn new(name: &str, polyhedron: &ConvexPolyhedron) -> Result<BlockShape, SetupError> {
        Self::rounded(name, polyhedron, 0.0)
    }

    /// The shape of `core` (in any frame) dilated by a ball of radius
    /// `rounding`, moved to the principal frame of the rounded solid (its
    /// centroid and axes, which are the core's only for a symmetric core).
    ///
    /// # Errors
    /// [`SetupError::Shape`] for a core without volume or a negative or
    /// non-finite radius.
    pub fn rounded(
        name: &str,
        core: &ConvexPolyhedron,
        rounding: f64,
    ) -> Result<BlockShape, SetupError> {
        let fail = |message: String| SetupError::Shape {
            shape: name.to_string(),
            message,
        };
        if !(rounding >= 0.0 && rounding.is_finite()) {
            return Err(fail(format!(
                "the rounding radius must be finite and >= 0 (got {rounding:e} m)"
            )));
        }
        let (mass, rotation, centroid) = if rounding == 0.0 {
            let frame = principal_frame(core);
            let m = *core.mass_properties();
            (m, frame.rotation, frame.centroid)
        } else {
            let m = RoundedPolyhedron {
                core: core.clone(),
                radius: rounding,
            }
            .mass_properties();
            (m, m.principal_rotation(), m.centroid)
        };
        let back = rotation.conjugate();
        let poly = core.transformed(back, -(back * centroid));
        let volume = mass.volume;
        let radius = rounding
            + poly
                .vertices()
                .iter()
                .map(|v| v.length())
                .fold(0.0, f64::max);
        if !(volume > 0.0
            && volume.is_finite()
            && core.volume() > 0.0
            && mass.principal_moments.min_element() > 0.0)
        {
            return Err(fail(format!(
                "the polyhedron has no volume (volume {:e} m^3)",
                core.volume()
            )));
        }
        Ok(BlockShape {
            name: name.to_string(),
            volume,
            unit_moments: mass.principal_moments,
            radius,
            polyhedron: poly,
            rounding,
            input_rotation: rotation,
            input_centroid: centroid,
            convex: None,
        })
    }
}

/// What is needed to create one rigid body: a block, or a clump
/// ([`crate::clump::ClumpInit`] is this type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockInit {
    /// Index of the shape (see [`Simulation::add_shape`]), or of a clump's
    /// template (see [`Simulation::add_template`]).
    pub shape: u32,
    /// Centroid (m).
    pub pos: Vec3,
    /// Rotation from the shape's principal frame to the world.
    pub orientation: Quat,
    /// Initial velocity (m/s).
    pub velocity: Vec3,
    /// Initial angular velocity in world axes (rad/s).
    pub spin: Vec3,
    /// Density (kg/m^3), > 0.
    pub density: f64,
    /// Group id.
    pub group: u16,
    /// Local damping coefficient in [0, 1).
    pub damping: f64,
    /// Fixed degrees of freedom: translations one by one, the rotation as a
    /// whole (all three rotational flags or none).
    pub fixity: Fixity,
}

impl BlockInit {
    /// Whether the values can make a `body` ("block", "clump"): a positive
    /// density, a finite state, a non-zero orientation, damping in
    /// [0, 1), the rotation fixed as a whole or not at all.
    pub(crate) fn check(&self, body: &str) -> Result<(), String> {
        if !(self.density > 0.0 && self.density.is_finite()) {
            return Err(format!("density must be positive, got {}", self.density));
        }
        let finite = self.pos.is_finite() && self.velocity.is_finite() && self.spin.is_finite();
        if !finite || !self.orientation.is_finite() || self.orientation.length() < 1e-12 {
            return Err(
                "position, velocity or orientation is not finite (or the orientation is zero)"
                    .into(),
            );
        }
        if !(0.0..1.0).contains(&self.damping) {
            return Err(format!("damping must lie in [0, 1), got {}", self.damping));
        }
        let rotation = (3..6).filter(|&k| self.fixity.fixed(k)).count();
        if rotation != 0 && rotation != 3 {
            return Err(format!(
                "a {body}'s rotation is fixed as a whole or not at all (its axes do not turn apart)"
            ));
        }
        Ok(())
    }
}

impl Simulation {
    /// Adds a block shape; returns its index.
    pub fn add_shape(&mut self, shape: BlockShape) -> u32 {
        self.turn_shapes.push(crate::timestep::shape_turn(&shape));
        self.shapes.push(shape);
        (self.shapes.len() - 1) as u32
    }

    /// The block shapes, by index.
    pub fn shapes(&self) -> &[BlockShape] {
        &self.shapes
    }

    /// Adds a block; returns its id (dense index + 1; blocks are numbered
    /// apart from balls).
    pub fn add_block(&mut self, b: BlockInit) -> Result<u64, SetupError> {
        let id = self.n_blocks() as u64 + 1;
        let bad = |message: String| SetupError::Block { id, message };
        let Some(shape) = self.shapes.get(b.shape as usize) else {
            return Err(bad(format!("there is no shape {}", b.shape)));
        };
        b.check("block").map_err(bad)?;
        let mass = b.density * shape.volume;
        let Some(inertia) = PrincipalInertia::new(shape.unit_moments * b.density) else {
            return Err(bad("its shape has no positive principal moments".into()));
        };
        self.world.spawn(BlockBundle::new(&b, mass, inertia));
        Ok(id)
    }

    /// Every block's columns, read-only (index `i` is the block of id
    /// `i + 1`).
    pub fn blocks(&self) -> BlocksRef<'_> {
        BlocksRef::of(&self.world)
    }

    /// Every block's columns, to change the state of blocks between
    /// cycles.
    pub fn blocks_mut(&mut self) -> BlocksMut<'_> {
        body::BlocksMut::of(&self.world)
    }

    /// Number of blocks.
    pub fn n_blocks(&self) -> usize {
        self.blocks().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Settings;
    use talus_geometry::box_block;

    fn brick() -> BlockShape {
        let poly = box_block(Vec3::new(0.1, 0.2, 0.4)).unwrap();
        BlockShape::new("brick", &poly).unwrap()
    }

    fn at_rest(shape: u32, pos: Vec3) -> BlockInit {
        BlockInit {
            shape,
            pos,
            orientation: Quat::IDENTITY,
            velocity: Vec3::ZERO,
            spin: Vec3::ZERO,
            density: 2000.0,
            group: 0,
            damping: 0.0,
            fixity: Fixity::default(),
        }
    }

    #[test]
    fn a_box_gets_its_closed_form_mass_and_principal_moments() {
        let (a, b, c) = (0.1, 0.2, 0.4);
        let shape = brick();
        assert!((shape.volume - a * b * c).abs() < 1e-15);
        // Ascending: about the longest edge's axis the moment is smallest.
        let v = a * b * c;
        let want = Vec3::new(b * b + a * a, a * a + c * c, b * b + c * c) * (v / 12.0);
        assert!((shape.unit_moments - want).abs().max_element() < 1e-12 * want.max_element());
        let half = Vec3::new(a, b, c) * 0.5;
        assert!((shape.radius - half.length()).abs() < 1e-15);
        let mut sim = Simulation::new(Settings::default());
        let k = sim.add_shape(shape);
        sim.add_block(at_rest(k, Vec3::ZERO)).unwrap();
        let blocks = sim.blocks();
        assert!((blocks.mass[0] - 2000.0 * v).abs() < 1e-12);
        let m = blocks.inertia[0].moments();
        assert!((m - want * 2000.0).abs().max_element() < 1e-12 * m.max_element());
    }

    #[test]
    fn bad_blocks_are_refused_with_their_id() {
        let mut sim = Simulation::new(Settings::default());
        let k = sim.add_shape(brick());
        let mut b = at_rest(k, Vec3::ZERO);
        b.density = 0.0;
        assert!(matches!(
            sim.add_block(b),
            Err(SetupError::Block { id: 1, .. })
        ));
        let mut b = at_rest(k, Vec3::ZERO);
        b.fixity = Fixity::from_flags([false, false, false, true, false, false]);
        let e = sim.add_block(b).unwrap_err().to_string();
        assert!(e.contains("as a whole"), "{e}");
        assert!(sim.add_block(at_rest(7, Vec3::ZERO)).is_err());
        let flat = ConvexPolyhedron::from_points(&[
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::new(1.0, 1.0, 0.0),
        ]);
        // A flat point set is refused by the hull or here.
        if let Ok(flat) = flat {
            assert!(BlockShape::new("flat", &flat).is_err());
        }
    }
}
