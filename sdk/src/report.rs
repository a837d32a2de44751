//! Bits a model sets in [`ContactOutput::reserved`](crate::ContactOutput::reserved)
//! to tell the engine about a contact beyond its force. Added in sdk
//! 0.3.3; an engine before it never read the field, and a model before it
//! writes zero, which reports nothing.

/// Keep this contact while its pieces are apart: the engine does not drop
/// it when their cell extents part (a bond holding in tension). Reported
/// on every call for which it should hold; a call without it lets the
/// engine drop the contact as usual.
pub const HOLD: u32 = 1;

/// A bond of this contact broke in this call, in tension. The engine logs
/// the contact (step, time, ends, location and the model's state after the
/// call) in the run's record of breakage.
pub const BROKE_TENSION: u32 = 1 << 1;

/// A bond of this contact broke in this call, in shear; logged as
/// [`BROKE_TENSION`] is.
pub const BROKE_SHEAR: u32 = 1 << 2;

/// Either way of breaking.
pub const BROKE: u32 = BROKE_TENSION | BROKE_SHEAR;
