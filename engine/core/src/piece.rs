//! Pieces and pair kinds: what the two ends of a contact are.
//!
//! A body is made of pieces: a ball is one piece (itself), a wall one piece
//! per facet; a clump will have its pebbles and a rigid block itself. A
//! contact joins two pieces, and the kinds of its ends make its pair kind,
//! which decides the narrow-phase kernel that resolves it.
//!
//! Invariants: a [`Piece`] is a ball index, a block index (of a block or
//! of a convex body, both rows of the block archetype) or a global facet
//! index with its kind in the two high bits (ball 00, block 01, convex
//! 10, facet 11), in 32 bits (indices stay below 2^30); end1 of a contact
//! is the lower piece of the pair, so a ball before a block before a
//! convex body before a facet, and its pair kind never changes while it
//! exists. The order of pieces (balls by index, then blocks, convex
//! bodies, then facets by global index) is the order candidate pairs are
//! sorted in, so that contact ids do not depend on the thread count.

/// The tag of a block piece.
const BLOCK: u32 = 1 << 30;

/// The tag of a convex body's piece.
const CONVEX: u32 = 2 << 30;

/// The tag of a facet piece (the global facet index is in the low bits).
const FACET: u32 = 3 << 30;

/// The tag bits.
const TAGS: u32 = 3 << 30;

/// One piece: a ball (its dense index), a block (its dense index) or a
/// wall facet (its global facet index, see
/// `Simulation::facet_owner`).
#[repr(transparent)]
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Piece(u32);

/// The kinds of piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    /// A ball.
    Ball,
    /// A convex polyhedral rigid block.
    Block,
    /// A convex body of a shape that a plugin adds (a row of the block
    /// archetype, see [`crate::convex`]).
    Convex,
    /// A facet of a wall.
    Facet,
}

impl Piece {
    /// Ball `index`.
    #[inline]
    pub const fn ball(index: u32) -> Piece {
        debug_assert!(index & TAGS == 0);
        Piece(index)
    }

    /// Block `index`.
    #[inline]
    pub const fn block(index: u32) -> Piece {
        debug_assert!(index & TAGS == 0);
        Piece(BLOCK | index)
    }

    /// The convex body of block row `index`.
    #[inline]
    pub const fn convex(index: u32) -> Piece {
        debug_assert!(index & TAGS == 0);
        Piece(CONVEX | index)
    }

    /// Facet `global` (its index among all walls' facets).
    #[inline]
    pub const fn facet(global: u32) -> Piece {
        debug_assert!(global & TAGS == 0);
        Piece(FACET | global)
    }

    /// The piece's kind.
    #[inline]
    pub const fn kind(self) -> PieceKind {
        match self.0 & TAGS {
            0 => PieceKind::Ball,
            BLOCK => PieceKind::Block,
            CONVEX => PieceKind::Convex,
            _ => PieceKind::Facet,
        }
    }

    /// Whether the piece is a block.
    #[inline]
    pub const fn is_block(self) -> bool {
        self.0 & TAGS == BLOCK
    }

    /// Whether the piece is a convex body.
    #[inline]
    pub const fn is_convex(self) -> bool {
        self.0 & TAGS == CONVEX
    }

    /// Whether the piece is a row of the block archetype (a block or a
    /// convex body).
    #[inline]
    pub const fn is_rigid(self) -> bool {
        let tag = self.0 & TAGS;
        tag == BLOCK || tag == CONVEX
    }

    /// Whether the piece is a wall facet.
    #[inline]
    pub const fn is_facet(self) -> bool {
        self.0 & TAGS == FACET
    }

    /// Whether the piece is a ball.
    #[inline]
    pub const fn is_ball(self) -> bool {
        self.0 & TAGS == 0
    }

    /// The ball, block (row) or global facet index, by kind.
    #[inline]
    pub const fn index(self) -> usize {
        (self.0 & !TAGS) as usize
    }

    /// The piece as one number, unique among all pieces (for keys).
    #[inline]
    pub const fn bits(self) -> u32 {
        self.0
    }
}

/// The kinds of the two ends of a contact, which choose its narrow-phase
/// kernel and its lane (see [`crate::lane`]).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum PairKind {
    /// Two balls.
    BallBall,
    /// A ball (end1) and a wall facet (end2).
    BallFacet,
    /// A ball (end1) and a block (end2).
    BallBlock,
    /// Two blocks.
    BlockBlock,
    /// A block (end1) and a wall facet (end2).
    BlockFacet,
    /// A ball (end1) and a convex body (end2).
    BallConvex,
    /// A block (end1) and a convex body (end2).
    BlockConvex,
    /// Two convex bodies.
    ConvexConvex,
    /// A convex body (end1) and a wall facet (end2).
    ConvexFacet,
}

impl PairKind {
    /// Every pair kind, in lane order (the order of the discriminants).
    pub const ALL: [PairKind; 9] = [
        PairKind::BallBall,
        PairKind::BallFacet,
        PairKind::BallBlock,
        PairKind::BlockBlock,
        PairKind::BlockFacet,
        PairKind::BallConvex,
        PairKind::BlockConvex,
        PairKind::ConvexConvex,
        PairKind::ConvexFacet,
    ];

    /// The position of the pair kind in [`PairKind::ALL`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether one end is a rigid body (a block or a convex body): such
    /// contacts cost tens to hundreds of times a ball pair's, and vary
    /// from pair to pair. Their lanes follow the others in
    /// [`PairKind::ALL`].
    #[inline]
    pub const fn is_rigid(self) -> bool {
        !matches!(self, PairKind::BallBall | PairKind::BallFacet)
    }

    /// The pair kind of a contact between `end1` and `end2`, the lower
    /// piece first; `None` for pieces that do not make contacts (two
    /// facets: walls do not meet walls).
    #[inline]
    pub const fn of(end1: Piece, end2: Piece) -> Option<PairKind> {
        match (end1.kind(), end2.kind()) {
            (PieceKind::Ball, PieceKind::Ball) => Some(PairKind::BallBall),
            (PieceKind::Ball, PieceKind::Facet) => Some(PairKind::BallFacet),
            (PieceKind::Ball, PieceKind::Block) => Some(PairKind::BallBlock),
            (PieceKind::Block, PieceKind::Block) => Some(PairKind::BlockBlock),
            (PieceKind::Block, PieceKind::Facet) => Some(PairKind::BlockFacet),
            (PieceKind::Ball, PieceKind::Convex) => Some(PairKind::BallConvex),
            (PieceKind::Block, PieceKind::Convex) => Some(PairKind::BlockConvex),
            (PieceKind::Convex, PieceKind::Convex) => Some(PairKind::ConvexConvex),
            (PieceKind::Convex, PieceKind::Facet) => Some(PairKind::ConvexFacet),
            _ => None,
        }
    }

    /// The name used in output and messages.
    pub const fn name(self) -> &'static str {
        match self {
            PairKind::BallBall => "ball-ball",
            PairKind::BallFacet => "ball-facet",
            PairKind::BallBlock => "ball-block",
            PairKind::BlockBlock => "block-block",
            PairKind::BlockFacet => "block-facet",
            PairKind::BallConvex => "ball-convex",
            PairKind::BlockConvex => "block-convex",
            PairKind::ConvexConvex => "convex-convex",
            PairKind::ConvexFacet => "convex-facet",
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
    fn blocks_sit_between_balls_and_facets() {
        let mut pieces = vec![
            Piece::facet(0),
            Piece::block(9),
            Piece::ball(3),
            Piece::block(2),
        ];
        pieces.sort();
        assert_eq!(
            pieces,
            [
                Piece::ball(3),
                Piece::block(2),
                Piece::block(9),
                Piece::facet(0)
            ]
        );
        let b = Piece::block(5);
        assert!(b.is_block() && !b.is_ball() && !b.is_facet());
        assert_eq!((b.index(), b.kind()), (5, PieceKind::Block));
        assert!(Piece::ball(1) < Piece::block(0));
        assert_eq!(
            PairKind::of(Piece::ball(1), Piece::block(0)),
            Some(PairKind::BallBlock)
        );
        assert_eq!(PairKind::of(Piece::facet(0), Piece::facet(1)), None);
    }

    #[test]
    fn convex_bodies_sit_between_blocks_and_facets() {
        let mut pieces = vec![
            Piece::facet(0),
            Piece::convex(1),
            Piece::block(9),
            Piece::ball(3),
            Piece::convex(0),
        ];
        pieces.sort();
        assert_eq!(
            pieces,
            [
                Piece::ball(3),
                Piece::block(9),
                Piece::convex(0),
                Piece::convex(1),
                Piece::facet(0)
            ]
        );
        let c = Piece::convex(5);
        assert!(c.is_convex() && c.is_rigid() && !c.is_block() && !c.is_facet());
        assert_eq!((c.index(), c.kind()), (5, PieceKind::Convex));
        assert!(Piece::block(2).is_rigid() && !Piece::facet(2).is_rigid());
        assert_eq!(Piece::facet(7).kind(), PieceKind::Facet);
        let pair = |a, b| PairKind::of(a, b);
        assert_eq!(pair(Piece::ball(0), c), Some(PairKind::BallConvex));
        assert_eq!(pair(Piece::block(0), c), Some(PairKind::BlockConvex));
        assert_eq!(pair(c, c), Some(PairKind::ConvexConvex));
        assert_eq!(pair(c, Piece::facet(0)), Some(PairKind::ConvexFacet));
    }

    #[test]
    fn the_pair_kind_follows_end2() {
        assert_eq!(
            PairKind::of(Piece::ball(1), Piece::ball(2)),
            Some(PairKind::BallBall)
        );
        assert_eq!(
            PairKind::of(Piece::ball(1), Piece::facet(2)),
            Some(PairKind::BallFacet)
        );
    }
}
