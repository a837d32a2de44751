//! Bit flags of [`ContactInput::flags`](crate::ContactInput::flags).

/// The contact was created this step (its state block is all zeros).
pub const NEW: u32 = 1;
/// The engine's wall logic (associative links, segment check, proximity
/// merging) has taken force-carrying away from this contact for this step.
/// The sdk's driver answers for the model: no force, no stiffness,
/// inactive; the model only sees the contact through
/// [`ContactModel::suppressed`](crate::ContactModel::suppressed), which
/// leaves the state alone unless the model overrides it.
pub const SUPPRESSED: u32 = 1 << 1;
/// end2 is a wall facet (end1 is then a ball or pebble).
pub const END2_FACET: u32 = 1 << 2;
/// The engine has nothing new for this contact this step: it is open and
/// the model released it at its last call (returned a status other than
/// active while the gap was open). Only this flag and
/// [`ContactInput::prop_set`](crate::ContactInput::prop_set) are set (the
/// gap is NaN, the rest is not meaningful), and the contact's state and
/// output must stay untouched: the sdk's driver skips it, so models never
/// see it. Engines of sdk 0.1 gathered such contacts out of the batch
/// instead.
pub const IDLE: u32 = 1 << 3;

/// The run installs a bond on this contact in this call (a `[[bonds]]`
/// table of the config, at its step): a model that can bond starts a bond
/// now, from the contact's present geometry; the others ignore it. Set on
/// one call only; the engine sets it where the gap is below the table's
/// and, with a wall, on the ball's one nearest facet contact. Added in sdk
/// 0.3.3.
pub const BOND: u32 = 1 << 4;
