//! Optional model inputs: geometry a model can ask for beyond the base
//! [`ContactInput`](crate::ContactInput).
//!
//! The base input is what every model needs and the engine writes for
//! every contact of every step, so it stays small. Anything more is an
//! *optional input*: a model lists the ids it reads in its descriptor
//! ([`ModelDescriptor::input`](crate::ModelDescriptor::input)), and the
//! engine then hands each batch one column per requested id
//! ([`InputColumn`](crate::InputColumn)), `width` values per contact in
//! batch order. Models that request nothing pay nothing.
//!
//! Ids are plain `u32` numbers rather than an enum, so that a later sdk can
//! define more of them without changing any type that abi_stable checks: a
//! plugin built before an id existed still loads into an engine that knows
//! it, and simply never asks for it. An id, once published, keeps its
//! number, width, unit and meaning forever; new ids take the next number.
//! An engine refuses at load time a model that asks for an id it does not
//! know (the model was built against a newer sdk).
//!
//! Vector inputs are given in the contact frame `(n, s, t)` unless their
//! documentation says otherwise. An overlap-only model (activity
//! `Overlap`) sees a frame whose in-plane axes `s, t` are only kept up to
//! date while the contact is closed.

/// Overlap volume of the two pieces (m^3), width 1.
///
/// Two balls: the volume of the lens where the spheres intersect. Ball and
/// facet: the volume of the spherical cap on the far side of the facet's
/// plane (the facet is taken as unbounded). Zero while the gap is open.
/// A volume-stiffness model, `Fn = Kn V`, reads this.
pub const OVERLAP_VOLUME: u32 = 1;

/// Area of the contact disc (m^2), width 1: `pi a^2` with `a` the radius
/// of [`CONTACT_RADIUS`]. Zero while the gap is open.
pub const CONTACT_AREA: u32 = 2;

/// Radius `a` of the contact disc (m), width 1: the circle where the two
/// surfaces intersect (two balls), or where the ball cuts the facet's plane
/// (ball and facet). Zero while the gap is open.
pub const CONTACT_RADIUS: u32 = 3;

/// Branch vector of end1 (m), width 3: from end1's centroid to the contact
/// location, in the contact frame `(n, s, t)`. For a ball
/// it is `(R1 + g/2, 0, 0)` up to rounding.
pub const BRANCH_1: u32 = 4;

/// Branch vector of end2 (m), width 3: from end2's reference point to the
/// contact location, in the contact frame `(n, s, t)`. The reference point
/// is a ball's centroid, or the reference point (centre of rotation) of
/// the wall a facet belongs to, about which the engine sums the wall's
/// moment.
pub const BRANCH_2: u32 = 5;

/// Contact location in global axes (m), width 3: the point where the
/// engine applies the contact force. For models whose properties vary in
/// space (a layered or graded material). Added in sdk 0.3.1.
pub const CONTACT_POINT: u32 = 6;

/// Twist arm of the normal force (m), width 1. Where the normal force
/// derives from a potential of the overlap volume, the gradient of that
/// volume under a rotation of end2 about the contact normal is not zero in
/// general (two sharp edges crossed at a slant): the force along the
/// normal then comes with a moment `Fn * arm` about the normal on end2
/// (minus that on end1). The engine gives it for two blocks in potential
/// resolution and zero for every other contact (where it is zero, or
/// where the engine resolves no overlap polyhedron). Added in sdk 0.3.2.
pub const TWIST_ARM: u32 = 7;

/// Gradient of the contact area under a rigid motion of end2 with end1
/// held, width 6: `dA/du` for a translation `u` of end2 (m^2/m), then
/// `dA/dw` for a rotation `w` of end2 about the contact location
/// (m^2/rad), both in the contact frame `(n, s, t)`. With the contact area
/// `A`, a model whose normal force derives from a potential `W(V, A)` of
/// the overlap volume `V` and the area adds `-dW/dA` times this to its
/// force and moment on end2 (see `docs/physics.md`). The engine gives it
/// for two blocks in potential resolution and NaN for every other contact.
/// Added in sdk 0.3.2.
pub const AREA_GRADIENT: u32 = 8;

/// Two numbers uniform in `[0, 1)` (width 2), fixed for the pair of
/// pieces and the run's seed (`[run] seed`): the same on every thread
/// count and resumed run, and independent from pair to pair. For
/// properties with a scatter, drawn once per contact: the engine gives
/// them on the calls flagged [`crate::flags::NEW`] or
/// [`crate::flags::BOND`], and NaN on the others (keep what you draw in
/// the contact's state). Added in sdk 0.3.3.
pub const PAIR_RANDOM: u32 = 9;

/// Second moments of the contact surface about the contact location,
/// per unit area (m^2), width 3: `(I_ss, I_tt, I_st) / A`, with `I_ss`
/// the integral of the squared `s` offset from the location over the
/// surface as it projects on the contact plane, and so on. For a model
/// that spreads a quantity over a face contact (the linear model's
/// dashpot resists a rocking block through it: see `docs/physics.md`).
///
/// Only contacts that have a contact surface of their own carry it: a
/// block with a block, and a block with wall facets (one contact for all
/// coplanar facets, the surface theirs together). Batches of other pairs
/// come without this column, whatever the descriptor asks, so
/// [`Contact::get`](crate::Contact::get) returns `None` there, and a
/// model reads that as a contact too small to spread anything over (a
/// ball's contact disc of radius `a` would give `a^2 / 4`). Zero while
/// the gap is open. Added in sdk 0.3.5.
pub const AREA_GYRATION: u32 = 10;

/// What the sdk says about one optional input id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputInfo {
    /// The id (one of the constants of this module).
    pub id: u32,
    /// Snake-case name, used in messages and in `talus plugins`.
    pub name: &'static str,
    /// Values per contact.
    pub width: u32,
    /// SI unit.
    pub unit: &'static str,
    /// One-line description.
    pub doc: &'static str,
    /// Whether every batch of a model that asks for it carries the
    /// column; `false` for an input only some pair kinds have (see its
    /// documentation), whose column the other batches leave out.
    pub every_batch: bool,
}

/// Every optional input this sdk defines, in id order.
pub const ALL: &[InputInfo] = &[
    InputInfo {
        id: OVERLAP_VOLUME,
        name: "overlap_volume",
        width: 1,
        unit: "m^3",
        doc: "volume of the overlap of the two pieces",
        every_batch: true,
    },
    InputInfo {
        id: CONTACT_AREA,
        name: "contact_area",
        width: 1,
        unit: "m^2",
        doc: "area of the contact disc",
        every_batch: true,
    },
    InputInfo {
        id: CONTACT_RADIUS,
        name: "contact_radius",
        width: 1,
        unit: "m",
        doc: "radius of the contact disc",
        every_batch: true,
    },
    InputInfo {
        id: BRANCH_1,
        name: "branch_1",
        width: 3,
        unit: "m",
        doc: "end1 centroid to contact location, in (n, s, t)",
        every_batch: true,
    },
    InputInfo {
        id: BRANCH_2,
        name: "branch_2",
        width: 3,
        unit: "m",
        doc: "end2 reference point to contact location, in (n, s, t)",
        every_batch: true,
    },
    InputInfo {
        id: CONTACT_POINT,
        name: "contact_point",
        width: 3,
        unit: "m",
        doc: "contact location in global axes",
        every_batch: true,
    },
    InputInfo {
        id: TWIST_ARM,
        name: "twist_arm",
        width: 1,
        unit: "m",
        doc: "moment about the normal per unit normal force of a volume potential",
        every_batch: true,
    },
    InputInfo {
        id: AREA_GRADIENT,
        name: "area_gradient",
        width: 6,
        unit: "m, m^2/rad",
        doc: "contact area's gradient under end2's translation and rotation, in (n, s, t)",
        every_batch: true,
    },
    InputInfo {
        id: PAIR_RANDOM,
        name: "pair_random",
        width: 2,
        unit: "-",
        doc: "two uniform numbers in [0, 1) fixed for the pair and the run's seed (new or bonding contacts; NaN otherwise)",
        every_batch: true,
    },
    InputInfo {
        id: AREA_GYRATION,
        name: "area_gyration",
        width: 3,
        unit: "m^2",
        doc: "second moments of the contact surface about the location along s and t, per unit area (block contacts only)",
        every_batch: false,
    },
];

/// What this sdk knows of input `id`, or `None` for an id it does not
/// define.
pub fn info(id: u32) -> Option<&'static InputInfo> {
    ALL.iter().find(|i| i.id == id)
}

/// Values per contact of input `id`, or `None` for an unknown id.
pub fn width(id: u32) -> Option<u32> {
    info(id).map(|i| i.width)
}

/// The name of input `id`, or `"input <id>"` for an id this sdk does not
/// define.
pub fn name(id: u32) -> String {
    info(id).map_or_else(|| format!("input {id}"), |i| i.name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_in_order_and_named_in_snake_case() {
        for pair in ALL.windows(2) {
            assert!(pair[0].id < pair[1].id, "{pair:?}");
        }
        for i in ALL {
            assert!(i.id > 0 && i.width > 0, "{i:?}");
            assert!(
                i.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{i:?}"
            );
            assert_eq!(info(i.id), Some(i));
        }
        assert_eq!(width(BRANCH_2), Some(3));
        assert_eq!(info(0), None);
        assert_eq!(name(9999), "input 9999");
    }
}
