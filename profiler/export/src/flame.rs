//! A flame graph drawn straight from the distinct stacks, in time and memory linear in
//! their number, for profiles whose folded text would be too large to hand to inferno
//! (a 20,000-deep recursion allocating at every level spells out ~200 million frame
//! names). Frames narrower than a tenth of a pixel are left out with their descendants,
//! as inferno does; each frame's tooltip gives its name, value and share.

use std::fmt::Write as _;

use crate::stacks::Stacks;

const WIDTH: f64 = 1200.0;
const FRAME_HEIGHT: usize = 16;
const TOP: usize = 40;
const MIN_WIDTH: f64 = 0.1;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A warm colour that depends only on the name, so a function keeps its colour.
fn colour(name: &str) -> String {
    let h = name.bytes().fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    format!("rgb({},{},{})", 205 + (h % 50), 80 + ((h >> 8) % 130), (h >> 16) % 55)
}

/// The SVG of `stacks`; `unit` names what the values count.
pub fn svg(stacks: &Stacks, title: &str, unit: &str) -> String {
    let incl = stacks.inclusive();
    let total = incl[0].max(1) as f64;
    // (stack, x, depth) of every frame drawn, depth first.
    let mut frames: Vec<(u32, f64, usize)> = Vec::new();
    let mut work: Vec<(u32, f64, usize)> = vec![(0, 0.0, 0)];
    let mut max_depth = 0;
    while let Some((id, x, depth)) = work.pop() {
        let w = incl[id as usize] as f64 / total * WIDTH;
        if w < MIN_WIDTH {
            continue;
        }
        frames.push((id, x, depth));
        max_depth = max_depth.max(depth);
        let mut cx = x;
        for &c in &stacks.children[id as usize] {
            work.push((c, cx, depth + 1));
            cx += incl[c as usize] as f64 / total * WIDTH;
        }
    }
    let height = TOP + (max_depth + 1) * FRAME_HEIGHT + 20;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<?xml version="1.0" standalone="no"?><svg version="1.1" width="{w}" height="{height}" viewBox="0 0 {w} {height}" xmlns="http://www.w3.org/2000/svg"><rect width="100%" height="100%" fill="#f8f8f8"/><text x="{cx}" y="24" text-anchor="middle" font-family="Verdana" font-size="17">{t}</text><text x="10" y="{by}" font-family="Verdana" font-size="12">{n} frames, {total} {unit} in all (drawn without inferno: the folded text of this profile is too large)</text>"##,
        w = WIDTH as u32 + 20,
        cx = WIDTH / 2.0 + 10.0,
        t = escape(title),
        by = height - 6,
        n = frames.len(),
        total = incl[0],
        unit = escape(unit),
    );
    for (id, x, depth) in frames {
        let name = if id == 0 { "all" } else { stacks.names[stacks.name[id as usize] as usize].as_str() };
        let v = incl[id as usize];
        let w = v as f64 / total * WIDTH;
        let y = height - 20 - (depth + 1) * FRAME_HEIGHT;
        let _ = write!(
            out,
            r#"<g><title>{name} ({v} {unit}, {pct:.2}%)</title><rect x="{x:.1}" y="{y}" width="{w:.1}" height="{h}" fill="{fill}" rx="2"/>"#,
            name = escape(name),
            unit = escape(unit),
            pct = v as f64 * 100.0 / total,
            x = x + 10.0,
            h = FRAME_HEIGHT - 1,
            fill = colour(name),
        );
        let chars = (w / 7.0) as usize;
        if chars >= 3 {
            let label: String = if name.chars().count() > chars {
                name.chars().take(chars - 2).chain("..".chars()).collect()
            } else {
                name.to_string()
            };
            let _ = write!(
                out,
                r#"<text x="{tx:.1}" y="{ty}" font-family="Verdana" font-size="12">{l}</text>"#,
                tx = x + 13.0,
                ty = y + FRAME_HEIGHT - 4,
                l = escape(&label)
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>\n");
    out
}
