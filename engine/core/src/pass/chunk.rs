//! Chunks of a lane's store: the same slots of every column, the unit of
//! work of the contact pass.

use crate::contact::{self, ContactStore, BATCH};
use crate::piece::Piece;
use talus_sdk::ContactOutput;

/// Words of a lane's `lone` bits per chunk.
pub(crate) const LONE_WORDS: usize = BATCH / 64;

/// One chunk of a [`ContactStore`]: the same slots of every column, and
/// its bits of the lane's `lone`.
pub(crate) struct Chunk<'a> {
    pub(crate) lone: &'a [u64],
    pub(crate) plane: &'a mut [contact::Plane],
    pub(crate) setup: &'a mut [contact::Setup],
    pub(crate) output: &'a mut [ContactOutput],
    pub(crate) state: &'a mut [f64],
    /// The kernel's cache values ([`PairKernel::CACHE`] per contact).
    pub(crate) cache: &'a mut [f64],
    /// The six-DOF displacements (one per contact in six-DOF lanes, empty
    /// in the others).
    pub(crate) dof: &'a mut [contact::Displacements],
    pub(crate) carry: &'a mut [u8],
    pub(crate) end1: &'a [Piece],
    pub(crate) end2: &'a [Piece],
    /// The chunk's count of busy contacts (see `ContactStore::busy`).
    pub(crate) busy: &'a mut u32,
}

impl ContactStore {
    /// The store cut into chunks of [`BATCH`] slots; `lone` has
    /// [`LONE_WORDS`] per chunk.
    pub(crate) fn chunks<'a>(&'a mut self, lone: &'a [u64]) -> Vec<Chunk<'a>> {
        self.chunks_of(BATCH, lone)
    }

    /// The store cut into chunks of `size` slots (at most [`BATCH`]);
    /// `lone` has `size.div_ceil(64)` words per chunk.
    pub(crate) fn chunks_of<'a>(&'a mut self, size: usize, lone: &'a [u64]) -> Vec<Chunk<'a>> {
        debug_assert!(size > 0 && size <= BATCH);
        let stride = self.stride;
        let (end1, end2) = (&self.end1[..], &self.end2[..]);
        let n_chunks = self.id.len().div_ceil(size);
        let caches = contact::cache_chunks(&mut self.cache, self.cache_stride, size, n_chunks);
        let dofs = contact::cache_chunks(&mut self.dof, usize::from(self.six_dof), size, n_chunks);
        self.busy.resize(n_chunks, 0);
        self.plane
            .chunks_mut(size)
            .zip(self.setup.chunks_mut(size))
            .zip(self.output.chunks_mut(size))
            .zip(self.state.chunks_mut(size * stride))
            .zip(self.carry.chunks_mut(size))
            .zip(end1.chunks(size).zip(end2.chunks(size)))
            .zip(lone.chunks(size.div_ceil(64)))
            .zip(caches.into_iter().zip(dofs))
            .zip(self.busy.iter_mut())
            .map(
                |(
                    (
                        ((((((plane, setup), output), state), carry), (end1, end2)), lone),
                        (cache, dof),
                    ),
                    busy,
                )| {
                    Chunk {
                        lone,
                        plane,
                        setup,
                        output,
                        state,
                        cache,
                        dof,
                        carry,
                        end1,
                        end2,
                        busy,
                    }
                },
            )
            .collect()
    }
}
