//! Bodies in the hecs world: their components, the archetype of each kind
//! and the column views the stages read and write.
//!
//! Each body kind is one archetype of [`hecs::World`]: every ball is
//! spawned with the same [`BallBundle`], every wall with the same
//! [`WallBundle`], and nothing adds or removes a component afterwards, so
//! all bodies of a kind live in one archetype, in the order they were
//! added. A body's dense index (ball `i`, wall `w`) is its row in that
//! archetype; bodies are never despawned during a run, so the index never
//! changes. Hot loops borrow a kind's columns as slices
//! ([`BallsRef`], [`BallsMut`]); no copy of body data lives outside the
//! world.
//!
//! A new body kind (a rigid block: pose, orientation, full inertia, a
//! shape id; a clump: the same with its pebbles) is a new bundle with a
//! marker component and its own view; the stages then get one more
//! archetype to loop over (see `docs/architecture.md`).

use crate::balls::{BallInit, Fixity};
use crate::block::BlockInit;
use crate::math::{Quat, Vec3};
use crate::rigid::PrincipalInertia;
use crate::wall::Wall;
use bytemuck::TransparentWrapper;
use hecs::{Archetype, ArchetypeColumn, ArchetypeColumnMut, World};
use std::ops::{Deref, DerefMut};

/// A component that is one value per body, stored as a plain column: the
/// views hand its column out as a slice of [`BodyColumn::Value`].
pub trait BodyColumn: hecs::Component + TransparentWrapper<Self::Value> {
    /// The value the component wraps.
    type Value: 'static;
}

macro_rules! columns {
    ($($(#[$doc:meta])* $name:ident($inner:ty);)+) => {$(
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name(pub $inner);
        // SAFETY: `$name` is `repr(transparent)` over `$inner`.
        unsafe impl TransparentWrapper<$inner> for $name {}
        impl BodyColumn for $name {
            type Value = $inner;
        }
    )+};
}

columns! {
    /// Centroid (m).
    Position(Vec3);
    /// Translational velocity (m/s), at the half step between positions.
    Velocity(Vec3);
    /// Angular velocity (rad/s), at the half step.
    Spin(Vec3);
    /// Radius of a ball (m).
    Radius(f64);
    /// Mass (kg).
    Mass(f64);
    /// Moment of inertia about any axis through the centroid, for bodies
    /// whose inertia is isotropic (a ball: 2/5 m r^2) (kg m^2).
    Inertia(f64);
    /// 1 / mass (1/kg), kept so the law of motion multiplies.
    InvMass(f64);
    /// 1 / inertia (1/(kg m^2)).
    InvInertia(f64);
    /// Resultant contact force of the last cycle (N).
    Force(Vec3);
    /// Resultant contact moment about the centroid of the last cycle (N m).
    Moment(Vec3);
    /// Sum of the translational stiffnesses of active and could-be-active
    /// contacts in the last cycle (N/m), for the automatic timestep.
    Stiffness(f64);
    /// Group id (an index into the simulation's group names).
    Group(u16);
    /// Local damping coefficient in [0, 1).
    Damping(f64);
    /// Degrees of freedom held fixed.
    Fixed(Fixity);
    /// Rotation from a rigid body's principal frame to the world, at whole
    /// steps (unit quaternion).
    Orientation(Quat);
    /// Angular momentum of a rigid body in world axes, at half steps
    /// (kg m^2/s).
    AngularMomentum(Vec3);
    /// Index of a block's shape in the simulation's shape table.
    ShapeId(u32);
    /// The clump a ball row belongs to as one of its pebbles (its dense
    /// index), or [`Owner::FREE`] for a ball of its own.
    Owner(u32);
    /// Index of a clump's template in the simulation's template table.
    TemplateId(u32);
    /// The ball row of a clump's first pebble; the others follow it, one
    /// row per pebble of the template, in template order.
    FirstPebble(u32);
}

impl Owner {
    /// The owner of a ball that is a body of its own.
    pub const FREE: Owner = Owner(u32::MAX);
}

/// Principal moments of inertia of a rigid body and what its rotation
/// derives from them.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotInertia(pub PrincipalInertia);
// SAFETY: `RotInertia` is `repr(transparent)` over `PrincipalInertia`.
unsafe impl TransparentWrapper<PrincipalInertia> for RotInertia {}
impl BodyColumn for RotInertia {
    type Value = PrincipalInertia;
}

/// A wall: its facets, motion and load.
#[repr(transparent)]
#[derive(Clone, Debug)]
pub struct WallBody(pub Wall);
// SAFETY: `WallBody` is `repr(transparent)` over `Wall`.
unsafe impl TransparentWrapper<Wall> for WallBody {}
impl BodyColumn for WallBody {
    type Value = Wall;
}

/// Marker of the ball archetype.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ball;

/// Everything a ball is made of; every ball is spawned with exactly this.
#[derive(hecs::Bundle)]
pub struct BallBundle {
    ball: Ball,
    pos: Position,
    vel: Velocity,
    spin: Spin,
    radius: Radius,
    mass: Mass,
    inertia: Inertia,
    inv_mass: InvMass,
    inv_inertia: InvInertia,
    force: Force,
    moment: Moment,
    stiffness: Stiffness,
    group: Group,
    damping: Damping,
    fixity: Fixed,
    owner: Owner,
}

impl BallBundle {
    /// The components of a ball: mass `4/3 pi r^3 rho`, inertia
    /// `2/5 m r^2`, zero sums.
    pub fn new(b: &BallInit) -> BallBundle {
        let mass = b.density * 4.0 / 3.0 * std::f64::consts::PI * b.radius.powi(3);
        let inertia = 0.4 * mass * b.radius * b.radius;
        BallBundle {
            ball: Ball,
            pos: Position(b.pos),
            vel: Velocity(b.velocity),
            spin: Spin(b.spin),
            radius: Radius(b.radius),
            mass: Mass(mass),
            inertia: Inertia(inertia),
            inv_mass: InvMass(1.0 / mass),
            inv_inertia: InvInertia(1.0 / inertia),
            force: Force(Vec3::ZERO),
            moment: Moment(Vec3::ZERO),
            stiffness: Stiffness(0.0),
            group: Group(b.group),
            damping: Damping(b.damping),
            fixity: Fixed(b.fixity),
            owner: Owner::FREE,
        }
    }

    /// The ball row of a pebble of clump `owner` (its dense index), at
    /// `pos` moving with `vel` and `spin`. The row carries the clump's
    /// `mass` and mean principal moment `inertia`, which the contacts of
    /// the pebble take as the mass of their end (a pebble moves with its
    /// clump); its damping and fixity are the clump's business and stay
    /// zero, and its sums are gathered onto the clump after every contact
    /// pass.
    pub fn pebble(pebble: &PebbleRow) -> BallBundle {
        BallBundle {
            ball: Ball,
            pos: Position(pebble.pos),
            vel: Velocity(pebble.vel),
            spin: Spin(pebble.spin),
            radius: Radius(pebble.radius),
            mass: Mass(pebble.mass),
            inertia: Inertia(pebble.inertia),
            inv_mass: InvMass(1.0 / pebble.mass),
            inv_inertia: InvInertia(1.0 / pebble.inertia),
            force: Force(Vec3::ZERO),
            moment: Moment(Vec3::ZERO),
            stiffness: Stiffness(0.0),
            group: Group(pebble.group),
            damping: Damping(0.0),
            fixity: Fixed(Fixity::default()),
            owner: Owner(pebble.owner),
        }
    }
}

/// What the ball row of one pebble is made from (see
/// [`BallBundle::pebble`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PebbleRow {
    /// Centre in the world (m).
    pub pos: Vec3,
    /// Velocity of the centre (m/s).
    pub vel: Vec3,
    /// The clump's angular velocity (rad/s).
    pub spin: Vec3,
    /// Radius (m).
    pub radius: f64,
    /// The clump's mass (kg).
    pub mass: f64,
    /// The clump's mean principal moment of inertia (kg m^2).
    pub inertia: f64,
    /// The clump's group.
    pub group: u16,
    /// The clump's dense index.
    pub owner: u32,
}

/// Marker of the block archetype: convex polyhedral rigid bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Block;

/// Everything a block is made of; every block is spawned with exactly
/// this.
#[derive(hecs::Bundle)]
pub struct BlockBundle {
    block: Block,
    pos: Position,
    vel: Velocity,
    spin: Spin,
    orientation: Orientation,
    momentum: AngularMomentum,
    inertia: RotInertia,
    mass: Mass,
    inv_mass: InvMass,
    force: Force,
    moment: Moment,
    stiffness: Stiffness,
    group: Group,
    damping: Damping,
    fixity: Fixed,
    shape: ShapeId,
}

impl BlockBundle {
    /// The components of a block of `mass` (kg) and principal moments
    /// `inertia`; its angular momentum follows from the initial spin.
    pub fn new(b: &BlockInit, mass: f64, inertia: PrincipalInertia) -> BlockBundle {
        let q = b.orientation.normalize();
        BlockBundle {
            block: Block,
            pos: Position(b.pos),
            vel: Velocity(b.velocity),
            spin: Spin(b.spin),
            orientation: Orientation(q),
            momentum: AngularMomentum(inertia.momentum(q, b.spin)),
            inertia: RotInertia(inertia),
            mass: Mass(mass),
            inv_mass: InvMass(1.0 / mass),
            force: Force(Vec3::ZERO),
            moment: Moment(Vec3::ZERO),
            stiffness: Stiffness(0.0),
            group: Group(b.group),
            damping: Damping(b.damping),
            fixity: Fixed(b.fixity),
            shape: ShapeId(b.shape),
        }
    }
}

/// Everything a wall is made of; every wall is spawned with exactly this.
#[derive(hecs::Bundle)]
pub struct WallBundle {
    wall: WallBody,
    group: Group,
}

impl WallBundle {
    /// The components of `wall` (its group is copied from the wall).
    pub fn new(wall: Wall) -> WallBundle {
        let group = Group(wall.group);
        WallBundle {
            wall: WallBody(wall),
            group,
        }
    }
}

/// The archetype that holds the bodies with marker `M`, if any was spawned.
fn archetype_of<M: hecs::Component>(world: &World) -> Option<&Archetype> {
    world.archetypes().find(|a| a.has::<M>() && !a.is_empty())
}

/// One component column of a kind, borrowed shared, read as a slice of
/// its values (empty when the kind has no bodies).
pub struct Col<'w, T: BodyColumn>(Option<ArchetypeColumn<'w, T>>);

impl<T: BodyColumn> Deref for Col<'_, T> {
    type Target = [T::Value];
    #[inline]
    fn deref(&self) -> &[T::Value] {
        match &self.0 {
            Some(c) => T::peel_slice(c),
            None => &[],
        }
    }
}

/// One component column of a kind, borrowed exclusively, as a slice.
pub struct ColMut<'w, T: BodyColumn>(Option<ArchetypeColumnMut<'w, T>>);

impl<T: BodyColumn> Deref for ColMut<'_, T> {
    type Target = [T::Value];
    #[inline]
    fn deref(&self) -> &[T::Value] {
        match &self.0 {
            Some(c) => T::peel_slice(c),
            None => &[],
        }
    }
}

impl<T: BodyColumn> DerefMut for ColMut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T::Value] {
        match &mut self.0 {
            Some(c) => T::peel_slice_mut(c),
            None => &mut [],
        }
    }
}

fn col<'w, T: BodyColumn>(a: Option<&'w Archetype>) -> Col<'w, T> {
    Col(a.and_then(|a| a.get::<&T>()))
}

fn col_mut<'w, T: BodyColumn>(a: Option<&'w Archetype>) -> ColMut<'w, T> {
    ColMut(a.and_then(|a| a.get::<&mut T>()))
}

/// A view of one kind's columns: the struct with one field per column,
/// `of` that borrows them from the kind's archetype (marked by `$marker`),
/// and `len` / `is_empty`.
macro_rules! body_view {
    (
        $(#[$doc:meta])* $view:ident, $col:ident, $get:ident, $marker:ty, $what:literal,
        { $($(#[$fdoc:meta])* $field:ident: $comp:ty,)+ }
    ) => {
        $(#[$doc])*
        pub struct $view<'w> {
            $($(#[$fdoc])* pub $field: $col<'w, $comp>,)+
        }

        impl<'w> $view<'w> {
            #[doc = concat!("The columns of the ", $what, " archetype of `world`.")]
            ///
            /// # Panics
            /// If a column is borrowed elsewhere in a conflicting way.
            pub fn of(world: &'w World) -> Self {
                let a = archetype_of::<$marker>(world);
                $view { $($field: $get(a),)+ }
            }

            #[doc = concat!("Number of bodies (", $what, "s).")]
            pub fn len(&self) -> usize {
                self.pos.len()
            }

            /// Whether there are none.
            pub fn is_empty(&self) -> bool {
                self.pos.is_empty()
            }
        }
    };
}

macro_rules! ball_view {
    ($(#[$doc:meta])* $view:ident, $col:ident, $get:ident) => {
        body_view!($(#[$doc])* $view, $col, $get, Ball, "ball", {
            /// Centroid (m).
            pos: Position,
            /// Velocity (m/s), half step.
            vel: Velocity,
            /// Angular velocity (rad/s), half step.
            spin: Spin,
            /// Radius (m).
            radius: Radius,
            /// Mass (kg).
            mass: Mass,
            /// Moment of inertia, 2/5 m r^2 (kg m^2).
            inertia: Inertia,
            /// 1 / mass (1/kg).
            inv_mass: InvMass,
            /// 1 / inertia (1/(kg m^2)).
            inv_inertia: InvInertia,
            /// Resultant contact force of the last cycle (N).
            force: Force,
            /// Resultant contact moment of the last cycle (N m).
            moment: Moment,
            /// Timestep stiffness sum of the last cycle (N/m).
            stiffness: Stiffness,
            /// Group id.
            group: Group,
            /// Local damping coefficient.
            damping: Damping,
            /// Fixed degrees of freedom.
            fixity: Fixed,
            /// The clump of a pebble row, [`Owner::FREE`] for a ball.
            owner: Owner,
        });

        impl $view<'_> {
            /// Total kinetic energy, translational plus rotational (J),
            /// with the half-step velocities, of the balls that are bodies
            /// of their own (pebble rows move with their clumps, whose
            /// energy [`ClumpsRef::kinetic_energy`] gives).
            pub fn kinetic_energy(&self) -> f64 {
                (0..self.len())
                    .filter(|&i| self.owner[i] == Owner::FREE.0)
                    .map(|i| {
                        0.5 * self.mass[i] * self.vel[i].length_squared()
                            + 0.5 * self.inertia[i] * self.spin[i].length_squared()
                    })
                    .sum()
            }

            /// Total linear momentum of the balls that are bodies of their
            /// own (kg m/s).
            pub fn momentum(&self) -> Vec3 {
                (0..self.len())
                    .filter(|&i| self.owner[i] == Owner::FREE.0)
                    .map(|i| self.vel[i] * self.mass[i])
                    .sum()
            }
        }
    };
}

ball_view!(
    /// Every ball's columns, borrowed shared from the world.
    BallsRef,
    Col,
    col
);
ball_view!(
    /// Every ball's columns, borrowed exclusively from the world (each
    /// column separately, so a stage can hold several at once).
    BallsMut,
    ColMut,
    col_mut
);

/// The view of a rigid body kind (blocks, clumps): the columns they share
/// (pose, motion, inertia, sums and properties) and `$extra` ones.
macro_rules! rigid_view {
    (
        $(#[$doc:meta])* $view:ident, $col:ident, $get:ident, $marker:ty, $what:literal,
        { $($extra:tt)* }
    ) => {
        body_view!($(#[$doc])* $view, $col, $get, $marker, $what, {
            /// Centroid (m).
            pos: Position,
            /// Velocity (m/s), half step.
            vel: Velocity,
            /// Mean angular velocity over the last step (rad/s).
            spin: Spin,
            /// Principal frame to world, whole step.
            orientation: Orientation,
            /// Angular momentum in world axes (kg m^2/s), half step.
            momentum: AngularMomentum,
            /// Principal moments of inertia.
            inertia: RotInertia,
            /// Mass (kg).
            mass: Mass,
            /// 1 / mass (1/kg).
            inv_mass: InvMass,
            /// Resultant contact force of the last cycle (N).
            force: Force,
            /// Resultant contact moment about the centroid (N m).
            moment: Moment,
            /// Timestep stiffness sum of the last cycle (N/m).
            stiffness: Stiffness,
            /// Group id.
            group: Group,
            /// Local damping coefficient.
            damping: Damping,
            /// Fixed degrees of freedom.
            fixity: Fixed,
            $($extra)*
        });

        impl $view<'_> {
            /// Total kinetic energy, translational plus rotational (J).
            pub fn kinetic_energy(&self) -> f64 {
                (0..self.len())
                    .map(|i| {
                        0.5 * self.mass[i] * self.vel[i].length_squared()
                            + self.inertia[i].kinetic_energy(self.orientation[i], self.momentum[i])
                    })
                    .sum()
            }

            /// Total linear momentum (kg m/s).
            pub fn momentum_sum(&self) -> Vec3 {
                (0..self.len()).map(|i| self.vel[i] * self.mass[i]).sum()
            }
        }
    };
}

rigid_view!(
    /// Every block's columns, borrowed shared from the world.
    BlocksRef, Col, col, Block, "block", {
        /// Shape index.
        shape: ShapeId,
    }
);
rigid_view!(
    /// Every block's columns, borrowed exclusively from the world.
    BlocksMut, ColMut, col_mut, Block, "block", {
        /// Shape index.
        shape: ShapeId,
    }
);

/// Marker of the clump archetype: rigid bodies made of spherical
/// pebbles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clump;

/// Everything a clump is made of; every clump is spawned with exactly
/// this. Its pebbles are ball rows ([`BallBundle::pebble`]) from
/// [`FirstPebble`] on.
#[derive(hecs::Bundle)]
pub struct ClumpBundle {
    clump: Clump,
    pos: Position,
    vel: Velocity,
    spin: Spin,
    orientation: Orientation,
    momentum: AngularMomentum,
    inertia: RotInertia,
    mass: Mass,
    inv_mass: InvMass,
    force: Force,
    moment: Moment,
    stiffness: Stiffness,
    group: Group,
    damping: Damping,
    fixity: Fixed,
    template: TemplateId,
    first: FirstPebble,
}

impl ClumpBundle {
    /// The components of a clump of `mass` (kg) and principal moments
    /// `inertia` whose pebbles start at ball row `first`.
    pub fn new(
        c: &crate::clump::ClumpInit,
        mass: f64,
        inertia: PrincipalInertia,
        first: u32,
    ) -> ClumpBundle {
        let q = c.orientation.normalize();
        ClumpBundle {
            clump: Clump,
            pos: Position(c.pos),
            vel: Velocity(c.velocity),
            spin: Spin(c.spin),
            orientation: Orientation(q),
            momentum: AngularMomentum(inertia.momentum(q, c.spin)),
            inertia: RotInertia(inertia),
            mass: Mass(mass),
            inv_mass: InvMass(1.0 / mass),
            force: Force(Vec3::ZERO),
            moment: Moment(Vec3::ZERO),
            stiffness: Stiffness(0.0),
            group: Group(c.group),
            damping: Damping(c.damping),
            fixity: Fixed(c.fixity),
            template: TemplateId(c.shape),
            first: FirstPebble(first),
        }
    }
}

rigid_view!(
    /// Every clump's columns, borrowed shared from the world.
    ClumpsRef, Col, col, Clump, "clump", {
        /// Template index.
        template: TemplateId,
        /// Ball row of the first pebble.
        first: FirstPebble,
    }
);
rigid_view!(
    /// Every clump's columns, borrowed exclusively from the world.
    ClumpsMut, ColMut, col_mut, Clump, "clump", {
        /// Template index.
        template: TemplateId,
        /// Ball row of the first pebble.
        first: FirstPebble,
    }
);

/// Every wall, borrowed shared from the world, in index order.
pub fn walls(world: &World) -> Col<'_, WallBody> {
    col(archetype_of::<WallBody>(world))
}

/// Every wall, borrowed exclusively from the world, in index order.
pub fn walls_mut(world: &World) -> ColMut<'_, WallBody> {
    col_mut(archetype_of::<WallBody>(world))
}
