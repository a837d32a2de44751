//! The second half of a chunk's pass: flags and carry codes from the
//! model's outputs, and what each contact applies added to the sums of
//! its ends, in slot order.

use super::ChunkPass;
use crate::contact::{self, BATCH, BOND_NEAREST, CARRIED, CARRY_STIFFNESS, HELD, RELEASED};
use crate::narrow::*;
use crate::sums::Sums;
use talus_sdk::{flags, report, STATUS_ACTIVE};

/// The columns of a chunk that its sums read and update.
pub(super) struct Rows<'a> {
    pub(super) plane: &'a [contact::Plane],
    pub(super) setup: &'a mut [contact::Setup],
    pub(super) output: &'a [talus_sdk::ContactOutput],
    pub(super) carry: &'a mut [u8],
    pub(super) end1: &'a [crate::piece::Piece],
    pub(super) end2: &'a [crate::piece::Piece],
}

/// The chunk's flags and carry codes updated from its model outputs, and
/// what each contact applies added to `sums`, in slot order; with `BOOK`,
/// also the holds and breaks the outputs report (breaks appended to
/// `broke`, `unheld` set if a contact stopped being held, `holding` if
/// one is held; without `BOOK`, which the caller chooses only where no
/// contact was held or reported, neither is set).
#[inline(always)]
pub(super) fn sum_chunk<K: PairKernel, const BOOK: bool>(
    pass: &ChunkPass<'_>,
    scene: &Scene<'_>,
    ch: Rows<'_>,
    (idle, lone, skip_idle): (&[u64; BATCH / 64], &[u64], bool),
    sums: &mut Sums<'_>,
    broke: &mut Vec<u32>,
    (unheld, holding): (&mut bool, &mut bool),
) {
    let (end1, end2) = (ch.end1, ch.end2);
    // Iterators rather than indices: the compiler cannot tell that the
    // columns have one length and would check every index.
    let words = ch.plane.chunks(64).zip(ch.setup.chunks_mut(64));
    let words = words.zip(ch.output.chunks(64)).zip(ch.carry.chunks_mut(64));
    let words = words.zip(end1.chunks(64).zip(end2.chunks(64)));
    for (w, ((((plane, setup), output), carry), (end1, end2))) in words.enumerate() {
        let (idle, lone) = (idle[w], lone[w]);
        if skip_idle && idle == u64::MAX >> (64 - plane.len()) {
            continue;
        }
        let rows = plane.iter().zip(setup.iter_mut());
        let rows = rows.zip(output.iter()).zip(carry.iter_mut());
        let ends = end1.iter().zip(end2);
        // The word's breaks and whether a contact stopped asking to be
        // held gather in registers: a push in the loop (a call, however
        // rare) cost the pass its operands, reloaded after every contact
        // (dense 10k: 4 % more instructions in the pass).
        let (mut broke_bits, mut unheld_any, mut held_any) = (0u64, false, false);
        for (j, ((((plane, setup), out), carry), (&a, &b))) in rows.zip(ends).enumerate() {
            let bit = 1u64 << j;
            if idle & bit == 0 {
                let status = out.status;
                let released = pass.overlap_only && plane.gap > 0.0 && status != STATUS_ACTIVE;
                let f = &mut setup.flags;
                let carried = if lone & bit != 0 { CARRIED } else { 0 };
                let held = if BOOK {
                    let r = out.reserved;
                    broke_bits |= u64::from(r & report::BROKE != 0) << j;
                    u32::from(r & report::HOLD != 0) * HELD
                } else {
                    0
                };
                unheld_any |= BOOK && *f & HELD > held;
                held_any |= held != 0;
                *f = (*f & !(flags::NEW | RELEASED | HELD | BOND_NEAREST))
                    | if released { RELEASED } else { 0 }
                    | carried
                    | held;
                // The carry codes are the status codes; anything else a
                // model might return counts as could-be-active, as in
                // `apply`.
                *carry = if status > STATUS_ACTIVE {
                    CARRY_STIFFNESS
                } else {
                    status as u8
                };
            }
            if *carry < pass.skip_below {
                continue;
            }
            let ap = apply::<K>(scene, plane, out, a, b);
            sums.check += ap.force + ap.torque1 + ap.torque2;
            K::add_end1(sums, a, &ap);
            K::add_end2(sums, scene, b, &ap, *carry);
        }
        *unheld |= unheld_any;
        *holding |= held_any;
        while broke_bits != 0 {
            broke.push((w * 64 + broke_bits.trailing_zeros() as usize) as u32);
            broke_bits &= broke_bits - 1;
        }
    }
}
