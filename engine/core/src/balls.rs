//! What a ball is made from: its initial state and its fixity. The balls
//! themselves live in the hecs world (see [`crate::body`]); a ball's dense
//! index never changes during a run (balls are not deleted yet) and its
//! public id is `index + 1`.

use crate::math::Vec3;

/// Degrees of freedom held fixed (their velocity is not integrated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fixity(pub u8);

impl Fixity {
    /// Translation along x, y, z: bits 0..2; rotation about x, y, z: bits 3..5.
    pub fn from_flags(flags: [bool; 6]) -> Fixity {
        Fixity(
            flags
                .iter()
                .enumerate()
                .fold(0u8, |acc, (i, &f)| acc | ((f as u8) << i)),
        )
    }

    /// Whether degree of freedom `k` (0..6) is fixed.
    #[inline]
    pub fn fixed(self, k: usize) -> bool {
        self.0 & (1 << k) != 0
    }
}

/// What is needed to create one ball.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallInit {
    /// Centre (m).
    pub pos: Vec3,
    /// Radius (m), > 0.
    pub radius: f64,
    /// Density (kg/m^3), > 0.
    pub density: f64,
    /// Initial velocity (m/s).
    pub velocity: Vec3,
    /// Initial angular velocity (rad/s).
    pub spin: Vec3,
    /// Group id.
    pub group: u16,
    /// Local damping coefficient in [0, 1).
    pub damping: f64,
    /// Fixed degrees of freedom.
    pub fixity: Fixity,
}
