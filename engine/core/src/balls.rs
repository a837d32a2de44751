//! Ball store: the dense columns the hot loops run over.
//!
//! Reads/writes: positions, velocities, forces and mass properties of every
//! ball, indexed by a dense ball index that never changes during a run
//! (balls are not deleted yet). The public id is `index + 1`.

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

/// Dense columns of all balls.
#[derive(Clone, Debug, Default)]
pub struct Balls {
    /// Centre (m).
    pub pos: Vec<Vec3>,
    /// Translational velocity (m/s), at the half step between positions.
    pub vel: Vec<Vec3>,
    /// Angular velocity (rad/s), at the half step.
    pub spin: Vec<Vec3>,
    /// Radius (m).
    pub radius: Vec<f64>,
    /// Mass (kg).
    pub mass: Vec<f64>,
    /// Moment of inertia about the centre, 2/5 m r^2 (kg m^2).
    pub inertia: Vec<f64>,
    /// 1 / mass (1/kg), kept so the law of motion multiplies.
    pub inv_mass: Vec<f64>,
    /// 1 / inertia (1/(kg m^2)).
    pub inv_inertia: Vec<f64>,
    /// Resultant contact force of the last cycle (N).
    pub force: Vec<Vec3>,
    /// Resultant contact moment of the last cycle (N m).
    pub moment: Vec<Vec3>,
    /// Sum of translational stiffnesses of active and could-be-active
    /// contacts in the last cycle (N/m), for the automatic timestep.
    pub stiffness: Vec<f64>,
    /// Group id.
    pub group: Vec<u16>,
    /// Local damping coefficient.
    pub damping: Vec<f64>,
    /// Fixed degrees of freedom.
    pub fixity: Vec<Fixity>,
}

impl Balls {
    /// Number of balls.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// Whether there are no balls.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Appends a ball and returns its dense index.
    pub fn push(&mut self, b: BallInit) -> usize {
        let mass = b.density * 4.0 / 3.0 * std::f64::consts::PI * b.radius.powi(3);
        self.pos.push(b.pos);
        self.vel.push(b.velocity);
        self.spin.push(b.spin);
        self.radius.push(b.radius);
        self.mass.push(mass);
        let inertia = 0.4 * mass * b.radius * b.radius;
        self.inertia.push(inertia);
        self.inv_mass.push(1.0 / mass);
        self.inv_inertia.push(1.0 / inertia);
        self.force.push(Vec3::ZERO);
        self.moment.push(Vec3::ZERO);
        self.stiffness.push(0.0);
        self.group.push(b.group);
        self.damping.push(b.damping);
        self.fixity.push(b.fixity);
        self.pos.len() - 1
    }

    /// Total kinetic energy, translational plus rotational (J), with the
    /// half-step velocities.
    pub fn kinetic_energy(&self) -> f64 {
        (0..self.len())
            .map(|i| {
                0.5 * self.mass[i] * self.vel[i].length_squared()
                    + 0.5 * self.inertia[i] * self.spin[i].length_squared()
            })
            .sum()
    }

    /// Total linear momentum (kg m/s).
    pub fn momentum(&self) -> Vec3 {
        (0..self.len()).map(|i| self.vel[i] * self.mass[i]).sum()
    }
}
