//! What a run may ask of the machine, and what a config would ask.
//!
//! Reads: `/proc/meminfo` and the cgroup memory files on Linux, the number
//! of CPUs the process may use. Writes: a [`Machine`] and the estimates
//! that validation compares with it. Invariant: every generator, mesh
//! option and data file is weighed here before anything is made or read,
//! so a config the machine cannot hold is refused with a number, never
//! discovered by an allocation that aborts.
//!
//! The memory estimate is a sum of per-item costs measured on the engine
//! (peak resident memory of runs with 1e5 to 1e6 bodies, divided by their
//! count), rounded up; the contacts per body are a typical dense packing's
//! (a lattice of balls makes 3 per ball with its walls, one of
//! overlapping block boxes about 13 per block). See `docs/config.md`.

use std::fmt;

/// Memory per ball without its contacts: state, cell-space entries.
pub const BALL_BYTES: f64 = 500.0;
/// Memory per block without its contacts (state, pose, cell entries).
pub const BLOCK_BYTES: f64 = 1000.0;
/// Memory per contact (state, frame, lanes, cell-space pair).
pub const CONTACT_BYTES: f64 = 450.0;
/// Contacts a ball brings, counted once (its share of ball-ball pairs,
/// plus wall contacts).
pub const CONTACTS_PER_BALL: f64 = 4.0;
/// Contacts a block brings (blocks meet by bounding spheres first, which
/// make more pairs than balls).
pub const CONTACTS_PER_BLOCK: f64 = 12.0;
/// Memory per wall triangle (welded mesh, facet, adjacency, cell entries).
pub const TRIANGLE_BYTES: f64 = 450.0;
/// Memory per cell of the engine's cell space (an empty list).
pub const CELL_BYTES: f64 = 24.0;
/// The engine's cap on cells: it coarsens the grid above it.
pub const MAX_CELLS: f64 = 8.0e6;
/// Memory of a run before any body: code, plugins, buffers.
pub const BASE_BYTES: f64 = 32.0e6;

/// Worker threads per CPU at most: more only wait for each other.
pub const THREADS_PER_CPU: usize = 4;

/// Largest magnitude of a coordinate (m): positions, region and box
/// corners, mesh vertices once scaled and moved. Double precision resolves
/// about 0.1 mm there; beyond it, contacts of anything smaller cannot be
/// resolved, and products of coordinates head for overflow.
pub const MAX_COORDINATE: f64 = 1e12;

/// Smallest length of a block shape (m): a nanometre. Its fifth power (the
/// unit-density moments) stays well inside double precision.
pub const MIN_SHAPE_LENGTH: f64 = 1e-9;

/// Most subdivisions of a box wall's face: 12 x 256^2 = 786,432 triangles.
/// A flat face gains no geometry from finer facets, only memory and time.
pub const MAX_DIVISIONS: i64 = 256;

/// Why the point `v` (m) is out of bounds, if it is: the end of a
/// sentence whose subject is the point.
pub fn too_far(v: [f64; 3]) -> Option<String> {
    let far = v.iter().map(|c| c.abs()).fold(0.0, f64::max);
    (far > MAX_COORDINATE).then(|| {
        format!(
            "lies {} m from the origin; coordinates must stay within {} m, where double precision still resolves about 0.1 mm",
            Approx(far),
            Approx(MAX_COORDINATE)
        )
    })
}

/// The memory assumed when the operating system does not say.
pub const FALLBACK_MEMORY: u64 = 8 << 30;

/// Memory per ball, with its contacts.
pub fn ball_bytes() -> f64 {
    BALL_BYTES + CONTACTS_PER_BALL * CONTACT_BYTES
}

/// Memory per block, with its contacts.
pub fn block_bytes() -> f64 {
    BLOCK_BYTES + CONTACTS_PER_BLOCK * CONTACT_BYTES
}

/// What the machine offers a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// Bytes of memory a run may use now.
    pub memory: u64,
    /// Where `memory` comes from, for messages.
    pub memory_source: &'static str,
    /// CPUs the process may use.
    pub cpus: usize,
}

impl Machine {
    /// This machine, now: available memory (the lower of `MemAvailable`
    /// in `/proc/meminfo` and what the process's cgroup limit leaves),
    /// else [`FALLBACK_MEMORY`]; the CPUs the process may use.
    pub fn this() -> Machine {
        let (memory, memory_source) = available_memory();
        Machine {
            memory,
            memory_source,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// At most [`THREADS_PER_CPU`] threads per CPU.
    ///
    /// # Errors
    /// Why `threads` is too many, as the end of a sentence naming it.
    pub fn check_threads(&self, threads: usize) -> Result<(), String> {
        let most = THREADS_PER_CPU * self.cpus;
        if threads <= most {
            return Ok(());
        }
        Err(format!(
            "is {threads}, but this machine runs {} thread(s) at once and talus allows at most {THREADS_PER_CPU} per CPU ({most}): more threads only wait for each other; use 0 for one per CPU",
            self.cpus
        ))
    }
}

/// `MemAvailable` of `/proc/meminfo` in bytes.
fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// What the cgroup limit leaves (v2, then v1), when there is a limit.
fn cgroup_left() -> Option<u64> {
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let pairs = [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ];
    pairs.iter().find_map(|(limit, used)| {
        let limit = read(limit)?;
        // "No limit" reads as "max" (v2, not a number) or as a huge value.
        (limit < 1 << 60).then(|| limit.saturating_sub(read(used).unwrap_or(0)))
    })
}

fn available_memory() -> (u64, &'static str) {
    match (meminfo_available(), cgroup_left()) {
        (Some(m), Some(c)) if c < m => (c, "the cgroup memory limit"),
        (Some(m), _) => (m, "MemAvailable in /proc/meminfo"),
        (None, Some(c)) => (c, "the cgroup memory limit"),
        (None, None) => (FALLBACK_MEMORY, "an assumed 8 GiB (the system did not say)"),
    }
}

/// A byte count for people: `2.3 GB`, `512 bytes`, `1.20e21 bytes`.
#[derive(Debug, Clone, Copy)]
pub struct Bytes(pub f64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if !b.is_finite() {
            return f.write_str("more bytes than can be counted");
        }
        if b < 1e3 {
            return write!(f, "{b:.0} bytes");
        }
        if b >= 1e21 {
            return write!(f, "{b:.2e} bytes");
        }
        let units = [
            (1e18, "EB"),
            (1e15, "PB"),
            (1e12, "TB"),
            (1e9, "GB"),
            (1e6, "MB"),
        ];
        let (scale, unit) = units
            .into_iter()
            .find(|&(scale, _)| b >= scale)
            .unwrap_or((1e3, "kB"));
        write!(f, "{:.1} {unit}", b / scale)
    }
}

/// A count for people: `125000`, or `1.00e18` when large.
#[derive(Debug, Clone, Copy)]
pub struct Count(pub f64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_infinite() {
            f.write_str("more than can be counted (overflow)")
        } else if self.0 < 1e9 {
            write!(f, "{:.0}", self.0)
        } else {
            write!(f, "{:.3e}", self.0)
        }
    }
}

/// A number for people, to about four significant digits: `4189`,
/// `0.001`, `2.5e-7`, `1e-320` (whole numbers below 1e6 in full).
#[derive(Debug, Clone, Copy)]
pub struct Approx(pub f64);

impl fmt::Display for Approx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if !x.is_finite() || x == 0.0 {
            return write!(f, "{x}");
        }
        let sci = format!("{x:.3e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let trim = |s: &str| {
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                s.to_owned()
            }
        };
        if (-3..6).contains(&exp) {
            let decimals = (3 - exp).max(0) as usize;
            f.write_str(&trim(&format!("{x:.decimals$}")))
        } else {
            write!(f, "{}e{exp}", trim(mantissa))
        }
    }
}

/// The densest packing of equal balls fills pi / sqrt(18) of space.
pub const DENSEST_PACKING: f64 = 0.740_480_489_693_061;

/// The cells of the engine's cell space over a domain of `extent` (m)
/// with cells of `cell` (m), after its cap.
pub fn cells(extent: [f64; 3], cell: f64) -> f64 {
    let n: f64 = extent.iter().map(|e| (e / cell).ceil().max(1.0)).product();
    if n.is_finite() {
        n.min(MAX_CELLS)
    } else {
        MAX_CELLS
    }
}

/// Why a body of mass `mass` (kg) and smallest and largest moments of
/// inertia `moments` (kg m^2) cannot be simulated, if it cannot: each must
/// be a normal, finite double (neither zero, nor subnormal, nor overflowed).
pub fn mass_issue(mass: f64, moments: (f64, f64)) -> Option<&'static str> {
    let normal = |v: f64| v.is_normal() && v > 0.0;
    if mass.is_infinite() || moments.1.is_infinite() {
        Some("its mass or moment of inertia overflows double precision (infinite)")
    } else if !normal(mass) {
        Some("its mass is zero in double precision (the volume underflows)")
    } else if !normal(moments.0) {
        Some("its moment of inertia is zero in double precision (it underflows)")
    } else {
        None
    }
}

/// Mass (kg) and moment of inertia (kg m^2) of a ball.
pub fn ball_mass(radius: f64, density: f64) -> (f64, f64) {
    let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    (mass, 0.4 * mass * radius * radius)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_like_people_write_them() {
        assert_eq!(Bytes(512.0).to_string(), "512 bytes");
        assert_eq!(Bytes(2300.0).to_string(), "2.3 kB");
        assert_eq!(Bytes(2.3e9).to_string(), "2.3 GB");
        assert_eq!(Bytes(4.0e19).to_string(), "40.0 EB");
        assert_eq!(Bytes(2.3e21).to_string(), "2.30e21 bytes");
        assert_eq!(Count(125_000.0).to_string(), "125000");
        assert_eq!(Count(1e18).to_string(), "1.000e18");
        let nums = [
            4188.790204786391,
            1.0,
            1e-3,
            2.5e-7,
            1e-320,
            2500.0,
            123456.0,
            1.5e12,
            -0.25,
        ];
        let shown: Vec<String> = nums.iter().map(|&x| Approx(x).to_string()).collect();
        assert_eq!(
            shown,
            ["4189", "1", "0.001", "2.5e-7", "1e-320", "2500", "123456", "1.5e12", "-0.25"]
        );
    }

    #[test]
    fn threads_are_bounded_per_cpu() {
        let m = Machine {
            memory: 1 << 30,
            memory_source: "test",
            cpus: 2,
        };
        assert!(m.check_threads(0).is_ok());
        assert!(m.check_threads(8).is_ok());
        let e = m.check_threads(9).unwrap_err();
        assert!(e.contains("at most 4 per CPU (8)"), "{e}");
    }

    #[test]
    fn tiny_and_huge_balls_have_no_usable_mass() {
        let (m, i) = ball_mass(1e-320, 2500.0);
        assert!(mass_issue(m, (i, i)).unwrap().contains("mass is zero"));
        let (m, i) = ball_mass(1e-70, 2500.0);
        assert!(m > 0.0);
        assert!(mass_issue(m, (i, i))
            .unwrap()
            .contains("moment of inertia is zero"));
        let (m, i) = ball_mass(1e80, 2500.0);
        assert!(mass_issue(m, (i, i)).unwrap().contains("overflows"));
        let (m, i) = ball_mass(1e-3, 2500.0);
        assert_eq!(mass_issue(m, (i, i)), None);
    }

    #[test]
    fn the_cell_space_is_capped_like_the_engine() {
        assert_eq!(cells([1.0, 1.0, 1.0], 0.5), 8.0);
        assert_eq!(cells([1e300, 1e300, 1e300], 1e-3), MAX_CELLS);
        assert_eq!(cells([1e9, 1.0, 1.0], 1e-3), MAX_CELLS);
    }
}
