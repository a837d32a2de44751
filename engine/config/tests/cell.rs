//! `[cell]`: what valid tables give, then one test per error it can raise
//! (kind, `file:line:col` and the key words of the message).

mod common;

use common::*;
use talus_config::ErrorKind;
use talus_core::math::{Mat3, Vec3};

fn cell(keys: &str) -> String {
    format!("{RUN}[cell]\n{keys}")
}

#[test]
fn a_box_cell_is_periodic_everywhere_and_still_by_default() {
    let cfg = parse(&cell("min = [0, 0, 0]\nmax = [1, 2, 3]\n")).unwrap();
    let c = cfg.cell.unwrap().cell;
    assert_eq!(c.origin, Vec3::ZERO);
    assert_eq!(c.h(), Mat3::from_diagonal(Vec3::new(1.0, 2.0, 3.0)));
    assert_eq!(c.periodic, [true; 3]);
    assert_eq!(c.velocity_gradient, Mat3::ZERO);
}

#[test]
fn edges_are_the_cell_columns_and_the_gradient_rows_are_dv_i_dx_j() {
    let text = cell(
        "origin = [1, 0, 0]\nedges = [[2, 0, 0], [0.5, 1, 0], [0, 0, 1]]\n\
         periodic = [true, false, true]\nvelocity_gradient = [[0, 0.1, 0], [0, 0, 0], [0, 0, -0.2]]\n",
    );
    let c = parse(&text).unwrap().cell.unwrap().cell;
    assert_eq!(c.origin, Vec3::X);
    assert_eq!(c.h().col(1), Vec3::new(0.5, 1.0, 0.0));
    assert_eq!(c.periodic, [true, false, true]);
    // v_x = 0.1 y: the gradient maps y to x.
    assert_eq!(c.velocity_gradient * Vec3::Y, Vec3::new(0.1, 0.0, 0.0));
    assert_eq!(c.velocity_gradient * Vec3::Z, Vec3::new(0.0, 0.0, -0.2));
}

#[test]
fn max_must_exceed_min() {
    let text = cell("min = [0, 0, 0]\nmax = [1, 0, 1]\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_at(&e, &text, "[1, 0, 1]", &["'max' in [cell]", "exceed 'min'"]);
}

#[test]
fn one_form_of_the_cell_only() {
    let text =
        cell("min = [0, 0, 0]\nmax = [1, 1, 1]\nedges = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[0, 0, 0]",
        &[
            "[cell] needs either 'min' and 'max'",
            "'origin' and 'edges'",
        ],
    );
    let text = cell("max = [1, 1, 1]\n");
    assert_at(
        &parse_err(&text),
        &text,
        "[1, 1, 1]",
        &["[cell] needs either"],
    );
}

#[test]
fn edges_are_three_and_right_handed() {
    let text = cell("origin = [0, 0, 0]\nedges = [[1, 0, 0], [0, 1, 0]]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[[1, 0, 0]",
        &["'edges' in [cell]", "got 2 rows"],
    );
    let text = cell("origin = [0, 0, 0]\nedges = [[1, 0, 0], [0, 0, 1], [0, 1, 0]]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[[1, 0, 0]",
        &["'edges' in [cell]", "positive volume"],
    );
}

#[test]
fn the_gradient_is_three_rows() {
    let text = cell("min = [0, 0, 0]\nmax = [1, 1, 1]\nvelocity_gradient = [[0, 1, 0]]\n");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[[0, 1, 0]]",
        &["'velocity_gradient' in [cell]", "three rows"],
    );
    let text = cell(
        "min = [0, 0, 0]\nmax = [1, 1, 1]\nvelocity_gradient = [[0, 1], [0, 0, 0], [0, 0, 0]]\n",
    );
    let e = parse_err(&text);
    assert_eq!(
        e.location().unwrap().line,
        pos_of(&text, "velocity_gradient").0
    );
}

#[test]
fn unknown_keys_and_flags() {
    let text = cell("min = [0, 0, 0]\nmax = [1, 1, 1]\nperiodics = [true, true, true]\n");
    let e = parse_err(&text);
    assert_eq!(e.kind(), ErrorKind::UnknownKey);
    assert_at(
        &e,
        &text,
        "periodics",
        &["unknown key 'periodics'", "velocity_gradient"],
    );
    let text = cell("min = [0, 0, 0]\nmax = [1, 1, 1]\nperiodic = [true, 1, true]\n");
    let e = parse_err(&text);
    assert_eq!(e.location().unwrap().line, pos_of(&text, "periodic").0);
}

#[test]
fn a_periodic_cell_holds_blocks_and_clumps() {
    // Blocks and clumps wrap round the cell as balls do; whether the cell
    // is wide enough for them is checked when the run starts.
    let text = format!(
        "{}[[shapes]]\nname = \"brick\"\nkind = \"box\"\nsize = [0.1, 0.1, 0.1]\n\
         [[shapes]]\nname = \"peanut\"\nkind = \"clump\"\n\
         pebbles = [{{ pos = [-0.03, 0, 0], radius = 0.04 }}, {{ pos = [0.03, 0, 0], radius = 0.04 }}]\n\
         [[blocks]]\nkind = \"random\"\nshape = \"brick\"\ncount = 2\ndensity = 2600.0\n\
         region = {{ min = [0.2, 0.2, 0.2], max = [0.8, 0.8, 0.8] }}\n\
         [[clumps]]\nkind = \"list\"\nshape = \"peanut\"\ndensity = 2600.0\n\
         clumps = [{{ pos = [0.95, 0.5, 0.02] }}]\n",
        cell("min = [0, 0, 0]\nmax = [1, 1, 1]\nvelocity_gradient = [[0, 0.1, 0], [0, 0, 0], [0, 0, 0]]\n")
    );
    let cfg = parse(&text).unwrap();
    let c = &cfg.cell.as_ref().unwrap().cell;
    assert_eq!(c.periodic, [true; 3]);
    assert_eq!(cfg.blocks.len(), 1);
    assert_eq!(cfg.clumps.len(), 1);
    assert_eq!(cfg.templates.len(), 1);
}

#[test]
fn a_servo_holds_pressing_stresses_on_periodic_axes() {
    let text = cell(
        "min = [0, 0, 0]\nmax = [1, 1, 1]\n[cell.servo]\ncontrol = [false, false, true]\n\
         stress = [0, 0, 1e5]\ngain = 1e-6\nmax_rate = 2\n",
    );
    let servo = parse(&text).unwrap().cell.unwrap().cell.servo.unwrap();
    // Pressing 100 kPa is a tension-positive target of -100 kPa.
    assert_eq!(servo.target, [None, None, Some(-1e5)]);
    assert_eq!((servo.gain, servo.max_rate), (1e-6, 2.0));

    let flat = text.replace(
        "max = [1, 1, 1]\n",
        "max = [1, 1, 1]\nperiodic = [true, true, false]\n",
    );
    let e = parse_err(&flat);
    assert_at(
        &e,
        &flat,
        "[false, false, true]",
        &["'control' in [cell.servo]", "not periodic"],
    );
    let bad = text.replace("gain = 1e-6", "gain = 0");
    let e = parse_err(&bad);
    assert_at(&e, &bad, "0\nmax_rate", &["'gain' in [cell.servo]", "> 0"]);
    let none = text.replace("[false, false, true]", "[false, false, false]");
    assert_at(
        &parse_err(&none),
        &none,
        "[false, false, false]",
        &["at least one axis"],
    );
}

const STAGED: &str = "min = [0, 0, 0]\nmax = [1, 1, 1]\n\
    [cell.servo]\ncontrol = [true, true, true]\nstress = [1e5, 1e5, 1e5]\ngain = 1e-6\nmax_rate = 2\n\
    [[cell.stages]]\nat_time = 0.5\nvelocity_gradient = [[0, 3, 0], [0, 0, 0], [0, 0, 0]]\n\
    servo = { control = [false, true, false], stress = [0, 2e5, 0] }\n\
    [[cell.stages]]\nat_time = 0.75\nvelocity_gradient = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]\n";

#[test]
fn stages_follow_in_order_and_a_servo_keeps_the_gain_before_it() {
    let text = cell(STAGED);
    let c = parse(&text).unwrap().cell.unwrap().cell;
    let (stages, begun) = c.stages();
    assert_eq!((stages.len(), begun), (2, 0));
    assert_eq!(stages[0].at, talus_core::When::Time(0.5));
    // v_x = 3 y.
    assert_eq!(
        stages[0].velocity_gradient * Vec3::Y,
        Vec3::new(3.0, 0.0, 0.0)
    );
    let servo = stages[0].servo.unwrap();
    assert_eq!(servo.target, [None, Some(-2e5), None]);
    assert_eq!((servo.gain, servo.max_rate), (1e-6, 2.0));
    // A stage without a servo stops it.
    assert_eq!(stages[1].servo, None);
    assert_eq!(stages[1].velocity_gradient, Mat3::ZERO);
}

#[test]
fn a_stage_says_when_it_begins_once_and_after_the_one_before() {
    let text = cell(STAGED).replace("at_time = 0.5\n", "");
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[[cell.stages]]\nvelocity",
        &["[[cell.stages]] #1", "'at_step' or 'at_time'"],
    );
    let text = cell(STAGED).replace("at_time = 0.5\n", "at_time = 0.5\nat_step = 3\n");
    assert_at(
        &parse_err(&text),
        &text,
        "0.5\nat_step",
        &["#1 takes 'at_step' or 'at_time', not both"],
    );
    let text = cell(STAGED).replace("at_time = 0.75", "at_time = 0.5");
    assert_at(
        &parse_err(&text),
        &text,
        "0.5\nvelocity_gradient = [[0, 0, 0]",
        &[
            "'at_time' in [[cell.stages]] #2",
            "after the stage before it",
        ],
    );
    let text = cell(STAGED).replace("at_time = 0.5", "at_step = 0");
    assert_at(
        &parse_err(&text),
        &text,
        "0\nvelocity",
        &["'at_step' in [[cell.stages]] #1"],
    );
}

#[test]
fn a_stage_moves_the_cell_and_a_first_servo_gives_its_gain() {
    let text = cell(STAGED).replace(
        "at_time = 0.75\nvelocity_gradient = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]\n",
        "at_time = 0.75\n",
    );
    let e = parse_err(&text);
    assert_at(
        &e,
        &text,
        "[[cell.stages]]\nat_time = 0.75",
        &["#2 gives neither 'velocity_gradient' nor 'servo'"],
    );
    // Without [cell.servo] the stage's servo has no gain to keep.
    let start = STAGED.find("[cell.servo]").unwrap();
    let end = STAGED.find("[[cell.stages]]").unwrap();
    let text = cell(&(STAGED[..start].to_string() + &STAGED[end..]));
    assert_at(
        &parse_err(&text),
        &text,
        "{ control",
        &["'servo' in [[cell.stages]] #1 needs 'gain'"],
    );
}
