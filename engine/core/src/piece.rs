//! Pieces and pair kinds: what the two ends of a contact are.
//!
//! A body is made of pieces: a ball is one piece (itself), a wall one piece
//! per facet; a clump will have its pebbles and a rigid block itself. A
//! contact joins two pieces, and the kinds of its ends make its pair kind,
//! which decides the narrow-phase kernel that resolves it.
//!
//! Invariants: a [`Piece`] is a ball index or a global facet index tagged
//! as such, in 32 bits (ball indices and global facet indices stay below
//! 2^31); end1 of a contact is always a ball, and its pair kind never
//! changes while it exists. The order of pieces (balls by index, then
//! facets by global index) is the order candidate pairs are sorted in, so
//! that contact ids do not depend on the thread count.

/// The tag bit of a facet piece (the global facet index is in the low
/// bits); without it the piece is a ball.
const FACET: u32 = 1 << 31;

/// One piece: a ball (its dense index) or a wall facet (its global facet
/// index, see [`crate::Simulation::facet_owner`]).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Piece(u32);

/// The kinds of piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    /// A ball.
    Ball,
    /// A facet of a wall.
    Facet,
}

impl Piece {
    /// Ball `index`.
    #[inline]
    pub const fn ball(index: u32) -> Piece {
        debug_assert!(index & FACET == 0);
        Piece(index)
    }

    /// Facet `global` (its index among all walls' facets).
    #[inline]
    pub const fn facet(global: u32) -> Piece {
        debug_assert!(global & FACET == 0);
        Piece(FACET | global)
    }

    /// The piece's kind.
    #[inline]
    pub const fn kind(self) -> PieceKind {
        if self.is_facet() {
            PieceKind::Facet
        } else {
            PieceKind::Ball
        }
    }

    /// Whether the piece is a wall facet.
    #[inline]
    pub const fn is_facet(self) -> bool {
        self.0 & FACET != 0
    }

    /// Whether the piece is a ball.
    #[inline]
    pub const fn is_ball(self) -> bool {
        !self.is_facet()
    }

    /// The ball index or the global facet index, by kind.
    #[inline]
    pub const fn index(self) -> usize {
        (self.0 & !FACET) as usize
    }

    /// The piece as one number, unique among all pieces (for keys).
    #[inline]
    pub const fn bits(self) -> u32 {
        self.0
    }
}

/// The kinds of the two ends of a contact, which choose its narrow-phase
/// kernel and its lane (see [`crate::lane`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PairKind {
    /// Two balls.
    BallBall,
    /// A ball (end1) and a wall facet (end2).
    BallFacet,
}

impl PairKind {
    /// Every pair kind, in lane order (the order of the discriminants).
    pub const ALL: [PairKind; 2] = [PairKind::BallBall, PairKind::BallFacet];

    /// The position of the pair kind in [`PairKind::ALL`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The pair kind of a contact between `end1` and `end2`.
    #[inline]
    pub const fn of(end1: Piece, end2: Piece) -> PairKind {
        debug_assert!(end1.is_ball());
        if end2.is_facet() {
            PairKind::BallFacet
        } else {
            PairKind::BallBall
        }
    }

    /// The name used in output and messages.
    pub const fn name(self) -> &'static str {
        match self {
            PairKind::BallBall => "ball-ball",
            PairKind::BallFacet => "ball-facet",
        }
    }
}

/// The key of an unordered pair of pieces, for sets of pairs in contact.
#[inline]
pub(crate) fn pair_key(a: Piece, b: Piece) -> u64 {
    ((a.bits() as u64) << 32) | b.bits() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balls_come_before_facets_and_keep_their_order() {
        let mut pieces = vec![
            Piece::facet(0),
            Piece::ball(7),
            Piece::facet(3),
            Piece::ball(0),
        ];
        pieces.sort();
        assert_eq!(
            pieces,
            [
                Piece::ball(0),
                Piece::ball(7),
                Piece::facet(0),
                Piece::facet(3)
            ]
        );
        assert_eq!(Piece::facet(3).index(), 3);
        assert_eq!(Piece::ball(7).index(), 7);
        assert_eq!(Piece::facet(3).kind(), PieceKind::Facet);
        assert_ne!(
            pair_key(Piece::ball(1), Piece::facet(1)),
            pair_key(Piece::ball(1), Piece::ball(1))
        );
    }

    #[test]
    fn every_pair_kind_sits_at_its_index() {
        for (i, p) in PairKind::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
        }
    }

    #[test]
    fn the_pair_kind_follows_end2() {
        assert_eq!(
            PairKind::of(Piece::ball(1), Piece::ball(2)),
            PairKind::BallBall
        );
        assert_eq!(
            PairKind::of(Piece::ball(1), Piece::facet(2)),
            PairKind::BallFacet
        );
    }
}
