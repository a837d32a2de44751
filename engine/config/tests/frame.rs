//! `frame` and `no_ratchet` of `[[models]]`: how the contacts of a model
//! pairing carry their frame. What valid tables give, then one test per
//! error (kind, `file:line:col` and the key words of the message).

mod common;

use std::path::Path;

use common::*;
use talus_config::ErrorKind;
use talus_core::ContactFrame;

/// A config with a catch-all pairing and one for group "rock" with
/// `keys`.
fn models(keys: &str) -> String {
    format!(
        "{RUN}[[models]]\nmodel = \"linear\"\ngroups = [\"*\", \"*\"]\n\
         [[models]]\nmodel = \"linear\"\ngroups = [\"rock\", \"rock\"]\n{keys}"
    )
}

/// The frame of the pairing of groups `g`.
fn frame_of(text: &str, g: &str) -> ContactFrame {
    let cfg = parse(text).unwrap();
    cfg.models.iter().find(|m| m.groups[0] == g).unwrap().frame
}

#[test]
fn pairings_take_the_two_rotations_unless_they_choose_the_six_dof_frame() {
    let text = models("");
    assert_eq!(frame_of(&text, "*"), ContactFrame::Rotations);
    assert_eq!(frame_of(&text, "rock"), ContactFrame::Rotations);
    let text = models("frame = \"rotations\"\n");
    assert_eq!(frame_of(&text, "rock"), ContactFrame::Rotations);
    // Branch vectors to the contact location unless asked otherwise.
    let text = models("frame = \"six_dof\"\n");
    assert_eq!(frame_of(&text, "*"), ContactFrame::Rotations);
    assert_eq!(
        frame_of(&text, "rock"),
        ContactFrame::SixDof { no_ratchet: false }
    );
    let text = models("frame = \"six_dof\"\nno_ratchet = true\n");
    assert_eq!(
        frame_of(&text, "rock"),
        ContactFrame::SixDof { no_ratchet: true }
    );
    let text = models("frame = \"six_dof\"\nno_ratchet = false\n");
    assert_eq!(
        frame_of(&text, "rock"),
        ContactFrame::SixDof { no_ratchet: false }
    );
}

/// Asserts that the pairing of "rock" with `keys` is refused with `kind`,
/// at `needle` (its first occurrence in the text), with `words`.
fn refused(keys: &str, kind: ErrorKind, needle: &str, words: &[&str]) {
    let text = models(keys);
    let e = parse_err(&text);
    assert_eq!(e.kind(), kind, "{e}");
    assert_error(&e, Path::new(ORIGIN), pos_of(&text, needle), words);
}

#[test]
fn an_unknown_frame_is_refused_with_the_choices() {
    let words = ["woo", "rotations", "six_dof"];
    refused("frame = \"woo\"\n", ErrorKind::WrongType, "\"woo\"", &words);
}

#[test]
fn no_ratchet_needs_the_six_dof_frame() {
    let words = ["'no_ratchet'", "[[models]]", "frame = \"six_dof\""];
    for frame in ["", "frame = \"rotations\"\n"] {
        let keys = format!("{frame}no_ratchet = true\n");
        refused(&keys, ErrorKind::InvalidValue, "true", &words);
    }
}

#[test]
fn no_ratchet_is_a_boolean() {
    let keys = "frame = \"six_dof\"\nno_ratchet = 1\n";
    refused(keys, ErrorKind::WrongType, "1\n", &["bool"]);
}

#[test]
fn a_misspelt_key_lists_the_frame_keys() {
    let words = ["frames", "frame", "no_ratchet"];
    refused(
        "frames = \"six_dof\"\n",
        ErrorKind::UnknownKey,
        "frames",
        &words,
    );
}
